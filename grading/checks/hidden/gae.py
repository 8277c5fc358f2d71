"""Hidden checks of compute_gae: against the reference and against GAE's limiting cases.

Valid domain (solutions/rlhf.py): rewards, values (B, T) with B >= 1, T >= 1 (T = 1, single rows and
rows of 24-48 tokens drawn), values in [-10, 10] at generated positions and garbage in [-1000, 1000] at
padded ones, prefix masks with at least one generated token per row (ragged and full rows), gamma and
lam in [0, 1] (both bounds drawn), float32 and float64. A property check awards its points only when
the answer is also right on its input.
"""

from __future__ import annotations

import torch
from hypothesis import strategies as st

from autograder.checks import Context, check
from autograder.checks.examples import for_all
from autograder.checks.strategies import bounded, ragged_ranges
from autograder.checks.tools import Answer, call

NAMES = ("rewards", "values", "mask")
FN = ("compute_gae",)
CASES = st.tuples(ragged_ranges(((-10.0, 10.0), (-10.0, 10.0))), bounded(0.0, 1.0), bounded(0.0, 1.0))
# (inputs (rewards, values), gamma, lam)


def _gae(ctx: Context, rewards, values, mask, gamma, lam):
    answer = call(ctx, "compute_gae", rewards, values, mask, gamma=gamma, lam=lam, names=NAMES,
                  shape=tuple(mask.shape), tuple_of=2)
    return answer, answer.value


def _scale(rewards: torch.Tensor, values: torch.Tensor, mask: torch.Tensor) -> float:
    """What a row's advantages add up: T * 3 * max |input| at generated positions (see expect_close)."""
    keep = mask.bool()
    return 3 * mask.shape[1] * float(torch.cat([rewards[keep], values[keep]]).abs().max())


def _expect_reference(ctx: Context, answer: Answer, rewards, values, mask, gamma, lam, note: str = "") -> None:
    """Fail unless the answer's advantages and returns are the reference's."""
    adv, ret = answer.value
    ref_adv, ref_ret = ctx.ref.compute_gae(rewards.double(), values.double(), mask.double(), gamma, lam)
    scale = _scale(rewards, values, mask)
    answer.expect_close(ctx, adv, ref_adv.to(adv.dtype), "advantages differ from the reference" + note, mask,
                        scale)
    answer.expect_close(ctx, ret, ref_ret.to(ret.dtype), "returns differ from the reference" + note, mask, scale)


def _discounted_sum(x: torch.Tensor, mask: torch.Tensor, discount: float) -> torch.Tensor:
    """sum_{k >= t, k generated} discount^(k-t) x_k, for every t (double precision)."""
    x, mask = x.double() * mask.double(), mask.double()
    out = torch.zeros_like(x)
    running = torch.zeros_like(x[:, 0])
    for t in reversed(range(x.shape[1])):
        running = (x[:, t] + discount * running) * mask[:, t]
        out[:, t] = running
    return out


@check("gae.matches_reference",
       "compute_gae matches the reference (T = 1 to 48, ragged and full rows, gamma and lam in [0, 1], float32/64)",
       functions=FN)
def matches_reference(ctx: Context) -> None:
    def body(case):
        (inp, gamma, lam) = case
        rewards, values = inp.tensors
        answer, _ = _gae(ctx, rewards, values, inp.mask, gamma, lam)
        _expect_reference(ctx, answer, rewards, values, inp.mask, gamma, lam)
    for_all(ctx, CASES, body, chosen="compute_gae")


@check("gae.lambda_one_reward_to_go", "with lam = 1, advantages are the discounted reward-to-go minus V",
       functions=FN)
def lambda_one(ctx: Context) -> None:
    def body(case):
        (inp, gamma, _) = case
        rewards, values = inp.tensors
        answer, (adv, _) = _gae(ctx, rewards, values, inp.mask, gamma, 1.0)
        expected = _discounted_sum(rewards, inp.mask, gamma) - values.double()
        answer.expect_close(ctx, adv, expected.to(adv.dtype),
                            "with lam = 1, A_t should be sum_k gamma^(k-t) r_k - V_t", inp.mask,
                            _scale(rewards, values, inp.mask))
    for_all(ctx, CASES, body)


@check("gae.lambda_zero_td_error", "with lam = 0, advantages are the one-step TD errors", functions=FN)
def lambda_zero(ctx: Context) -> None:
    def body(case):
        (inp, gamma, _) = case
        rewards, values = inp.tensors
        answer, (adv, _) = _gae(ctx, rewards, values, inp.mask, gamma, 0.0)
        mask = inp.mask.double()
        next_values = torch.cat([values.double()[:, 1:] * mask[:, 1:], torch.zeros_like(mask[:, :1])], 1)
        expected = rewards.double() + gamma * next_values - values.double()
        answer.expect_close(ctx, adv, expected.to(adv.dtype),
                            "with lam = 0, A_t should be r_t + gamma V_{t+1} - V_t (V = 0 after the end)",
                            inp.mask, _scale(rewards, values, inp.mask))
    for_all(ctx, CASES, body)


@check("gae.padding_ignored", "values at padded positions do not change the (right) advantages", functions=FN)
def padding_ignored(ctx: Context) -> None:
    def body(case):
        (inp, gamma, lam) = case
        rewards, values = inp.tensors
        keep = inp.mask.bool()
        clean = [torch.where(keep, x, torch.zeros_like(x)) for x in (rewards, values)]
        clean_answer, (clean_adv, _) = _gae(ctx, *clean, inp.mask, gamma, lam)
        _expect_reference(ctx, clean_answer, *clean, inp.mask, gamma, lam,
                          " with zeros at the padded positions (this check needs them right there first)")
        answer, (adv, _) = _gae(ctx, rewards, values, inp.mask, gamma, lam)
        answer.expect_close(ctx, adv, clean_adv,
                            "advantages change when the padded positions hold other numbers "
                            "(expected: your answer to the same inputs with zeros in the padding)", inp.mask,
                            _scale(rewards, values, inp.mask))
    for_all(ctx, CASES, body)


@check("gae.returns_are_advantages_plus_values", "returns = advantages + values (with the advantages right)",
       functions=FN)
def returns_are_advantages_plus_values(ctx: Context) -> None:
    def body(case):
        (inp, gamma, lam) = case
        rewards, values = inp.tensors
        answer, (adv, ret) = _gae(ctx, rewards, values, inp.mask, gamma, lam)
        ref_adv, _ = ctx.ref.compute_gae(rewards.double(), values.double(), inp.mask.double(), gamma, lam)
        answer.expect_close(ctx, adv, ref_adv.to(adv.dtype), "advantages differ from the reference (this check "
                            "needs them right before it compares the returns with them)", inp.mask,
                            _scale(rewards, values, inp.mask))
        answer.expect_close(ctx, ret, (adv.double() + values.double()).to(ret.dtype),
                            "returns should be the advantages you return + values (the critic's target), "
                            "not the discounted reward-to-go", inp.mask)
    for_all(ctx, CASES, body)
