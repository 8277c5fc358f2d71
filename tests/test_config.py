"""grading.yaml is the one source of points and visibility, it matches the registries, and its reader is strict."""

from __future__ import annotations

import dataclasses
import re
from collections import defaultdict

import pytest
from training import CONTRACT

from autograder import checks
from autograder.judge import e2e
from autograder.lab import config
from autograder.lab.paths import ROOT


def test_every_check_has_points_and_every_entry_a_check():
    cfg = config.load()
    registry = checks.load_all()
    unit_tests = {t for t in cfg.tests if not t.startswith("e2e.")}
    assert unit_tests == set(registry), "grading.yaml `tests:` and the registered checks differ"


def test_e2e_registry_is_grading_yaml():
    cfg = config.load()
    registry = e2e.load_all()
    assert set(cfg.e2e) == set(registry)
    e2e.check_config(cfg)  # each test has exactly its declared keys
    for name, test in registry.items():
        assert test.thresholds <= set(test.settings), name
        assert test.shares is None or test.shares in registry, name
        assert set(test.plotted) <= {"rm_score", "gold", "kl", "malformed", "accuracy"}, name


def test_each_part_is_worth_20_points_and_covers_its_functions():
    cfg = config.load()
    points = defaultdict(float)
    for spec in cfg.tests.values():
        points[spec.id.split(".")[0]] += spec.points
    assert dict(points) == {"rm_loss": 20, "gae": 20, "ppo_clip": 20, "kl": 20, "e2e": 20}
    assert cfg.functions == CONTRACT


def test_checks_call_only_their_own_part_functions():
    cfg = config.load()
    for check in checks.load_all().values():
        assert set(check.functions) <= set(cfg.parts[check.part]), check.id


def test_public_checks_are_exactly_those_with_visible_inputs():
    cfg = config.load()
    for check in checks.load_all().values():
        public = check.run.__module__.startswith("lab12.checks.public")
        assert public == (cfg.tests[check.id].inputs_visibility == "visible"), check.id


def test_inputs_are_never_shown_before_the_outcome():
    order = config.VISIBILITIES.index
    for spec in config.load().tests.values():
        assert order(spec.inputs_visibility) <= order(spec.visibility), spec.id


@pytest.mark.parametrize("edit, message", [
    (lambda s: s.replace("  memory_mb:", "  memroy_mb:"), r"grading.yaml:\d+: limits.memroy_mb: unknown key"),
    (lambda s: s.replace("max_examples: 40", "max_examples: forty"), r"grading.yaml:\d+: hypothesis.max_examples: "
                                                                     r"expected int"),
    (lambda s: s.replace("default_visibility: visible", "default_visibility: public"), r"default_visibility: must be"),
    (lambda s: s.replace("    eval_prompts: 512         # fresh", "    eval_prompt: 512         # fresh"),
     r"grading.yaml:\d+: e2e.kl_penalty.eval_prompt: unknown key"),
    (lambda s: s.replace('title: "Lab 12: RLHF on a tiny transformer"\n', ""), r"missing key 'title'"),
    (lambda s: s.replace("  memory_mb: 2048 ", "  memory_mb: lots "),
     r"grading.yaml:\d+: limits.memory_mb: expected int"),
])
def test_bad_keys_are_refused_with_file_and_line(tmp_path, edit, message):
    text = (ROOT / "grading.yaml").read_text()
    bad = tmp_path / "grading.yaml"
    bad.write_text(edit(text))
    assert bad.read_text() != text
    e2e.load_all()
    with pytest.raises(config.ConfigError, match=message):
        e2e.check_config(config.load(bad))


def test_every_declared_key_is_documented():
    docs = (ROOT / "docs" / "grading-yaml.md").read_text()
    documented = set(re.findall(r"`([a-z_0-9]+)`", docs))
    missing = [k for k in config.declared_keys() if k.rsplit(".", 1)[-1] not in documented]
    assert not missing, f"docs/grading-yaml.md does not document {missing}"


def test_a_lab_writes_only_what_it_decides(tmp_path):
    """Every section but the lab's own facts has engine defaults (docs/grading-yaml.md): a grading.yaml without
    hypothesis, calibration, limits, batch or visibilities reads, each key at its documented default, and a
    section given in part keeps the defaults of the keys it leaves out."""
    head = (ROOT / "grading.yaml").read_text().split("\n# `python -m autograder calibrate`")[0]
    text = "\n".join(line for line in head.splitlines()
                     if not line.startswith(("default_visibility", "default_inputs_visibility")))
    text = text.split("# Property tests")[0] + "tests:" + text.split("\ntests:", 1)[1]
    (tmp_path / "grading.yaml").write_text(text + "\nlimits: {memory_mb: 700}\n")
    cfg = config.load(tmp_path / "grading.yaml")
    assert cfg.hypothesis == config.Hypothesis() and cfg.calibration == config.Calibration()
    assert cfg.batch == config.Batch() and cfg.limits == dataclasses.replace(config.Limits(), memory_mb=700)
    assert cfg.default_visibility == "visible" and cfg.default_inputs_visibility == "after_due_date"
