"""Units that are generated tokens (grading.yaml `units: {along: B T}`: autograder/checks/units.py): a unit is one
position of the `tensor B T` parameters where the mask is 1, and shares its row's entry of a `tensor B` with the row's
other tokens. The chosen examples put each token at its levels, reach every possible pair, keep a row's shared level
one level, and stay clear of the levels' ends (log(1 -+ clip_eps) too); hypothesis's draws and the fresh twins put
tokens at levels (a malformed token declaration: tests/test_units.py's table). Lab 13's grpo_policy_loss is the
declared function under test."""

from __future__ import annotations

import math
import random

import torch
from hypothesis import HealthCheck, given, settings

from autograder.checks import declared, units
from autograder.checks import factors as fx
from autograder.lab import config

F = "grpo_policy_loss"
NAMES = ("logp", "old_logp", "ref_logp", "advantages", "mask", "clip_eps", "beta", "aggregation")


def token_levels(args: tuple) -> dict[str, list]:
    arguments = dict(zip(NAMES, args))
    return {f.name: f.level(arguments) for f in declared.factors_of(F)[0] if f.per != "call"}


def test_the_units_are_the_generated_tokens_row_by_row(lab13):
    tokens = units.declared_for(F)
    assert tokens is not None and tokens.mask == "mask" and tokens.shared_factors() == ("A",)
    mask = torch.tensor([[1.0, 1, 0], [1, 0, 0]])
    logp = torch.tensor([[-1.0, -2, -3], [-4, -5, -6]])
    arguments = dict(zip(NAMES, (logp, logp - 1, logp, torch.tensor([2.0, -1.0]), mask, 0.2, 0.1, "token_mean")))
    assert tokens.positions(arguments) == [(0, 0), (0, 1), (1, 0)]
    envs = tokens.unit_envs(arguments)
    assert [(e["logp"], e["advantages"]) for e in envs] == [(-1.0, 2.0), (-2.0, 2.0), (-4.0, -1.0)]
    assert token_levels(tuple(arguments.values()))["A"] == ["A > 0", "A > 0", "A < 0"]


def test_the_chosen_examples_reach_every_possible_pair_a_row_sharing_its_advantage(lab13):
    factors, impossible = declared.factors_of(F)
    reached: set = set()
    for args in declared.chosen(F):
        reached |= fx.covered_pairs(factors, dict(zip(NAMES, args)))
        logp, old_logp, ref_logp, adv, mask = args[:5]
        for x in (logp, old_logp, ref_logp):
            assert bool(((x >= -40) & (x <= 0)).all())
        assert bool((adv.abs() <= 10).all()) and 0.05 <= args[5] <= 0.9
        ratio = torch.exp(logp.double() - old_logp.double())[mask.bool()]
        for end in (1 - args[5], 1 + args[5]):  # 5% of a level's width from its ends: never at a kink of the min
            assert bool(((ratio - end).abs() > 1e-3).all())
    assert reached == fx.possible_pairs(factors, impossible)


def test_a_unit_at_a_point_level_is_there_exactly_in_float32(lab13):
    """`log_ratio = 0`, `d = 0` and `A = 0`: exact in the call's dtype (the entries lie on the grid)."""
    seen = 0
    for args in declared.chosen(F):
        levels = token_levels(args)
        logp, old_logp, ref_logp, adv, mask = args[:5]
        rows = mask.nonzero()[:, 0].tolist()
        keep = mask.bool()
        for i, (lr, d, a) in enumerate(zip(levels["log_ratio"], levels["d"], levels["A"])):
            if lr == "log_ratio = 0":
                seen += 1
                assert logp[keep][i] == old_logp[keep][i]
            if d == "d = 0":
                assert ref_logp[keep][i] == logp[keep][i]
            if a == "A = 0":
                assert adv[rows[i]] == 0
    assert seen


def test_a_row_whose_first_token_wants_a_level_sets_the_row_for_all_its_tokens(lab13):
    tokens = units.declared_for(F)
    assert tokens is not None
    mask = torch.ones(2, 3)
    arguments = dict(zip(NAMES, (torch.full((2, 3), -1.0), torch.full((2, 3), -1.0), torch.full((2, 3), -1.0),
                                 torch.ones(2), mask, 0.2, 0.1, "token_mean")))
    wanted = [{"A": "A < 0", "log_ratio": "log_ratio > 20"}, {"A": "A > 0"}, None,
              {"A": "A = 0", "d": "d > 10"}, {"A": "A > 0", "log_ratio": "log_ratio < -20"}, {"d": "d = 0"}]
    tokens.put_some_units(arguments, wanted, random.Random(0), torch.float64)
    levels = token_levels(tuple(arguments.values()))
    assert levels["A"] == ["A < 0"] * 3 + ["A = 0"] * 3  # the row's first token set its advantage
    assert levels["log_ratio"][0] == "log_ratio > 20" and levels["log_ratio"][4] == "log_ratio < -20"
    assert levels["d"][3] == "d > 10" and levels["d"][5] == "d = 0"


def test_a_level_bound_may_be_a_log_of_the_settings(lab13):
    tokens = units.declared_for(F)
    assert tokens is not None
    log_ratio = next(f for f in tokens.declared if f.name == "log_ratio")
    inside = next(level for level in log_ratio.levels if level.text == "log(1 - clip_eps) < log_ratio < 0")
    assert inside.where_met({"clip_eps": 0.2}) == [(math.log(0.8), 0.0)]


def test_the_draws_put_tokens_at_levels_inside_the_domain(lab13):
    """Hypothesis's draws hold tokens at every level of the ratio (a ratio beyond e^20 is rare for log-probs drawn
    uniformly) and stay inside the domain."""
    drawn: set = set()

    @settings(max_examples=150, deadline=None, database=None, suppress_health_check=list(HealthCheck))
    @given(declared.strategy(F))
    def draws(args):
        logp, old_logp, ref_logp, adv, mask = args[:5]
        for x in (logp, old_logp, ref_logp):
            assert bool(((x >= -40) & (x <= 0)).all())
        assert bool((adv.abs() <= 10).all()) and bool(mask[:, 0].all())
        drawn.update(token_levels(args)["log_ratio"])
    draws()
    assert drawn >= set(next(f.levels for f in declared.factors_of(F)[0] if f.name == "log_ratio"))


def test_without_a_contract_mask_every_position_is_a_unit(tmp_path, lab13_yaml, monkeypatch):
    (tmp_path / "grading.yaml").write_text(lab13_yaml.read_text().replace(
        "    mask: mask\n    differentiable: [logp]\n    # the hidden differential check's inputs",
        "    differentiable: [logp]\n    # the hidden differential check's inputs"))
    cfg = config.load(tmp_path / "grading.yaml")
    monkeypatch.setattr(config, "current", lambda: cfg)
    tokens = units.declared_for(F)
    assert tokens is not None and tokens.mask == ""
    x = torch.zeros(2, 3)
    arguments = dict(zip(NAMES, (x, x, x, torch.zeros(2), torch.tensor([[1.0, 0, 0], [1, 1, 0]]), 0.2, 0.1,
                                 "token_mean")))
    assert tokens.positions(arguments) == [(b, t) for b in range(2) for t in range(3)]


def test_a_fresh_twin_puts_its_tokens_at_levels_drawn_for_them(lab13):
    """A public check's twin (lab_inputs.fresh_twin) of grpo_policy_loss's worked example: new values, the example's
    shapes, mask and settings, and tokens at drawn levels, so that twins meet the clip range, not only ratios far
    from 1. Without every parameter given (a setting left to its default) the twin's values are only drawn."""
    from autograder.checks import lab_inputs
    example = lab13.contract[F].examples[0]
    args = tuple(torch.tensor(example[n], dtype=torch.float64) if isinstance(example[n], list) else example[n]
                 for n in NAMES)
    args = (args[0].requires_grad_(True), *args[1:])
    seen: set = set()
    for position in range(8):
        fresh, kwargs = lab_inputs.fresh_twin(F, args, {}, True, position)
        assert kwargs == {} and [a.shape for a in fresh[:5]] == [a.shape for a in args[:5]]
        assert torch.equal(fresh[4], args[4]) and fresh[5:] == args[5:] and fresh[0].requires_grad
        assert not torch.equal(fresh[1], args[1])
        seen.update(token_levels(fresh)["log_ratio"])
    assert {"log(1 - clip_eps) < log_ratio < 0", "0 < log_ratio < log(1 + clip_eps)"} & seen
    assert len(seen) >= 5
    fresh, _ = lab_inputs.fresh_twin(F, args[:5], {"beta": 0.1}, True, 0)
    assert len(fresh) == 5 and not torch.equal(fresh[0], args[0])
