"""A scalar answer's rounding allowance (autograder/checks/tools.py `reference_answer`): a correct float32
computation that adds up the same terms in another order than the reference passes, where sums near -200 each
carry their rounding into a small difference; a wrong one still fails. The comparison is tools.expect_close's:
rtol and atol at float32, plus 4 eps of the allowance. Every comparison with the reference goes through
`expect_like_reference` (the derived differential check, the fresh twins of public checks, the derived dtype
tests), so each applies it, in every lab, without a lab hook."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
import torch

from autograder.checks.base import Call, CheckFailed, Context
from autograder.checks.tools import expect_like_reference, reference_answer
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
    allowance = reference_answer(REF, Call(function, args), scalar=True).allowance
    atol = hyp.atol_float32 + 4 * allowance * torch.finfo(torch.float32).eps
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


def allowance(ref, function: str, *args, scalar: bool = True):
    answered = reference_answer(ref, Call(function, args), scalar=scalar)
    return answered if isinstance(answered, BaseException) else answered.allowance


def test_the_allowance_is_the_reference_s_first_order_sensitivity():
    """sum_i |x_i d f/d x_i| in float64 for a scalar; 0 for a tensor answer; a rejected call is the exception."""
    x = torch.tensor([-3.0, 2.0])
    ref = SimpleNamespace(f=lambda a: (a * a).sum(), bad=lambda a: a.reshape(5), per_item=lambda a: a * a,
                          constant=lambda a: torch.tensor(1.0), in_place=lambda a: a.mul_(a).sum())
    assert allowance(ref, "f", x) == 2 * (9 + 4)
    assert allowance(ref, "per_item", x, scalar=False) == 0.0
    assert isinstance(allowance(ref, "bad", x), RuntimeError)
    assert allowance(ref, "constant", x) == 0.0           # no gradient: nothing to allow for
    assert allowance(ref, "in_place", x) == 0.0           # it rejects inputs that need a gradient: asked as asked
    assert reference_answer(ref, Call("in_place", (x.clone(),))).value == 13.0


def policy_loss_draws(n: int = 200):
    """Lab 12's ppo_policy_loss in float32: ratios within 1e-4 of 1, each token's advantage near +-1000 and
    another's its opposite, so the mean (near 0.1) is a small difference of large terms."""
    g = torch.Generator().manual_seed(1)
    for _ in range(n):
        B, T = int(torch.randint(1, 5, (), generator=g)), 2 * int(torch.randint(1, 4, (), generator=g))
        old = -3 * torch.rand(B, T, generator=g)
        logp = old + 1e-4 * torch.randn(B, T, generator=g)
        half = 1000 + torch.rand(B, T // 2, generator=g)
        yield logp, old, torch.cat([half, -half], dim=1), torch.ones(B, T)


def policy_loss(logp, old, adv, mask, clip_eps=0.2, slip=False):
    """Correct, with its terms added in another order (positive ones first); a `slip` swaps the log-ratio."""
    ratio = torch.exp(old - logp if slip else logp - old)
    terms = torch.minimum(ratio * adv, torch.clamp(ratio, 1 - clip_eps, 1 + clip_eps) * adv)[mask.bool()]
    return -(terms[terms > 0].sum() + terms[terms <= 0].sum()) / mask.sum()


@pytest.mark.parametrize("slip", [False, True])
def test_every_comparison_with_the_reference_allows_a_scalar_its_rounding(slip):
    """expect_like_reference with no lab hook (what the twins and dtype tests of Lab 13, the toy lab and a declared
    lab use): the correct reordering passes every draw, though some differ from the reference by more than the
    float32 tolerances alone; a slip (the log-ratio swapped, so the
    answer's sign) fails, but where the answer is within the allowance of 0."""
    from solutions import rlhf
    sub = SimpleNamespace(call=lambda function, *args, grad=(), **kwargs: (policy_loss(*args, slip=slip), []))
    ctx = Context(sub=sub, ref=rlhf, hypothesis=config.current().hypothesis)
    outcomes, beyond_tolerance = [], 0
    for args in policy_loss_draws():
        expected = reference_answer(rlhf, Call("ppo_policy_loss", args))
        beyond_tolerance += not torch.allclose(policy_loss(*args, slip=slip).double(), expected.value.double(),
                                               rtol=1e-4, atol=1e-5)
        try:
            expect_like_reference(ctx, Call("ppo_policy_loss", args))
            outcomes.append(True)
        except CheckFailed:
            outcomes.append(False)
    if slip:
        assert sum(outcomes) <= len(outcomes) // 20
    else:
        assert all(outcomes) and beyond_tolerance >= len(outcomes) // 10
