"""The hidden checks' input strategies draw what their checks promise (ragged masks with garbage in
the padding, ratios and values kept away from the non-differentiable points), and each function's
differential check reaches every region of its valid domain and every possible pair of its factors'
levels (grading/checks/hidden/domains.py), measured on the calls it makes in a grade of the reference."""

from __future__ import annotations

import pytest
import torch
from hypothesis import given, settings

from autograder.checks import covering, factors
from autograder.checks.strategies import LOGPROB_MIN
from autograder.validity import coverage
from lab12.checks.hidden import chosen, gae, ppo_clip
from lab12.checks.hidden.domains import DIFFERENTIAL, FACTORS, IMPOSSIBLE, REGIONS


@pytest.mark.slow  # each runs a check's 40 examples on the reference (1-3 s of CPU)
@pytest.mark.parametrize("function", list(DIFFERENTIAL))
def test_the_differential_check_reaches_every_region_of_the_domain(function):
    table = coverage.measure(check_ids=[DIFFERENTIAL[function]])
    reached = {region: counts.get(DIFFERENTIAL[function], 0) for region, counts in table[function].items()}
    assert set(reached) == set(REGIONS[function])
    assert [region for region, n in reached.items() if n == 0] == []


@pytest.mark.slow  # each runs a check's examples on the reference (1-3 s of CPU)
@pytest.mark.parametrize("function", list(DIFFERENTIAL))
def test_the_differential_check_reaches_every_possible_pair_of_levels(function):
    pairs = coverage.pairwise(coverage.record(check_ids=[DIFFERENTIAL[function]]))
    assert coverage.holes(pairs) == []
    assert len(pairs[function][1]) >= 50  # every function has several factors of several levels


def test_impossible_pairs_are_pairs_of_declared_levels_in_factor_order():
    for function, impossible in IMPOSSIBLE.items():
        every = {((f.name, x), (g.name, y)) for i, f in enumerate(FACTORS[function])
                 for g in FACTORS[function][i + 1:] for x in f.levels for y in g.levels}
        assert set(impossible) <= every and all(impossible.values()), function


@pytest.mark.parametrize("function", list(DIFFERENTIAL))
def test_the_covering_rows_reach_every_possible_pair(function):
    capacity = chosen._capacity if any(f.per != "call" for f in FACTORS[function]) else (lambda levels: 0)
    mine, impossible = FACTORS[function], IMPOSSIBLE.get(function, {})
    rows = covering.covering_rows(mine, impossible, capacity)
    reached = set().union(*[covering.row_pairs(mine, row) for row in rows])
    assert factors.possible_pairs(mine, impossible) <= reached


@pytest.mark.parametrize("function", ["kl_estimate", "shaped_rewards"])
def test_every_rejected_kind_is_tried(function):
    kinds = [e[2] if function == "kl_estimate" else e[5] for e in chosen.examples(function)]
    assert set(chosen.REJECTED) <= set(kinds) and "" in kinds and "kl" in kinds and "K1" in kinds
    assert set(kinds) - set(chosen.REJECTED) == {"k1", "k2", "k3"}


def test_the_training_regime_is_the_last_chosen_example():
    scores, logp, ref_logp, mask, beta, kind = chosen.examples("shaped_rewards")[-1]
    assert logp.dtype == torch.float32 and mask.shape == (32, 4) and kind == "k1" and beta == 0.2
    assert factors.rows_class(mask).startswith("ragged") and (logp - ref_logp)[mask.bool()].min() < 0
    r_better, r_worse = chosen.examples("bradley_terry_loss")[-1]
    assert torch.equal(r_better, r_worse)  # a reward model at w = 0 ties every pair


@settings(max_examples=30, deadline=None, derandomize=True, database=None)
@given(gae.CASES)
def test_cases_are_ragged_with_garbage_in_the_padding(case):
    inp, gamma, lam = case
    rewards, values = inp.tensors
    B, T = inp.mask.shape
    assert 1 <= B <= 16 and 1 <= T <= 48 and 0.0 <= gamma <= 1.0 and 0.0 <= lam <= 1.0
    lengths = inp.mask.sum(1)
    assert (lengths >= 1).all() and torch.equal(inp.mask, (torch.arange(T) < lengths[:, None]).to(inp.dtype))
    for x in (rewards, values):
        assert x.dtype == inp.dtype and x.shape == (B, T)
        assert x[inp.mask.bool()].abs().max() <= 10.0 and x.abs().max() <= 1000.0


@settings(max_examples=30, deadline=None, derandomize=True, database=None)
@given(ppo_clip.POLICY_CASES)
def test_policy_inputs_stay_away_from_the_clip_boundaries(case):
    logp, old_logp, advantages, mask, eps = ppo_clip._policy_inputs(case)
    ratio = torch.exp(logp.double() - old_logp.double())
    assert ((ratio - (1 + eps)).abs() > ppo_clip.MARGIN).all() and ((ratio - (1 - eps)).abs() > ppo_clip.MARGIN).all()
    assert torch.isfinite(ratio).all() and logp.dtype == old_logp.dtype == advantages.dtype == mask.dtype
    for x in (logp, old_logp):  # log-probs everywhere, padded positions included
        assert (x <= 0).all() and (x >= LOGPROB_MIN).all()


@settings(max_examples=30, deadline=None, derandomize=True, database=None)
@given(ppo_clip.VALUE_CASES)
def test_value_inputs_stay_away_from_the_kinks(case):
    values, old_values, returns, mask, eps = ppo_clip._value_inputs(case)
    v, old, ret = values.double(), old_values.double(), returns.double()
    assert ((v - old).abs() - eps).abs().gt(ppo_clip.MARGIN).all()
    v_clip = old + torch.clamp(v - old, -eps, eps)
    clipped = (v - old).abs() > eps
    assert (((v - ret) ** 2 - (v_clip - ret) ** 2).abs() > ppo_clip.MARGIN)[clipped].all()
