"""Groups in a declared domain (autograder/lab/domain_spec.py, unit_spec.py; checks/declared.py, units.py): a tensor
of N groups of G entries (`tensor N*G`), G a parameter's value (`size G 2..8`), and per-group factors read through
mean(P) and std(P). Every way the engine draws such a function's inputs keeps its shape whole groups; the chosen
examples put each group at its levels (a spread of 0: equal entries in the dtype), reach every pair of levels, and
stay in the declared range (a malformed group declaration: tests/test_units.py's table). Lab 13's group_advantages is
the declared function under test."""

from __future__ import annotations

import random

import pytest
import torch
from hypothesis import HealthCheck, given, settings

from autograder.checks import declared, domains, units
from autograder.checks import factors as fx
from autograder.lab.domain_spec import Parameter, dim_size
from autograder.lab.unit_spec import AGGREGATES, bounds, parse_factor

F = "group_advantages"
NAMES = ("rewards", "group_size", "normalize_std", "eps")


def whole_groups(args: tuple) -> None:
    rewards, G, normalize, eps = args
    assert isinstance(G, int) and 2 <= G <= 8 and rewards.dim() == 1 and rewards.numel() % G == 0
    assert 1 <= rewards.numel() // G <= 4 and bool((rewards.abs() <= 10).all())
    assert isinstance(normalize, bool) and eps in (1e-8, 1e-6, 1e-2)


def test_the_kinds_parse():
    assert Parameter.parse("g", "size G 2..8") == Parameter("g", "size", ("G",), low=2.0, high=8.0)
    assert Parameter.parse("r", "tensor N*G in -1..1").dims == ("N*G",)
    assert dim_size("N*G", {"N": 3, "G": 4}) == 12 and dim_size("2*T", {"T": 5}) == 10
    for bad in ("size 2..8", "size G", "size G 0..3", "size G 1.5..3", "tensor N*", "tensor N*-"):
        with pytest.raises(ValueError):
            Parameter.parse("p", bad)


def test_mean_and_std_read_a_groups_entries():
    spread = parse_factor("s", "std(r) / (mean(r) + 20)", "r", ("s >= 0",), ("r",), (), ("r",))
    assert spread.unit_level({"r": (1.0, 2.0, 3.0)}) == "s >= 0"
    assert AGGREGATES["std"]((1.0, 2.0, 3.0)) == pytest.approx(torch.tensor([1.0, 2.0, 3.0]).std().item())
    low, high = bounds(parse_factor("s", "std(r)", "r", ("s >= 0",), ("r",), (), ("r",)).expression,
                       {"r": (-10.0, 10.0)})
    assert low == 0 and high >= 20 / 2 ** 0.5  # the largest sample std of entries in [-10, 10]


def test_every_draw_is_whole_groups(lab13):
    @given(args=declared.strategy(F))
    @settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck), database=None)
    def drawn(args):
        whole_groups(args)
    drawn()
    for seed in range(20):
        call = domains.draw(F, seed)
        whole_groups(call.args)
        fresh, _ = domains.twin(F, call.args, {}, True, seed)
        whole_groups(fresh)
        assert fresh[0].shape == call.args[0].shape and fresh[1:] == call.args[1:]


def test_the_chosen_examples_put_each_group_at_its_levels_and_reach_every_pair(lab13):
    factors, impossible = declared.factors_of(F)
    reached: set = set()
    equal = 0
    for args in declared.chosen(F):
        whole_groups(args)
        arguments = dict(zip(NAMES, args))
        reached |= fx.covered_pairs(factors, arguments)
        spread = next(f for f in factors if f.name == "spread").level(arguments)
        assert None not in spread
        groups = args[0].view(-1, args[1])
        for level, group in zip(spread, groups):
            if level == "spread = 0":  # equal entries in the dtype: their std is exactly 0
                equal += 1
                assert bool((group == group[0]).all())
    assert equal and reached == fx.possible_pairs(factors, impossible)


def test_a_group_is_spread_about_its_mean_to_the_level_asked():
    spread = units.Units(F, "N", (parse_factor("s", "std(r)", "r", ("s = 0", "0 < s <= 0.05", "s > 2"), ("r",), (),
                                               ("r",)),),
                         (Parameter.parse("r", "tensor N*G in -10..10"),), (),
                         (Parameter.parse("r", "tensor N*G in -10..10"), Parameter.parse("g", "size G 2..8")))
    rng = random.Random(0)
    for dtype in (torch.float32, torch.float64):
        arguments = {"r": torch.zeros(15, dtype=dtype), "g": 5}
        wanted = [{"s": "s = 0"}, {"s": "0 < s <= 0.05"}, {"s": "s > 2"}]
        spread.put_units(arguments, wanted, rng, dtype)
        got = [env["r"] for env in spread.unit_envs(arguments)]
        assert len(set(got[0])) == 1
        assert 0 < AGGREGATES["std"](got[1]) <= 0.05 and AGGREGATES["std"](got[2]) > 2
        assert all(-10 <= x <= 10 for group in got for x in group)
