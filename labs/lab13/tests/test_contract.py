"""The contract's single source: the starter is generated from the reference, which gets every check's points;
the starter and every null get none; the world files are Lab 12's, reused."""

from __future__ import annotations

import pytest
from labs.lab13.grading.local import config, run_checks

from autograder.starter import strip_solutions
from labs.lab13.grading import world
from labs.lab13.grading.nulls import NULLS, null_module


def test_starter_is_generated_from_the_reference():
    assert world.STARTER.read_text() == strip_solutions(world.REFERENCE.read_text())


def test_grading_yaml_declares_every_function_once():
    cfg = config()
    declared = [fn for fns in cfg["parts"].values() for fn in fns]
    assert sorted(declared) == sorted(cfg["contract"]) and len(declared) == len(set(declared))
    reference = world.load_reference()
    assert all(callable(getattr(reference, fn)) for fn in declared)


def test_every_registered_check_has_points_and_the_reverse():
    from labs.lab13.grading.checks import load_all
    assert set(load_all()) == set(config()["tests"])


def test_every_registered_e2e_test_is_configured_with_exactly_its_keys():
    from labs.lab13.grading.e2e import REGISTRY
    cfg = config()
    assert set(REGISTRY) == set(cfg["e2e"])
    for name, test in REGISTRY.items():
        assert set(cfg["e2e"][name]) - {"points", "parts", "seed"} == set(test.settings), name


def test_world_is_lab12s_files():
    for name in ("tinylm.py", "lab_helpers.py", "sft.pt"):
        assert (world.SHARED_WORLD / name).exists()
        assert not (world.ASSIGNMENT / name).exists()


def test_reference_gets_every_point_and_the_starter_none():
    reference = world.load_reference()
    full = run_checks(reference, reference)
    assert all(earned == points for earned, points, _, _ in full.values()), full
    starter = world.load_module(world.STARTER, "starter")
    assert sum(r[0] for r in run_checks(starter, reference, diagnose=False).values()) == 0


def test_public_checks_need_no_reference():
    reference = world.load_reference()
    public = run_checks(reference, None)
    assert public and all(r[0] == r[1] for r in public.values())


@pytest.mark.parametrize("name", sorted(NULLS))
def test_null_scores_zero_in_every_check(name):
    reference = world.load_reference()
    results = run_checks(null_module(NULLS[name]), reference, diagnose=False)
    assert [cid for cid, r in results.items() if r[0]] == []


def test_contract_parameters_are_the_references_signatures():
    import inspect
    reference = world.load_reference()
    for fn, spec in config()["contract"].items():
        assert list(inspect.signature(getattr(reference, fn)).parameters) == spec["parameters"], fn


def test_lab_registers_its_hooks_with_the_engines_lab_type():
    from autograder import registry
    from labs.lab13.grading import lab

    class Recorder:
        Lab = registry.Lab
        registered: list = []

        @classmethod
        def register_lab(cls, found):
            cls.registered.append(found)

    lab.register(Recorder)
    (found,) = Recorder.registered
    assert found.name == "lab13" and set(found.probe_inputs()) == set(config()["contract"])
    reference = world.load_reference()
    parts = found.make_parts({fn: getattr(reference, fn) for fn in config()["contract"]})
    for fn, args in found.probe_inputs().items():
        getattr(parts, fn)(*args)
