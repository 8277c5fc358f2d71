"""The hidden checks' input strategies draw what their checks promise (ragged masks with garbage in
the padding, ratios and values kept away from the non-differentiable points)."""

from __future__ import annotations

import torch
from hypothesis import given, settings

from autograder.checks.hidden import gae, ppo_clip


@settings(max_examples=30, deadline=None, derandomize=True, database=None)
@given(gae.CASES)
def test_cases_are_ragged_with_garbage_in_the_padding(case):
    inp, gamma, lam = case
    rewards, values = inp.tensors
    B, T = inp.mask.shape
    assert 1 <= B <= 16 and 1 <= T <= 6 and 0.5 <= gamma <= 1.0 and 0.05 <= lam <= 0.99
    lengths = inp.mask.sum(1)
    assert (lengths >= 1).all() and torch.equal(inp.mask, (torch.arange(T) < lengths[:, None]).to(inp.dtype))
    for x in (rewards, values):
        assert x.dtype == inp.dtype and x.shape == (B, T)
        assert x[inp.mask.bool()].abs().max() <= 5.0


@settings(max_examples=30, deadline=None, derandomize=True, database=None)
@given(ppo_clip.POLICY_CASES)
def test_policy_inputs_stay_away_from_the_clip_boundaries(case):
    logp, old_logp, advantages, mask, eps = ppo_clip._policy_inputs(case)
    ratio = torch.exp(logp.double() - old_logp.double())
    assert ((ratio - (1 + eps)).abs() > ppo_clip.MARGIN).all() and ((ratio - (1 - eps)).abs() > ppo_clip.MARGIN).all()
    assert torch.isfinite(ratio).all() and logp.dtype == old_logp.dtype == advantages.dtype == mask.dtype


@settings(max_examples=30, deadline=None, derandomize=True, database=None)
@given(ppo_clip.VALUE_CASES)
def test_value_inputs_stay_away_from_the_kinks(case):
    values, old_values, returns, mask, eps = ppo_clip._value_inputs(case)
    v, old, ret = values.double(), old_values.double(), returns.double()
    assert ((v - old).abs() - eps).abs().gt(ppo_clip.MARGIN).all()
    v_clip = old + torch.clamp(v - old, -eps, eps)
    clipped = (v - old).abs() > eps
    assert (((v - ret) ** 2 - (v_clip - ret) ** 2).abs() > ppo_clip.MARGIN)[clipped].all()
