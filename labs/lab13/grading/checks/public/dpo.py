"""Public checks of sequence_logprob, dpo_loss and ipo_loss: hand-computed examples."""

from __future__ import annotations

import math

import torch

from autograder.checks import Context, check
from autograder.checks.tools import call, public

from .common import PREF_NAMES, SEQ_NAMES, expect_grad


def pairs() -> tuple:
    """Four (P,) tensors with margins h = (pc - rc) - (pr - rr) = [0, 2, -4]."""
    pc = torch.tensor([-5.0, -3.0, -10.0], dtype=torch.float64)
    pr = torch.tensor([-6.0, -8.0, -2.0], dtype=torch.float64)
    rc = torch.tensor([-4.0, -4.0, -9.0], dtype=torch.float64)
    rr = torch.tensor([-5.0, -7.0, -5.0], dtype=torch.float64)
    return pc, pr, rc, rr


@check("dpo.seq_known_values", "sequence_logprob sums the generated tokens' log-probs (ragged mask)",
       functions=("sequence_logprob",))
@public
def seq_known_values(ctx: Context) -> None:
    token_logp = torch.tensor([[-1.0, -2.0, -3.0], [-0.5, -30.0, -20.0]], dtype=torch.float64)
    mask = torch.tensor([[1.0, 1.0, 1.0], [1.0, 0.0, 0.0]], dtype=torch.float64)
    answer = call(ctx, "sequence_logprob", token_logp, mask, names=SEQ_NAMES, shape=(2,))
    answer.expect_close(ctx, answer.value, torch.tensor([-6.0, -0.5], dtype=torch.float64),
                        "each row's log-prob is the sum (not the mean) of its mask == 1 tokens' log-probs")


@check("dpo.dpo_known_values", "dpo_loss and its gradients on three hand-computed pairs", functions=("dpo_loss",))
@public
def dpo_known_values(ctx: Context) -> None:
    # beta = 0.5: beta * h = [0, 1, -2]; -log sigmoid = [log 2, log(1 + e^-1), log(1 + e^2)], mean 1.044446
    # d loss / d policy_chosen = -beta * sigmoid(-beta * h) / P; d / d policy_rejected is its opposite
    z = [0.0, 1.0, -2.0]
    loss = sum(math.log1p(math.exp(-v)) for v in z) / 3
    g = torch.tensor([-0.5 / (1 + math.exp(v)) / 3 for v in z], dtype=torch.float64)
    answer = call(ctx, "dpo_loss", *pairs(), beta=0.5, grad=(0, 1), names=PREF_NAMES, shape=())
    answer.expect_close(ctx, answer.value, torch.tensor(loss, dtype=torch.float64),
                        "the loss differs from the hand-computed mean of -log sigmoid(beta * h)")
    expect_grad(ctx, answer, 0, g, "policy_chosen", "d loss / d policy_chosen differs from the hand-computed one")
    expect_grad(ctx, answer, 1, -g, "policy_rejected", "d loss / d policy_rejected differs from the hand-computed one")


@check("ipo.known_values", "ipo_loss and its gradients on three hand-computed pairs", functions=("ipo_loss",))
@public
def ipo_known_values(ctx: Context) -> None:
    # beta = 0.5: target margin 1 / (2 beta) = 1; (h - 1)^2 = [1, 1, 25], mean 9
    # d loss / d policy_chosen = 2 (h - 1) / P = [-2/3, 2/3, -10/3]; d / d policy_rejected is its opposite
    g = torch.tensor([-2 / 3, 2 / 3, -10 / 3], dtype=torch.float64)
    answer = call(ctx, "ipo_loss", *pairs(), beta=0.5, grad=(0, 1), names=PREF_NAMES, shape=())
    answer.expect_close(ctx, answer.value, torch.tensor(9.0, dtype=torch.float64),
                        "the loss differs from the hand-computed mean of (h - 1 / (2 beta))^2")
    expect_grad(ctx, answer, 0, g, "policy_chosen", "d loss / d policy_chosen differs from the hand-computed one")
    expect_grad(ctx, answer, 1, -g, "policy_rejected", "d loss / d policy_rejected differs from the hand-computed one")
