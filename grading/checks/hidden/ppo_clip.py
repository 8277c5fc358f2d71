"""Hidden checks of ppo_policy_loss and ppo_value_loss: against the reference, and the clipping's structure.

Valid domain (solutions/rlhf.py): (B, T) inputs with B >= 1, T >= 1 (T = 1, single rows and rows of 24-48
tokens drawn), prefix masks with at least one generated token per row (ragged and full rows), float32 and
float64, clip_eps in (0, 1) (0.05 to 0.9 drawn). ppo_policy_loss: log-probs in [-40, 0] at every position,
so log-ratios up to +-40 (ratios near 1, near the clip bounds, and far outside them with both signs of
advantage), advantages in [-10, 10] (garbage in [-1000, 1000] at padding). ppo_value_loss: values,
old_values, returns in [-10, 10] (garbage in [-1000, 1000] at padding), values - old_values up to +-5.

Where a gradient is compared, inputs are kept more than MARGIN away from the points where min/max/clip
switch branches (there the loss is not differentiable and any subgradient would be fair).
"""

from __future__ import annotations

import torch
from hypothesis import strategies as st

from autograder.checks import Context, check
from autograder.checks.examples import for_all
from autograder.checks.strategies import LOG_RATIOS, bounded, floats, logprob_pair, ragged_ranges
from autograder.checks.tools import Answer, call, fmt, tolerances
from autograder.sandbox import textsafe

from ...checks.public.ppo_clip import POLICY_NAMES, VALUE_NAMES, expect_grad, grad_of

MARGIN = 1e-3
EPS = st.sampled_from((0.2, 0.1, 0.3, 0.05, 0.5, 0.9))  # clip_eps; shrinks towards the default 0.2
# (where in [-40, 0] the pair of log-probs sits, logp - old_logp, advantages) and clip_eps
POLICY_CASES = st.tuples(ragged_ranges(((0.0, 1.0), LOG_RATIOS, (-10.0, 10.0)), garbage=(1.0, 40.0, 1e3)), EPS)
# (where the log-prob sits, advantages): logp = old_logp (ratio 1) on every generated token
RATIO_ONE_CASES = ragged_ranges(((0.0, 1.0), (-10.0, 10.0)), garbage=(1.0, 1e3))
# (old_values, values - old_values, returns) and clip_eps
VALUE_CASES = st.tuples(ragged_ranges(((-10.0, 10.0), st.one_of(floats(-0.75, 0.75, width=32), bounded(-5.0, 5.0)),
                                       (-10.0, 10.0)), garbage=(1e3, 0.0, 1e3)), EPS)


def _policy_inputs(case, away_from_kinks: bool = True):
    """(logp, old_logp, advantages, mask, clip_eps); ratios within MARGIN of 1 +- clip_eps are set to 1."""
    inp, eps = case
    where, log_ratio, advantages = inp.tensors
    logp, old_logp = logprob_pair(where, log_ratio)
    if away_from_kinks:
        ratio = torch.exp(logp.double() - old_logp.double())
        near = ((ratio - (1 + eps)).abs() <= MARGIN) | ((ratio - (1 - eps)).abs() <= MARGIN)
        logp = torch.where(near, old_logp, logp)
    return logp, old_logp, advantages, inp.mask, eps


def _objective_scale(logp, old_logp, advantages, mask) -> float:
    """Sum of |ratio * A| over the generated tokens (what the loss adds up, for expect_close's scale)."""
    ratio = torch.exp(logp.detach().double() - old_logp.double())
    return float((ratio * advantages.double()).abs()[mask.bool()].sum())


def _value_inputs(case, away_from_kinks: bool = True):
    """(values, old_values, returns, mask, clip_eps), away from the clip boundary and from ties of the max."""
    inp, eps = case
    old_values, step, returns = inp.tensors
    values = old_values + step
    if away_from_kinks:
        step = values.double() - old_values.double()
        values = torch.where(((step.abs() - eps).abs() <= MARGIN), old_values, values)
        v, old, ret = values.double(), old_values.double(), returns.double()
        v_clip = old + torch.clamp(v - old, -eps, eps)
        tie = (((v - ret) ** 2 - (v_clip - ret) ** 2).abs() <= MARGIN) & ((v - old).abs() > eps)
        returns = torch.where(tie, old_values, returns)
    return values, old_values, returns, inp.mask, eps


def _reference(fn, first: torch.Tensor, *rest, clip_eps: float) -> tuple[torch.Tensor, torch.Tensor]:
    """The reference's loss and its gradient w.r.t. the first argument, in double precision."""
    x = first.detach().double().clone().requires_grad_(True)
    loss = fn(x, *[t.double() for t in rest], clip_eps=clip_eps)
    loss.backward()
    return loss.detach().to(first.dtype), x.grad.to(first.dtype)


def _policy(ctx: Context, logp, old_logp, advantages, mask, eps, grad: bool = True) -> Answer:
    return call(ctx, "ppo_policy_loss", logp, old_logp, advantages, mask, clip_eps=eps,
                grad=(0,) if grad else (), names=POLICY_NAMES, shape=())


def _value(ctx: Context, values, old_values, returns, mask, eps, grad: bool = True) -> Answer:
    return call(ctx, "ppo_value_loss", values, old_values, returns, mask, clip_eps=eps,
                grad=(0,) if grad else (), names=VALUE_NAMES, shape=())


@check("ppo_clip.policy_matches_reference",
       "ppo_policy_loss and d loss / d logp match the reference (ragged masks, float32/64)",
       functions=("ppo_policy_loss",))
def policy_matches_reference(ctx: Context) -> None:
    def body(case):
        logp, old_logp, advantages, mask, eps = _policy_inputs(case)
        answer = _policy(ctx, logp, old_logp, advantages, mask, eps)
        loss, grad = _reference(ctx.ref.ppo_policy_loss, logp, old_logp, advantages, mask, clip_eps=eps)
        answer.expect_close(ctx, answer.value, loss, "the loss differs from the reference",
                            scale=_objective_scale(logp, old_logp, advantages, mask))
        expect_grad(ctx, answer, grad, "logp", "d loss / d logp differs from the reference")
    for_all(ctx, POLICY_CASES, body, chosen="ppo_policy_loss")


@check("ppo_clip.policy_clipped_zero_grad",
       "d loss / d logp is 0 exactly at the tokens whose ratio is clipped, and only there",
       functions=("ppo_policy_loss",))
def policy_clipped_zero_grad(ctx: Context) -> None:
    def body(case):
        logp, old_logp, advantages, mask, eps = _policy_inputs(case)
        answer = _policy(ctx, logp, old_logp, advantages, mask, eps)
        got = grad_of(answer, "logp").double()
        ratio, adv, keep = torch.exp(logp.double() - old_logp.double()), advantages.double(), mask.bool()
        clipped = keep & (((ratio > 1 + eps) & (adv > 0)) | ((ratio < 1 - eps) & (adv < 0)))
        expected = torch.where(keep & ~clipped, -ratio * adv / mask.double().sum(), 0.0)
        _, atol = tolerances(ctx, logp.dtype)
        pattern = textsafe.nonzero_pattern(expected, keep, atol)
        shown = (textsafe.nonzero_pattern(got, keep, atol) + "\n          gradient: "
                 + fmt(torch.where(keep, got, torch.nan)))
        if not torch.isfinite(got[keep]).all():  # nan compares false with atol both ways: caught here
            raise answer.fail("d loss / d logp is not a number at a generated token", expected=pattern, got=shown)
        if (got.abs() > atol)[clipped].any():
            raise answer.fail("d loss / d logp should be 0 at tokens where the ratio is clipped "
                              "(ratio > 1 + clip_eps with A > 0, or ratio < 1 - clip_eps with A < 0)",
                              expected=pattern, got=shown)
        if (got.abs() <= atol)[keep & (expected.abs() > 10 * atol)].any():
            raise answer.fail("d loss / d logp is 0 at a token where the ratio is not clipped "
                              "(only the clipped term of the min has no gradient)", expected=pattern, got=shown)
    for_all(ctx, POLICY_CASES, body)


@check("ppo_clip.policy_token_mean",
       "ppo_policy_loss takes one mean over all mask == 1 tokens of the batch", functions=("ppo_policy_loss",))
def policy_token_mean(ctx: Context) -> None:
    def body(inp):
        (where, advantages), mask = inp.tensors, inp.mask
        old_logp, _ = logprob_pair(where, torch.zeros_like(where))
        logp = torch.where(mask.bool(), old_logp, logprob_pair(where.flip(0), torch.zeros_like(where))[0])
        answer = _policy(ctx, logp, old_logp, advantages, mask, 0.2)
        m = mask.double()
        expected = -(advantages.double() * m).sum() / m.sum()
        answer.expect_close(ctx, answer.value, expected.to(logp.dtype),
                            "with logp == old_logp (ratio 1) the loss should be minus the mean of the "
                            "advantages over all mask == 1 tokens of the batch (one token-level mean: not "
                            "a mean of per-sequence means, padding not counted)",
                            scale=float((advantages.double().abs() * m).sum()))
        expect_grad(ctx, answer, (-advantages.double() * m / m.sum()).to(logp.dtype), "logp",
                    "with logp == old_logp (ratio 1, nothing clipped) d loss / d logp should be -A / (number of "
                    "mask == 1 tokens) at each generated token, 0 on padding")
    for_all(ctx, RATIO_ONE_CASES, body)


@check("ppo_clip.value_matches_reference",
       "ppo_value_loss and d loss / d values match the reference (ragged masks, float32/64)",
       functions=("ppo_value_loss",))
def value_matches_reference(ctx: Context) -> None:
    def body(case):
        values, old_values, returns, mask, eps = _value_inputs(case)
        answer = _value(ctx, values, old_values, returns, mask, eps)
        loss, grad = _reference(ctx.ref.ppo_value_loss, values, old_values, returns, mask, clip_eps=eps)
        answer.expect_close(ctx, answer.value, loss, "the loss differs from the reference")
        expect_grad(ctx, answer, grad, "values", "d loss / d values differs from the reference")
    for_all(ctx, VALUE_CASES, body, chosen="ppo_value_loss")


@check("ppo_clip.value_clipped_max",
       "ppo_value_loss is 0.5 * the token mean of the larger of the clipped and unclipped squared errors",
       functions=("ppo_value_loss",))
def value_clipped_max(ctx: Context) -> None:
    def body(case):
        values, old_values, returns, mask, eps = _value_inputs(case, away_from_kinks=False)
        answer = _value(ctx, values, old_values, returns, mask, eps, grad=False)
        v, old, ret, m = values.double(), old_values.double(), returns.double(), mask.double()
        v_clip = old + torch.clamp(v - old, -eps, eps)
        expected = 0.5 * (torch.maximum((v - ret) ** 2, (v_clip - ret) ** 2) * m).sum() / m.sum()
        answer.expect_close(ctx, answer.value, expected.to(values.dtype),
                            "the loss should be 0.5 * the mean over mask == 1 tokens of "
                            "max((values - returns)^2, (v_clip - returns)^2), with v_clip = old_values + "
                            "clip(values - old_values, -clip_eps, clip_eps): the larger (pessimistic) error")
    for_all(ctx, VALUE_CASES, body)
