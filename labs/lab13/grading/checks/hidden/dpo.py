"""Hidden checks of dpo_loss and ipo_loss: against the reference, and stability (sequence_logprob's differential
check is derived from its domain in grading.yaml: autograder/checks/differential.py).

Domain (posttrain.py): P pairs (1..16) of sequence log-probs in [-200, 0], so margins h reach +-400; beta in
{0.1, 0.01, 0.5, 1, 5, 10}; float32 and float64. Gradients w.r.t. both policy arguments compared.
"""

from __future__ import annotations

import torch
from hypothesis import strategies as st

from autograder.checks import Context, check
from autograder.checks.examples import for_all
from autograder.checks.strategies import DTYPES, bounded
from autograder.checks.tools import call

from .common import PREF_NAMES, expect_grad

BETAS = st.sampled_from((0.1, 0.01, 0.5, 1.0, 5.0, 10.0))


@st.composite
def preference_pairs(draw, low: float = -200.0) -> tuple:
    """(four (P,) tensors, beta)."""
    P = draw(st.integers(1, 16))
    dtype = draw(st.sampled_from(DTYPES))
    four = [torch.tensor(draw(st.lists(bounded(low, 0.0), min_size=P, max_size=P)), dtype=dtype) for _ in range(4)]
    return four, draw(BETAS)


def _reference(fn, four: list, beta: float):
    pc, pr = (x.detach().double().requires_grad_(True) for x in four[:2])
    loss = fn(pc, pr, four[2].double(), four[3].double(), beta)
    loss.backward()
    assert pc.grad is not None and pr.grad is not None
    dtype = four[0].dtype
    return loss.detach().to(dtype), pc.grad.to(dtype), pr.grad.to(dtype)


def _compare(ctx: Context, name: str, four: list, beta: float) -> None:
    answer = call(ctx, name, *four, beta=beta, grad=(0, 1), names=PREF_NAMES, shape=())
    loss, g_c, g_r = _reference(getattr(ctx.ref, name), four, beta)
    h = (four[0].double() - four[2].double()) - (four[1].double() - four[3].double())
    answer.expect_close(ctx, answer.value, loss, "the loss differs from the reference",
                        scale=float((beta * h.abs() + 1 / beta).pow(2 if name == "ipo_loss" else 1).sum()))
    expect_grad(ctx, answer, 0, g_c, "policy_chosen", "d loss / d policy_chosen differs from the reference")
    expect_grad(ctx, answer, 1, g_r, "policy_rejected", "d loss / d policy_rejected differs from the reference")


@check("dpo.dpo_matches_reference", "dpo_loss and its gradients match the reference (margins up to +-400 / beta)",
       functions=("dpo_loss",))
def dpo_matches_reference(ctx: Context) -> None:
    for_all(ctx, preference_pairs(), lambda case: _compare(ctx, "dpo_loss", *case), chosen="dpo_loss")


@check("dpo.dpo_stable", "dpo_loss stays finite and exact at huge margins (beta * h = +-400)", functions=("dpo_loss",))
def dpo_stable(ctx: Context) -> None:
    for dtype in (torch.float32, torch.float64):
        zero = torch.zeros(4, dtype=dtype)
        pc = torch.tensor([0.0, -200.0, -100.0, 0.0], dtype=dtype)
        pr = torch.tensor([-200.0, 0.0, 0.0, -100.0], dtype=dtype)
        rc = torch.tensor([-200.0, 0.0, 0.0, -100.0], dtype=dtype)
        _compare(ctx, "dpo_loss", [pc, pr, rc, zero], 1.0)   # beta * h = 400, -200, -100, 200
        _compare(ctx, "dpo_loss", [pc, pr, rc, zero], 10.0)


@check("ipo.matches_reference", "ipo_loss and its gradients match the reference", functions=("ipo_loss",))
def ipo_matches_reference(ctx: Context) -> None:
    for_all(ctx, preference_pairs(), lambda case: _compare(ctx, "ipo_loss", *case), chosen="ipo_loss")
