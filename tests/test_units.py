"""Per-unit factors declared in grading.yaml (`contract.F.units`: autograder/lab/unit_spec.py reads them,
autograder/checks/units.py draws them): a malformed declaration is refused with its file and line; a level is the
set of values its condition names; the chosen examples put each unit exactly at its levels, on a grid where sums are
exact in float32, reach every pair of levels no interval of the domain excludes, and never ask for a unit no input
can hold. Lab 13's dpo_loss and ipo_loss are the declared functions under test."""

from __future__ import annotations

import math
import re

import pytest
import torch

from autograder.checks import declared, units
from autograder.checks import factors as fx
from autograder.lab import config
from autograder.lab.unit_spec import parse_factor

PAIR = ("policy_chosen", "policy_rejected", "ref_chosen", "ref_rejected")


@pytest.mark.parametrize("edit, message", [
    (lambda s: s.replace("      along: P     # a unit: one pair", "      along: Q"),
     r"contract.dpo_loss.units.along: 'Q': declare a domain with parameters `tensor Q`"),
    (lambda s: s.replace("expression: ref_chosen - ref_rejected,", "expression: ref_chosen - ref_rejeted,"),
     r"'ref_rejeted' is not a parameter of the unit's size or a setting"),
    (lambda s: s.replace("set_by: ref_chosen,", "set_by: beta,"),
     r"set_by: 'beta' is not a parameter of the unit's size in its expression"),
    (lambda s: s.replace("levels: [reference = 0,", "levels: [reference,"),
     r"'reference' is not a condition on reference"),
    (lambda s: s.replace("levels: [z = 0,", "levels: [2 * z = 0,"),
     r"compare z, \|z\| or \|z - E\| with numbers"),
    (lambda s: s.replace("levels: [z = 0,", "levels: [z = ref_chosen,"),
     r"'ref_chosen' is not a setting"),
    (lambda s: s.replace("expression: beta * ((policy_chosen", "expression: beta ** ((policy_chosen"),
     r"only \+ - \* / are operators here"),
    (lambda s: s.replace("expression: beta * ((policy_chosen", "expression: sin(beta) * ((policy_chosen"),
     r"only \|E\|, log\(E\), exp\(E\), mean\(P\) and std\(P\) are functions here"),
    (lambda s: s.replace("policy_chosen - ref_chosen) - (policy_rejected - ref_rejected)), set_by: policy_chosen",
                         "policy_chosen - ref_chosen) - (policy_rejected - ref_rejected)), set_by: ref_chosen"),
     r"z.set_by: 'ref_chosen' is in reference's expression, set before"),
    # groups (group_advantages: tests/test_groups.py)
    (lambda s: s.replace("expression: std(rewards)", "expression: std(2 * rewards)"),
     r"mean and std take a parameter's name"),
    (lambda s: s.replace("expression: std(rewards)", "expression: rewards"),
     r"'rewards': a group of entries \(`tensor L\*K`\) is read as mean\(rewards\) or std\(rewards\)"),
    (lambda s: s.replace("expression: std(rewards)", "expression: std(rewards) + std(eps)"),
     r"'eps': a group of entries"),
    (lambda s: s.replace("group_size: size G 2..8", "group_size: size G"),
     r"contract.group_advantages.domain.group_size: .*give its range LO..HI, e.g. `size G 2..8`"),
    (lambda s: s.replace("along: N     # a unit: one group", "along: G     # a unit: one group"),
     r"'G': declare a domain with parameters `tensor G`"),
    # tokens (grpo_policy_loss: tests/test_token_units.py)
    (lambda s: s.replace("along: B T   # a unit", "along: B T K   # a unit"),
     r"units.along: 'B T K': a size letter \(`P`: a unit is one index of it\) or two"),
    (lambda s: s.replace("along: B T   # a unit", "along: T B   # a unit"),
     r"units.along: 'T B': declare a domain with parameters `tensor T B`"),
    (lambda s: s.replace("A: {expression: advantages, set_by: advantages,",
                         "A: {expression: advantages * logp, set_by: advantages,"),
     r"units.factors.A: set_by: 'advantages' is one entry per row, shared by the row's units: a factor it sets "
     r"reads only such entries and the settings"),
    (lambda s: s.replace("log_ratio: {expression: logp - old_logp,", "log_ratio: {expression: exp(logp - old_logp),"),
     r"units.factors.log_ratio: set_by: 'old_logp' is inside log or exp: the engine solves for it where the value is "
     r"linear in it"),
    (lambda s: s.replace('"log(1 - clip_eps) < log_ratio < 0"', '"sin(1 - clip_eps) < log_ratio < 0"'),
     r"only \|E\|, log\(E\), exp\(E\), mean\(P\) and std\(P\) are functions here"),
])
def test_a_malformed_declaration_is_refused_with_file_and_line(tmp_path, lab13_yaml, edit, message):
    text = lab13_yaml.read_text()
    bad = tmp_path / "grading.yaml"
    bad.write_text(edit(text))
    assert bad.read_text() != text
    with pytest.raises(config.ConfigError, match=r"grading.yaml:\d+: .*" + message):
        config.load(bad)


SETTINGS = ("beta",)


@pytest.mark.parametrize("level, beta, pieces", [
    ("z = 0", 1.0, [(0.0, 0.0)]),
    ("z < -100", 1.0, [(-math.inf, -100.0)]),
    ("-100 <= z < -15", 1.0, [(-100.0, -100.0), (-100.0, -15.0)]),
    ("0 < |z| <= 1e-3", 1.0, [(-1e-3, -1e-3), (-1e-3, 0.0), (0.0, 1e-3), (1e-3, 1e-3)]),
    ("0 < z < 1 / (2 * beta)", 0.25, [(0.0, 2.0)]),
    ("|z - 1 / (2 * beta)| <= 0.5", 0.25, [(1.5, 1.5), (1.5, 2.0), (2.0, 2.0), (2.0, 2.5), (2.5, 2.5)]),
])
def test_a_level_is_where_its_condition_holds(level, beta, pieces):
    factor = parse_factor("z", "policy_chosen - ref_chosen", "policy_chosen", (level,), PAIR, SETTINGS)
    assert factor.levels[0].where_met({"beta": beta}) == pieces


def unit_levels(cfg: config.Config, function: str, args: tuple) -> dict[str, list]:
    arguments = dict(zip(cfg.contract[function].parameters, args))
    return {f.name: f.level(arguments) for f in declared.factors_of(function)[0] if f.per != "call"}


@pytest.mark.parametrize("function", ["dpo_loss", "ipo_loss"])
def test_the_chosen_examples_reach_every_possible_pair_inside_the_domain_on_the_grid(lab13, function):
    factors, impossible = declared.factors_of(function)
    reached: set = set()
    for args in declared.chosen(function):
        reached |= fx.covered_pairs(factors, dict(zip(lab13.contract[function].parameters, args)))
        for x in args[:4]:
            values = x.double()
            assert bool(((values >= -200) & (values <= 0)).all())
            assert bool((values * 2 ** 14 == (values * 2 ** 14).round()).all()), "entries on the grid 2^-14"
        assert args[4] in (0.01, 0.1, 0.5, 1, 5, 10)
    assert reached == fx.possible_pairs(factors, impossible)


@pytest.mark.parametrize("function", ["dpo_loss", "ipo_loss"])
def test_a_unit_at_a_point_level_is_there_in_float32_whatever_the_order_of_summation(lab13, function):
    """`reference = 0` and a margin of 0: exact in float32 however a submission sums the four log-probs."""
    seen = 0
    for args in declared.chosen(function):
        pc, pr, rc, rr = (x.float() for x in args[:4])
        levels = unit_levels(lab13, function, args)
        margin = levels["z" if function == "dpo_loss" else "h"]
        for i, (side, level) in enumerate(zip(levels["reference"], margin)):
            if side == "reference = 0":
                assert rc[i] - rr[i] == 0
            if level in ("z = 0", "h = 0"):
                seen += 1
                assert (pc[i] - rc[i]) - (pr[i] - rr[i]) == 0 and (pc[i] - pr[i]) - (rc[i] - rr[i]) == 0
                assert (pc[i] + rr[i]) - (pr[i] + rc[i]) == 0
    assert seen


def test_pairs_out_of_the_domains_reach_are_derived_with_their_reason(lab13):
    _, impossible = declared.factors_of("dpo_loss")
    assert impossible[(("beta", "0.01"), ("z", "z > 100"))] == "beta = 0.01: z lies in [-4, 4]"
    assert impossible[(("beta", "0.1"), ("z", "z < -100"))] == "beta = 0.1: z lies in [-40, 40]"
    assert (("beta", "0.5"), ("z", "z < -100")) not in impossible  # h < -200 is reachable
    assert (("beta", "0.1"), ("z", "-100 <= z < -15")) not in impossible


def test_a_unit_no_input_can_hold_is_never_asked_for(lab13):
    """Three levels that exclude each other though no two do: with ref_chosen = ref_rejected the margin is
    policy_chosen - policy_rejected >= -200, so beta = 0.5 cannot bring z below -100, while beta = 1 can."""
    dpo = units.declared_for("dpo_loss")
    assert dpo is not None
    wanted = {"reference": "reference = 0", "z": "z < -100"}
    rng = __import__("random").Random(0)
    assert not dpo.can_hold({"beta": 0.5}, wanted, rng) and dpo.can_hold({"beta": 1.0}, wanted, rng)
    for args in declared.chosen("dpo_loss"):
        levels = unit_levels(lab13, "dpo_loss", args)
        if args[4] == 0.5:
            assert ("reference = 0", "z < -100") not in set(zip(levels["reference"], levels["z"]))


def test_a_level_out_of_reach_says_so(lab13):
    dpo = units.declared_for("dpo_loss")
    assert dpo is not None
    args = {name: torch.zeros(2) for name in PAIR} | {"beta": 0.5}
    with pytest.raises(ValueError, match=re.escape("dpo_loss: no unit at {'reference': 'reference = 0', "
                                                   "'z': 'z < -100'} beside {'beta': 0.5}")):
        dpo.put_units(args, [{"reference": "reference = 0", "z": "z < -100"}], __import__("random").Random(0),
                  torch.float32)


def test_a_value_divided_by_zero_is_a_value_not_a_crash():
    """IEEE's answer (+-inf, nan) for numbers: a unit whose entry makes a divisor 0 has a level, or none."""
    ratio = parse_factor("r", "policy_chosen / ref_chosen", "policy_chosen", ("r > 1", "r <= 1"), PAIR, SETTINGS)
    assert ratio.unit_level({"policy_chosen": 1.0, "ref_chosen": 0.0}) == "r > 1"
    assert ratio.unit_level({"policy_chosen": -1.0, "ref_chosen": 0.0}) == "r <= 1"
    assert ratio.unit_level({"policy_chosen": 0.0, "ref_chosen": 0.0}) is None


def test_a_changed_declaration_builds_the_chosen_examples_anew(lab13, lab13_yaml, monkeypatch, tmp_path):
    """The shipped chosen examples are keyed by the function's declared domain and units: an edited declaration
    finds none shipped (examples.py), so the chosen examples of the old one are never run."""
    from autograder.checks import examples
    before = examples.chosen_key("dpo_loss")
    (tmp_path / "grading.yaml").write_text(lab13_yaml.read_text().replace("0 < |z| <= 1e-3,", "0 < |z| <= 1e-2,"))
    edited = config.load(tmp_path / "grading.yaml")
    monkeypatch.setattr(config, "current", lambda: edited)
    assert examples.chosen_key("dpo_loss") != before and before.startswith("chosen dpo_loss ")
