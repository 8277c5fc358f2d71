"""grading.yaml is the one source of points and visibility, and it matches the registered tests."""

from __future__ import annotations

from collections import defaultdict

from autograder import checks, config
from training import CONTRACT


def test_every_check_has_points_and_every_entry_a_check():
    cfg = config.load()
    registry = checks.load_all()
    unit_tests = {t for t in cfg.tests if not t.startswith("e2e.")}
    assert unit_tests == set(registry), "grading.yaml `tests:` and the registered checks differ"


def test_each_part_is_worth_20_points_and_covers_its_functions():
    cfg = config.load()
    points = defaultdict(float)
    for spec in cfg.tests.values():
        points[spec.id.split(".")[0]] += spec.points
    assert dict(points) == {"rm_loss": 20, "gae": 20, "ppo_clip": 20, "kl": 20, "e2e": 20}
    assert sorted(fn for fns in cfg.parts.values() for fn in fns) == sorted(CONTRACT)


def test_checks_call_only_their_own_part_functions():
    cfg = config.load()
    for check in checks.load_all().values():
        assert set(check.functions) <= set(cfg.parts[check.part]), check.id


def test_visible_tests_are_reference_free_and_public_checks_are_visible():
    cfg = config.load()
    for check in checks.load_all().values():
        public = check.run.__module__.startswith("autograder.checks.public")
        assert public == (cfg.tests[check.id].visibility == "visible"), check.id


def test_e2e_tests_name_real_parts():
    cfg = config.load()
    for name, spec in cfg.e2e.items():
        assert set(spec["parts"]) <= set(cfg.parts), name
        assert spec.get("lane", 0) in (0, 1)
