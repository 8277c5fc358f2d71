"""The derived differential check's rounding allowance (autograder/checks/differential.py `rounding_allowance`):
a correct float32 computation that adds up the same terms in another order than the reference passes, where
sums near -200 each carry their rounding into a small difference; a wrong one still fails. The comparison is
tools.expect_close's: rtol and atol at float32, plus 4 eps of the allowance."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
import torch

from autograder.checks.differential import rounding_allowance
from autograder.lab import config

F = torch.nn.functional
BETA = 10.0  # the largest of Lab 13's
# As a reference writes them: DPO's loss, and the mean DPO margin (a metric: a difference of sums)
REF = SimpleNamespace(loss=lambda pc, pr, rc, rr: F.softplus(-BETA * ((pc - rc) - (pr - rr))).mean(),
                      margin=lambda pc, pr, rc, rr: ((pc - rc) - (pr - rr)).mean())
CORRECT = {"loss": lambda pc, pr, rc, rr: F.softplus(-BETA * ((pc - pr) - (rc - rr))).mean(),  # summed otherwise
           "margin": lambda pc, pr, rc, rr: pc.mean() - rc.mean() - pr.mean() + rr.mean()}
WRONG = {"loss": lambda pc, pr, rc, rr: F.softplus(BETA * ((pc - rc) - (pr - rr))).mean(),      # chosen, rejected
         "margin": lambda pc, pr, rc, rr: ((pc - rc) + (pr - rr)).mean()}                          # swapped; a sign


def passes(function: str, answer, args) -> tuple[bool, bool]:
    """(passes with the allowance, passes without it), as expect_close compares at float32."""
    hyp = config.current().hypothesis
    expected = getattr(REF, function)(*(a.double() for a in args))
    atol = hyp.atol_float32 + 4 * rounding_allowance(REF, function, args) * torch.finfo(torch.float32).eps
    got = answer(*args).double()
    return (torch.allclose(got, expected, rtol=hyp.rtol_float32, atol=atol),
            torch.allclose(got, expected, rtol=hyp.rtol_float32, atol=hyp.atol_float32))


def draws(n: int = 300):
    """Float32 sequence log-probs in [-200, 0], the policy's within 0.5 of the reference's (a DPO training's start:
    margins |h| <= 1, so beta * h within 10, where the loss is neither 0 nor linear)."""
    g = torch.Generator().manual_seed(0)
    for _ in range(n):
        P = int(torch.randint(1, 17, (), generator=g))
        rc, rr = (-199.5 * torch.rand(P, generator=g) - 0.5 for _ in range(2))
        pc, pr = (ref + torch.rand(P, generator=g) - 0.5 for ref in (rc, rr))
        yield pc, pr, rc, rr


@pytest.mark.parametrize("function", ["loss", "margin"])
def test_a_correct_reordering_passes_and_a_mistake_does_not(function):
    results = [passes(function, CORRECT[function], args) for args in draws()]
    assert all(with_it for with_it, _ in results)
    assert not any(passes(function, WRONG[function], args)[0] for args in draws())
    if function == "margin":  # a small difference of large sums: without the allowance, correct code failed
        assert sum(not without for _, without in results) >= len(results) // 10


def test_the_allowance_is_the_reference_s_first_order_sensitivity():
    """sum_i |x_i d f/d x_i| in float64; 0 for a call the reference rejects."""
    x = torch.tensor([-3.0, 2.0])
    ref = SimpleNamespace(f=lambda a: (a * a).sum(), bad=lambda a: a.reshape(5))
    assert rounding_allowance(ref, "f", (x,)) == 2 * (9 + 4)
    assert rounding_allowance(ref, "bad", (x,)) == 0.0
