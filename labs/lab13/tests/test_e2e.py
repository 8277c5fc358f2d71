"""The e2e tests on their graded seed: the reference passes each, a null that trains nothing fails each, and a
mistake costs points only in the tests of its own part (the reference stands in for the others)."""

from __future__ import annotations

import types

import pytest
from labs.lab13.grading.local import run_e2e

from labs.lab13.grading import world
from labs.lab13.grading.bank import load_all, submission_source
from labs.lab13.grading.nulls import NULLS, null_module

pytestmark = pytest.mark.slow


def test_reference_passes_every_e2e_test():
    reference = world.load_reference()
    results = run_e2e(reference, reference)
    assert {name: r[2] for name, r in results.items() if r[0] == 0} == {}


@pytest.mark.parametrize("name", ["zeros_graph", "echo_first"])
def test_null_fails_every_e2e_test(name):
    results = run_e2e(null_module(NULLS[name]), world.load_reference())
    assert [n for n, r in results.items() if r[0] > 0] == []


def test_a_dpo_mistake_costs_only_the_dpo_tests():
    entry = next(e for e in load_all() if e.id == "dpo.chosen_rejected_swapped")
    module = types.ModuleType(entry.id)
    exec(compile(submission_source(entry), entry.id, "exec"), module.__dict__)  # noqa: S102 - trusted bank text
    results = run_e2e(module, world.load_reference(), ("dpo_gold", "ipo_gold"))
    assert results["dpo_gold"][0] == 0 and results["ipo_gold"][0] > 0
