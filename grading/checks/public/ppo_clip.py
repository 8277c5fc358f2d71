"""Public checks of ppo_policy_loss and ppo_value_loss: hand-computed examples, no reference needed."""

from __future__ import annotations

import math

import torch

from autograder.checks import Context, check
from autograder.checks.tools import Answer, call, public

POLICY_NAMES = ("logp", "old_logp", "advantages", "mask")
VALUE_NAMES = ("values", "old_values", "returns", "mask")


def grad_of(answer: Answer, wrt: str) -> torch.Tensor:
    """The gradient of the loss w.r.t. `wrt` (requested with grad=(0,)); fails when none reached it."""
    grad = answer.grads[0]
    if grad is None:
        raise answer.fail(f"the loss is not differentiable w.r.t. {wrt}: was {wrt} detached "
                          "(.detach(), .item(), .data, torch.no_grad, numpy)?",
                          expected=f"a gradient of the loss w.r.t. {wrt}", got=f"no gradient reached {wrt}")
    return grad


def expect_grad(ctx: Context, answer: Answer, expected: torch.Tensor, wrt: str, message: str) -> None:
    """Fail unless the gradient of the loss w.r.t. `wrt` (requested with grad=(0,)) equals `expected`."""
    answer.expect_close(ctx, grad_of(answer, wrt), expected, message)


@check("ppo_clip.policy_known_values", "ppo_policy_loss and its gradient on a hand-computed example (ragged mask)",
       functions=("ppo_policy_loss",))
@public
def policy_known_values(ctx: Context) -> None:
    # ratio = exp(logp - old_logp); row 0 has 3 generated tokens, row 1 has 2; padding holds garbage.
    ratio = [[1.5, 0.5, 1.1], [0.6, 1.4, 1.0]]
    logp = torch.tensor([[math.log(r) for r in row] for row in ratio])
    logp[1, 2] = 7.0
    old_logp = torch.tensor([[0.0, 0.0, 0.0], [0.0, 0.0, -3.0]])
    advantages = torch.tensor([[2.0, -1.0, 3.0], [1.0, -2.0, 50.0]])
    mask = torch.tensor([[1.0, 1.0, 1.0], [1.0, 1.0, 0.0]])
    # clip_eps = 0.2, per token min(ratio * A, clip(ratio, 0.8, 1.2) * A):
    #   row 0: min(3.0, 2.4) = 2.4 (clipped),  min(-0.5, -0.8) = -0.8 (clipped),  3.3
    #   row 1: min(0.6, 0.8) = 0.6,  min(-2.8, -2.4) = -2.8
    # loss = -(2.4 - 0.8 + 3.3 + 0.6 - 2.8) / 5 tokens = -0.54
    # d loss / d logp = -ratio * A / 5 where the unclipped term is the min, 0 where the clipped one is
    answer = call(ctx, "ppo_policy_loss", logp, old_logp, advantages, mask, clip_eps=0.2, grad=(0,),
                  names=POLICY_NAMES, shape=())
    answer.expect_close(ctx, answer.value, torch.tensor(-0.54), "the loss differs from the hand-computed one")
    expect_grad(ctx, answer, torch.tensor([[0.0, 0.0, -0.66], [-0.12, 0.56, 0.0]]), "logp",
                "d loss / d logp differs from the hand-computed one (0 where the ratio is clipped)")


@check("ppo_clip.value_known_values", "ppo_value_loss and its gradient on a hand-computed example (ragged mask)",
       functions=("ppo_value_loss",))
@public
def value_known_values(ctx: Context) -> None:
    values = torch.tensor([[0.5, 0.5, 1.25], [-1.0, 9.0, 9.0]])
    old_values = torch.tensor([[0.0, 0.0, 1.0], [0.0, -9.0, 9.0]])
    returns = torch.tensor([[1.0, 0.0, 2.0], [-2.0, 9.0, -9.0]])
    mask = torch.tensor([[1.0, 1.0, 1.0], [1.0, 0.0, 0.0]])
    # clip_eps = 0.2: v_clip = old + clip(values - old, -0.2, 0.2) = [[0.2, 0.2, 1.2], [-0.2]]
    #   max((v - R)^2, (v_clip - R)^2): max(0.25, 0.64) = 0.64,  max(0.25, 0.04) = 0.25,
    #   max(0.5625, 0.64) = 0.64,  max(1.0, 3.24) = 3.24
    # loss = 0.5 * (0.64 + 0.25 + 0.64 + 3.24) / 4 tokens = 0.59625
    # d loss / d values = (v - R) / 4 where the unclipped error is the larger one, else 0
    answer = call(ctx, "ppo_value_loss", values, old_values, returns, mask, clip_eps=0.2, grad=(0,),
                  names=VALUE_NAMES, shape=())
    answer.expect_close(ctx, answer.value, torch.tensor(0.59625),
                        "the loss differs from the hand-computed one (0.5 * mean of the larger squared error)")
    expect_grad(ctx, answer, torch.tensor([[0.0, 0.125, 0.0], [0.0, 0.0, 0.0]]), "values",
                "d loss / d values differs from the hand-computed one")

