"""What Lab 13's hidden checks share: argument names, gradients, and one-call helpers."""

from __future__ import annotations

import torch

from autograder.checks import Context
from autograder.checks.tools import Answer

ADV_NAMES = ("rewards", "group_size")
GRPO_NAMES = ("logp", "old_logp", "ref_logp", "advantages", "mask")
PREF_NAMES = ("policy_chosen", "policy_rejected", "ref_chosen", "ref_rejected")


def grad_of(answer: Answer, k: int, wrt: str) -> torch.Tensor:
    """The k-th requested gradient of a loss; fails when none reached `wrt`."""
    grad = answer.grads[k] if k < len(answer.grads) else None
    if grad is None:
        raise answer.fail(f"the loss is not differentiable w.r.t. {wrt}: was {wrt} detached "
                          "(.detach(), .item(), .data, torch.no_grad, numpy)?",
                          expected=f"a gradient of the loss w.r.t. {wrt}", got=f"no gradient reached {wrt}")
    return grad


def expect_grad(ctx: Context, answer: Answer, k: int, expected: torch.Tensor, wrt: str, message: str) -> None:
    answer.expect_close(ctx, grad_of(answer, k, wrt), expected, message)
