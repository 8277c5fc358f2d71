"""Hidden checks of grpo_policy_loss: against the reference, the clipping, the aggregations and the k3 KL.

Domain (posttrain.py, declared in grading.yaml): (B, T) inputs, prefix masks (ragged and full rows), float32 and
float64; logp, old_logp, ref_logp in [-40, 0] at every position, so log-ratios to the old policy and the reference
reach +-40 (both clip branches, far outside); advantages (B,) in [-10, 10]; clip_eps in [0.05, 0.9]; beta in {0, 0.04,
0.1, 1}; each of the three aggregations. Every check draws from that declaration (autograder/checks/declared.py: each
generated token put at levels of A's sign, the ratio against the clip range and the k3 log-ratio, in pairs with the
settings); the differential check then runs chosen.py's training regime. Where a gradient is compared, ratios within
MARGIN of 1 +- clip_eps are moved to 1 (a kink of the min).
"""

from __future__ import annotations

import torch

from autograder.checks import Context, check
from autograder.checks.declared import strategy
from autograder.checks.differential import on_declared_domain
from autograder.checks.examples import for_all
from autograder.checks.tools import Answer, call, expect_value_error, tolerances

from .common import GRPO_NAMES, expect_grad, grad_of

MARGIN = 1e-3


def away_from_kinks(case: tuple) -> tuple:
    """The declared call (logp, old_logp, ref_logp, advantages, mask, clip_eps, beta, aggregation) with logp moved onto
    old_logp where the ratio lies within MARGIN of 1 +- clip_eps (the min's kinks: no gradient there to compare)."""
    logp, old_logp, ref_logp, adv, mask, eps, beta, aggregation = case
    ratio = torch.exp(logp.double() - old_logp.double())
    near = ((ratio - (1 + eps)).abs() <= MARGIN) | ((ratio - (1 - eps)).abs() <= MARGIN)
    return torch.where(near, old_logp, logp).detach(), old_logp, ref_logp, adv, mask, eps, beta, aggregation


def _ask(ctx: Context, logp, old_logp, ref_logp, adv, mask, eps, beta, aggregation) -> Answer:
    return call(ctx, "grpo_policy_loss", logp, old_logp, ref_logp, adv, mask, clip_eps=eps, beta=beta,
                aggregation=aggregation, grad=(0,), names=GRPO_NAMES, shape=())


def _reference(ctx: Context, logp, old_logp, ref_logp, adv, mask, eps, beta, aggregation):
    x = logp.detach().double().requires_grad_(True)
    loss = ctx.ref.grpo_policy_loss(x, old_logp.double(), ref_logp.double(), adv.double(), mask.double(), eps, beta,
                                    aggregation)
    loss.backward()
    assert x.grad is not None
    return loss.detach().to(logp.dtype), x.grad.to(logp.dtype)


def _scale(logp, old_logp, ref_logp, adv, mask, beta) -> float:
    """Sum of |terms| the loss adds up (float32 rounding allowance)."""
    ratio = torch.exp(logp.double() - old_logp.double())
    d = ref_logp.double() - logp.double()
    terms = (ratio * adv.double()[:, None]).abs() + beta * (torch.exp(d) + d.abs() + 1)
    return float(terms[mask.bool()].sum())


@check("grpo_loss.matches_reference", "grpo_policy_loss and d loss / d logp match the reference (every aggregation, "
       "ragged masks, both clip branches, float32/64)", functions=("grpo_policy_loss",))
@on_declared_domain("grpo_policy_loss")
def matches_reference(ctx: Context, case: tuple) -> None:
    args = away_from_kinks(case)
    answer = _ask(ctx, *args)
    loss, grad = _reference(ctx, *args)
    answer.expect_close(ctx, answer.value, loss, "the loss differs from the reference",
                        scale=_scale(*args[:5], args[6]))
    expect_grad(ctx, answer, 0, grad, "logp", "d loss / d logp differs from the reference")


@check("grpo_loss.clipped_zero_grad",
       "with beta = 0, d loss / d logp is 0 exactly where the ratio is clipped, and only there",
       functions=("grpo_policy_loss",))
def clipped_zero_grad(ctx: Context) -> None:
    def body(case):
        logp, old_logp, ref_logp, adv, mask, eps, _, aggregation = away_from_kinks(case)
        answer = _ask(ctx, logp, old_logp, ref_logp, adv, mask, eps, 0.0, aggregation)
        got = grad_of(answer, 0, "logp").double()
        ratio, a, keep = torch.exp(logp.double() - old_logp.double()), adv.double()[:, None], mask.bool()
        clipped = keep & (((ratio > 1 + eps) & (a > 0)) | ((ratio < 1 - eps) & (a < 0)))
        _, atol = tolerances(ctx, logp.dtype)
        if not torch.isfinite(got[keep]).all():  # nan compares false with atol both ways: caught here
            raise answer.fail("d loss / d logp is not a number at a generated token", got=str(got.tolist()))
        if (got.abs() > atol)[clipped].any():
            raise answer.fail("d loss / d logp should be 0 at tokens where the ratio is clipped (ratio > 1 + clip_eps "
                              "with A > 0, or ratio < 1 - clip_eps with A < 0)", got=str(got.tolist()))
        _, expected = _reference(ctx, logp, old_logp, ref_logp, adv, mask, eps, 0.0, aggregation)
        if (got.abs() <= atol)[keep & ~clipped & (expected.double().abs() > 10 * atol)].any():
            raise answer.fail("d loss / d logp is 0 at a token where the ratio is not clipped (only the clipped term "
                              "of the min has no gradient)", got=str(got.tolist()))
    for_all(ctx, strategy("grpo_policy_loss"), body)


@check("grpo_loss.aggregations_differ", "at ratio 1 without KL each aggregation weights the advantages as declared "
       "(token mean, mean of row means, sum / (B * T))", functions=("grpo_policy_loss",))
def aggregations_differ(ctx: Context) -> None:
    def body(case):
        logp, _, _, adv, mask, _, _, _ = case
        m = mask.double()
        per_row = adv.double() * m.sum(1)
        expected = {"token_mean": -per_row.sum() / m.sum(), "seq_mean_token_mean": -adv.double().mean(),
                    "token_sum_norm": -per_row.sum() / m.numel()}
        for aggregation, value in expected.items():
            answer = _ask(ctx, logp, logp, logp, adv, mask, 0.2, 0.0, aggregation)
            answer.expect_close(ctx, answer.value, value.to(logp.dtype),
                                f"with logp == old_logp == ref_logp, aggregation={aggregation!r} should give minus "
                                "the advantages weighted as its docstring says (padding never counted)",
                                scale=float(per_row.abs().sum()))
    for_all(ctx, strategy("grpo_policy_loss"), body)


@check("grpo_loss.kl_at_ratio_one", "with A = 0 and ratio 1 the loss is beta * the k3 estimate of KL(policy || ref)",
       functions=("grpo_policy_loss",))
def kl_at_ratio_one(ctx: Context) -> None:
    def body(case):
        logp, _, ref_logp, adv, mask, _, beta, aggregation = case
        beta = beta or 0.1
        zeros = torch.zeros_like(adv)
        answer = _ask(ctx, logp, logp, ref_logp, zeros, mask, 0.2, beta, aggregation)
        loss, grad = _reference(ctx, logp, logp, ref_logp, zeros, mask, 0.2, beta, aggregation)
        answer.expect_close(ctx, answer.value, loss, "with A = 0 the loss is beta times the aggregated k3 = "
                            "exp(ref_logp - logp) - (ref_logp - logp) - 1 (that direction: >= 0, unbiased for "
                            "KL(policy || ref) on the policy's samples)",
                            scale=_scale(logp, logp, ref_logp, zeros, mask, beta))
        expect_grad(ctx, answer, 0, grad, "logp", "d loss / d logp of the k3 term differs: beta * (1 - exp(ref_logp - "
                    "logp)) per token, then the aggregation's weight")
    for_all(ctx, strategy("grpo_policy_loss"), body)


@check("grpo_loss.rejects_unknown", "an unknown aggregation raises ValueError", functions=("grpo_policy_loss",))
def rejects_unknown(ctx: Context) -> None:
    x, mask = torch.full((2, 3), -1.0), torch.ones(2, 3)
    args = (x, x, x, torch.zeros(2), mask)
    for bad in ("mean", "Token_mean", "seq_mean_token_sum"):
        expect_value_error(ctx, "grpo_policy_loss", args, {"aggregation": bad}, GRPO_NAMES,
                           f"aggregation={bad!r} should raise ValueError (one of 'token_mean', "
                           "'seq_mean_token_mean', 'token_sum_norm', case-sensitive)",
                           neighbour=(args, {"aggregation": "token_mean"}))
