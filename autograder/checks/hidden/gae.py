"""Hidden checks of compute_gae: against the reference and against GAE's limiting cases."""

from __future__ import annotations

import torch
from hypothesis import strategies as st

from autograder.checks import Context, check
from autograder.checks.hidden.strategies import floats, ragged_ranges
from autograder.checks.tools import call, for_all

NAMES = ("rewards", "values", "mask")
FN = ("compute_gae",)
CASES = st.tuples(ragged_ranges(((-5.0, 5.0), (-5.0, 5.0)), garbage=1e3), floats(0.5, 1.0), floats(0.05, 0.99))
# (inputs (rewards, values), gamma, lam)


def _gae(ctx: Context, rewards, values, mask, gamma, lam):
    answer = call(ctx, "compute_gae", rewards, values, mask, gamma=gamma, lam=lam, names=NAMES,
                  shape=tuple(mask.shape), tuple_of=2)
    return answer, answer.value


def _discounted_sum(x: torch.Tensor, mask: torch.Tensor, discount: float) -> torch.Tensor:
    """sum_{k >= t, k generated} discount^(k-t) x_k, for every t (double precision)."""
    x, mask = x.double() * mask.double(), mask.double()
    out = torch.zeros_like(x)
    running = torch.zeros_like(x[:, 0])
    for t in reversed(range(x.shape[1])):
        running = (x[:, t] + discount * running) * mask[:, t]
        out[:, t] = running
    return out


@check("gae.matches_reference", "compute_gae matches the reference (ragged masks, gamma < 1, float32/64)",
       functions=FN)
def matches_reference(ctx: Context) -> None:
    def body(case):
        (inp, gamma, lam) = case
        rewards, values = inp.tensors
        answer, (adv, ret) = _gae(ctx, rewards, values, inp.mask, gamma, lam)
        ref_adv, ref_ret = ctx.ref.compute_gae(rewards.double(), values.double(), inp.mask.double(), gamma, lam)
        answer.expect_close(ctx, adv, ref_adv.to(adv.dtype), "advantages differ from the reference", inp.mask)
        answer.expect_close(ctx, ret, ref_ret.to(ret.dtype), "returns differ from the reference", inp.mask)
    for_all(ctx, CASES, body)


@check("gae.lambda_one_reward_to_go", "with lam = 1, advantages are the discounted reward-to-go minus V",
       functions=FN)
def lambda_one(ctx: Context) -> None:
    def body(case):
        (inp, gamma, _) = case
        rewards, values = inp.tensors
        answer, (adv, _) = _gae(ctx, rewards, values, inp.mask, gamma, 1.0)
        expected = _discounted_sum(rewards, inp.mask, gamma) - values.double()
        answer.expect_close(ctx, adv, expected.to(adv.dtype),
                            "with lam = 1, A_t should be sum_k gamma^(k-t) r_k - V_t", inp.mask)
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
                            inp.mask)
    for_all(ctx, CASES, body)


@check("gae.padding_ignored", "values at padded positions do not change the advantages", functions=FN)
def padding_ignored(ctx: Context) -> None:
    def body(case):
        (inp, gamma, lam) = case
        rewards, values = inp.tensors
        keep = inp.mask.bool()
        clean = [torch.where(keep, x, torch.zeros_like(x)) for x in (rewards, values)]
        _, (clean_adv, _) = _gae(ctx, *clean, inp.mask, gamma, lam)
        answer, (adv, _) = _gae(ctx, rewards, values, inp.mask, gamma, lam)
        answer.expect_close(ctx, adv, clean_adv,
                            "advantages change when the padded positions hold other numbers "
                            "(expected: the same inputs with zeros in the padding)", inp.mask)
    for_all(ctx, CASES, body)


@check("gae.returns_are_advantages_plus_values", "returns = advantages + values (your own advantages)",
       functions=FN)
def returns_are_advantages_plus_values(ctx: Context) -> None:
    def body(case):
        (inp, gamma, lam) = case
        rewards, values = inp.tensors
        answer, (adv, ret) = _gae(ctx, rewards, values, inp.mask, gamma, lam)
        answer.expect_close(ctx, ret, (adv.double() + values.double()).to(ret.dtype),
                            "returns should be the advantages you return + values (the critic's target), "
                            "not the discounted reward-to-go", inp.mask)
    for_all(ctx, CASES, body)
