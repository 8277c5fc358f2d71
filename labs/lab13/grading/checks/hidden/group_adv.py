"""Hidden checks of group_advantages: against the reference, and the group structure's properties.

Domain (posttrain.py, declared in grading.yaml): rewards (B,) = N groups of group_size, group_size in 2..8; binary
rewards (the task's) and real ones in [-10, 10]; both normalize_std; eps in {1e-8, 1e-6, 1e-2}; float32 and float64.
The differential check runs on the inputs the engine derives from that declaration (hypothesis's draws, then groups
put at each spread level, 0 among them, in pairs with the other factors: autograder/checks/declared.py, units.py;
then chosen.py's: groups of equal rewards whose float32 mean rounds, and the training's). The property checks draw
groups whose rewards are all equal (std 0) often, binary and real (`groups`). A batch that is not whole groups is
rejected.

Precision: the expected advantages are the exact ones of the given rewards (the reference in float64), and each
group is compared at the dtype's tolerance plus the rounding a correct computation in the rewards' dtype makes
(`rounding_scales`: the docstring's formula in float32 passes); a group of equal rewards must be exactly 0.
"""

from __future__ import annotations

import torch
from hypothesis import strategies as st

from autograder.checks import Context, check
from autograder.checks.differential import on_declared_domain
from autograder.checks.examples import for_all
from autograder.checks.strategies import DTYPES, bounded
from autograder.checks.tools import call, expect_value_error

from .common import ADV_NAMES

EPS = st.sampled_from((1e-6, 1e-8, 1e-2))


@st.composite
def groups(draw) -> tuple[torch.Tensor, int, bool, float]:
    """(rewards, group_size, normalize_std, eps)."""
    G = draw(st.integers(2, 8))
    value = draw(st.sampled_from(("binary", "real")))
    one = st.sampled_from((0.0, 1.0)) if value == "binary" else bounded(-10.0, 10.0)
    rows = []
    for _ in range(draw(st.integers(1, 6))):
        if draw(st.booleans()) and draw(st.booleans()):
            rows.append([draw(one)] * G)        # all equal: std 0
        else:
            rows.append(draw(st.lists(one, min_size=G, max_size=G)))
    dtype = draw(st.sampled_from(DTYPES))
    return torch.tensor([r for row in rows for r in row], dtype=dtype), G, draw(st.booleans()), draw(EPS)


def _reference(ctx: Context, rewards, G, normalize, eps) -> torch.Tensor:
    """The exact advantages of the given rewards (computed in float64), in their dtype."""
    return ctx.ref.group_advantages(rewards.double(), G, normalize, eps).to(rewards.dtype)


def rounding_scales(rewards: torch.Tensor, G: int, normalize: bool, eps: float) -> list[float]:
    """Per group, the size of what a correct computation in the rewards' dtype rounds (tools.Answer.expect_close's
    `scale`): G max|r| (a mean of G rewards), divided by std + eps when it divides. 0 for a group of equal rewards:
    its advantages are exactly 0 in every dtype (posttrain.py). (N,)"""
    grouped = rewards.double().view(-1, G)
    size = G * grouped.abs().amax(1)
    if normalize:
        size = size / (grouped.std(1) + eps)
    equal = (grouped == grouped[:, :1]).all(1)
    return torch.where(equal, 0.0, size).tolist()


@check("group_adv.matches_reference", "group_advantages matches the reference (group sizes 2-8, equal groups, "
       "both normalisations, float32/64)", functions=("group_advantages",))
@on_declared_domain("group_advantages")
def matches_reference(ctx: Context, case: tuple) -> None:
    rewards, G, normalize, eps = case
    answer = call(ctx, "group_advantages", rewards, G, normalize_std=normalize, eps=eps, names=ADV_NAMES,
                  shape=tuple(rewards.shape))
    expected = _reference(ctx, rewards, G, normalize, eps).view(-1, G)
    for g, scale in enumerate(rounding_scales(rewards, G, normalize, eps)):  # each group at its own tolerance
        answer.expect_close(ctx, answer.value.view(-1, G)[g], expected[g],
                            f"the advantages of group {g + 1} (rows {g * G + 1}-{(g + 1) * G}) differ from the "
                            "reference", scale=scale)


@check("group_adv.equal_groups_zero", "a group whose rewards are all equal gets advantages exactly 0 (finite), "
       "a group with distinct rewards does not", functions=("group_advantages",))
def equal_groups_zero(ctx: Context) -> None:
    def body(case):
        rewards, G, normalize, eps = case
        distinct = torch.zeros(G, dtype=rewards.dtype)
        distinct[0] = 1.0
        rewards = torch.cat([rewards, distinct])   # one group [1, 0, ..., 0]: its first advantage is > 0
        grouped = rewards.view(-1, G)
        equal = (grouped == grouped[:, :1]).all(1).repeat_interleave(G)
        if not equal.any():
            return
        answer = call(ctx, "group_advantages", rewards, G, normalize_std=normalize, eps=eps, names=ADV_NAMES,
                      shape=tuple(rewards.shape))
        got = answer.value[equal]
        if not torch.isfinite(got).all() or got.abs().max() > 1e-6:
            raise answer.fail("a group whose rewards are all equal (std 0) must get advantages exactly 0, not "
                              "nan or inf (add eps to the std) nor anything else", expected="0 for those rows",
                              got=str(got.tolist()))
        if not answer.value[-G] > 0.1:
            raise answer.fail("in the group [1, 0, ..., 0] (the last one) the rewarded answer should get a positive "
                              "advantage", expected="> 0 for the last group's first row",
                              got=str(answer.value[-G:].tolist()))
    for_all(ctx, groups(), body)


@check("group_adv.shift_and_scale", "advantages ignore a constant added to a group, sum to 0 per group, have std "
       "about 1 (GRPO) or keep the rewards' differences and scale (Dr. GRPO)", functions=("group_advantages",))
def shift_and_scale(ctx: Context) -> None:
    def body(case):
        rewards, G, normalize, eps = case
        rewards = rewards.double()
        shift = torch.arange(rewards.numel() // G, dtype=torch.float64).repeat_interleave(G) * 3.0 - 5.0
        base = call(ctx, "group_advantages", rewards, G, normalize_std=normalize, eps=eps, names=ADV_NAMES,
                    shape=tuple(rewards.shape))
        moved = call(ctx, "group_advantages", rewards + shift, G, normalize_std=normalize, eps=eps, names=ADV_NAMES,
                     shape=tuple(rewards.shape))
        moved.expect_close(ctx, moved.value, base.value,
                           "adding a constant to every reward of a group should not change its advantages "
                           "(the baseline is the group's own mean)")
        sums = base.value.view(-1, G).sum(1)
        base.expect_close(ctx, sums, torch.zeros_like(sums), "each group's advantages should sum to 0")
        grouped, got = rewards.view(-1, G), base.value.double().view(-1, G)
        if normalize:
            std = grouped.std(1, keepdim=True)
            expected = (std / (std + eps)).expand(-1, G).reshape(-1)
            spread = got.std(1, keepdim=True).expand(-1, G).reshape(-1)
            base.expect_close(ctx, spread.to(rewards.dtype), expected.to(rewards.dtype),
                              "with the std, a group's advantages have sample std std_g / (std_g + eps) (about 1)")
        else:
            first = grouped - grouped[:, :1]
            base.expect_close(ctx, (got - got[:, :1]).reshape(-1), first.reshape(-1),
                              "without the std (Dr. GRPO), two answers' advantages differ by their rewards' difference")
            scaled = call(ctx, "group_advantages", rewards * 2.0, G, normalize_std=False, eps=eps, names=ADV_NAMES,
                          shape=tuple(rewards.shape))
            scaled.expect_close(ctx, scaled.value, base.value * 2.0,
                                "without the std (Dr. GRPO), doubling the rewards should double the advantages")
    for_all(ctx, groups(), body)


@check("group_adv.rejects_partial_groups", "a batch that is not whole groups raises ValueError",
       functions=("group_advantages",))
def rejects_partial_groups(ctx: Context) -> None:
    rewards = torch.tensor([1.0, 0.0, 1.0, 1.0, 0.0])
    expect_value_error(ctx, "group_advantages", (rewards, 2), {}, ADV_NAMES,
                       "5 rewards in groups of 2 should raise ValueError (the batch must be whole groups)",
                       neighbour=((rewards[:4], 2), {}))
