"""The kinds a declared domain is written in (autograder/lab/domain_spec.py), and every way the engine draws from one
(autograder/checks/domains.py: probe inputs and fresh twins; checks/declared.py: hypothesis's draws and the chosen
examples): each draw stays inside what is declared, a ranged tensor within its range and a prefix-mask a prefix."""

from __future__ import annotations

import pytest
import torch
from hypothesis import HealthCheck, given, settings

from autograder.checks import declared, domains
from autograder.lab.domain_spec import Parameter

SPECS = {"logp": "tensor B T in -40..0", "mask": "prefix-mask B T", "x": "tensor B T", "bits": "mask B T",
         "scale": "float 0.5..4", "k": "int 1..8", "beta": "choice 0.01 1 10"}
PARAMS = [Parameter.parse(name, spec) for name, spec in SPECS.items()]


@pytest.mark.parametrize("spec, problem", [
    ("tensor B T in 3..1", "give its range LO..HI, e.g. `tensor B T in -40..0`"),
    ("tensor B T in -40", "give its range LO..HI"),
    ("tensor in 0..1", "give its dimensions, e.g. `tensor B T`"),
    ("prefix-mask", "give its dimensions, e.g. `prefix-mask B T`"),
    ("float 4..0.5", "give its range LO..HI, e.g. `float 1..4`"),
    ("int a..b", "give its range LO..HI, e.g. `int 1..4`"),
    ("matrix B T", "the kind must be one of tensor, mask, prefix-mask, float, int, size, bool, choice"),
])
def test_a_malformed_declaration_says_how_to_write_it(spec, problem):
    with pytest.raises(ValueError, match=problem.replace("(", r"\(").replace(")", r"\)").replace(".", r"\.")):
        Parameter.parse("p", spec)


def test_a_choice_reads_numbers_as_numbers_and_keeps_words():
    p = Parameter.parse("p", "choice 0.1 5 -2 1e-3 mean inf True")
    assert p.choice_values() == [0.1, 5, -2, 0.001, "mean", "inf", "True"]
    assert [type(v) for v in p.choice_values()[:2]] == [float, int]
    assert p.choices == ("0.1", "5", "-2", "1e-3", "mean", "inf", "True")  # the factor's levels, as written


def test_the_kinds_parse_to_what_they_declare():
    logp, mask, x, bits = PARAMS[:4]
    assert (logp.kind, logp.dims, logp.ranged, logp.low, logp.high) == ("tensor", ("B", "T"), True, -40.0, 0.0)
    assert (mask.kind, mask.prefix) == ("mask", True) and (bits.kind, bits.prefix) == ("mask", False)
    assert not x.ranged


def within(args: tuple) -> None:
    """The arguments of one call of PARAMS obey every declaration."""
    logp, mask, x, bits, scale, k, beta = args
    assert logp.shape == mask.shape == x.shape == bits.shape
    assert bool(((logp >= -40) & (logp <= 0)).all())
    lengths = mask.sum(-1, keepdim=True)
    assert bool((lengths >= 1).all()), "a row of a prefix-mask holds at least one 1"
    assert torch.equal(mask, (torch.arange(mask.shape[-1]) < lengths).to(mask.dtype)), "its 1s come first"
    assert bool(((bits == 0) | (bits == 1)).all()) and bool((bits[..., 0] == 1).all())
    assert 0.5 <= scale <= 4 and 1 <= k <= 8
    assert beta in (0.01, 1, 10) and not isinstance(beta, str)  # a choice of numbers gives numbers


@pytest.fixture(autouse=True)
def declared_params(monkeypatch):
    """The contract function "f" declares PARAMS (hypothesis builds its draws lazily, inside the test)."""
    monkeypatch.setattr(declared, "parameters", lambda function: PARAMS)
    monkeypatch.setattr(domains, "parameters", lambda function: PARAMS)
    monkeypatch.setattr(declared, "declared_for", lambda function: None)  # no per-unit factors (test_units.py)


def test_probe_inputs_and_twins_stay_in_the_declared_domain():
    for seed in range(200):
        args = domains.draw_arguments(PARAMS, f"f:{seed}")
        within(args)
        fresh, _ = domains.twin("f", args, {}, True, seed)
        within(fresh)
        assert torch.equal(fresh[1], args[1]) and torch.equal(fresh[3], args[3])  # a twin keeps the masks


def test_the_chosen_examples_stay_in_the_declared_domain():
    examples = declared.chosen("f")
    assert len(examples) >= 4
    for args in examples:
        within(args)
    assert {bool(a[1].all()) for a in examples} == {True, False}  # prefix-masks with and without padding
    beta = PARAMS[6]  # each word of a choice is a level the examples reach, read back from the number drawn
    assert {declared._parameter_level(beta, {"beta": a[6]}) for a in examples} == set(beta.choices)


@settings(max_examples=200, deadline=None, suppress_health_check=list(HealthCheck), database=None)
@given(data=declared.declared_call("f", tuple(SPECS.values()), "None"))
def test_hypothesis_draws_stay_in_the_declared_domain(data):
    within(data)
