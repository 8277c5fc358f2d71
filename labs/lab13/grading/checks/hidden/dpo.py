"""Hidden check of dpo_loss's stability at huge margins (its differential check, ipo_loss's and sequence_logprob's are
derived from their domains declared in grading.yaml: autograder/checks/differential.py). Gradients w.r.t. both policy
arguments compared.
"""

from __future__ import annotations

import torch

from autograder.checks import Context, check
from autograder.checks.tools import call

from .common import PREF_NAMES, expect_grad


def _reference(fn, four: list, beta: float):
    pc, pr = (x.detach().double().requires_grad_(True) for x in four[:2])
    loss = fn(pc, pr, four[2].double(), four[3].double(), beta)
    loss.backward()
    assert pc.grad is not None and pr.grad is not None
    dtype = four[0].dtype
    return loss.detach().to(dtype), pc.grad.to(dtype), pr.grad.to(dtype)


def _compare(ctx: Context, four: list, beta: float) -> None:
    answer = call(ctx, "dpo_loss", *four, beta=beta, grad=(0, 1), names=PREF_NAMES, shape=())
    loss, g_c, g_r = _reference(ctx.ref.dpo_loss, four, beta)
    h = (four[0].double() - four[2].double()) - (four[1].double() - four[3].double())
    answer.expect_close(ctx, answer.value, loss, "the loss differs from the reference",
                        scale=float((beta * h.abs() + 1 / beta).sum()))
    expect_grad(ctx, answer, 0, g_c, "policy_chosen", "d loss / d policy_chosen differs from the reference")
    expect_grad(ctx, answer, 1, g_r, "policy_rejected", "d loss / d policy_rejected differs from the reference")


@check("dpo.dpo_stable", "dpo_loss stays finite and exact at huge margins (beta * h = +-400)", functions=("dpo_loss",))
def dpo_stable(ctx: Context) -> None:
    for dtype in (torch.float32, torch.float64):
        zero = torch.zeros(4, dtype=dtype)
        pc = torch.tensor([0.0, -200.0, -100.0, 0.0], dtype=dtype)
        pr = torch.tensor([-200.0, 0.0, 0.0, -100.0], dtype=dtype)
        rc = torch.tensor([-200.0, 0.0, 0.0, -100.0], dtype=dtype)
        _compare(ctx, [pc, pr, rc, zero], 1.0)   # beta * h = 400, -200, -100, 200
        _compare(ctx, [pc, pr, rc, zero], 10.0)
