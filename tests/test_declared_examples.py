"""A worked example's `expect_grad` (grading.yaml `contract.F.examples`): the derived public check compares a scalar
answer's gradient to the named parameters with the hand-computed one (autograder/checks/derived.py), here in float64
(`dtype`), in a copy of the toy lab, through the self-check a student runs."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

from autograder.lab.paths import ROOT

TOYLAB = ROOT / "tests" / "toylab"
GRAD = "expect: 2, expect_grad: {x: [[0.3333333333, 0.3333333333, 0], [0.3333333333, 0, 0]]}, dtype: float64,"


def self_check(lab: Path, submission: Path, out: Path) -> tuple[float, str]:
    done = subprocess.run([sys.executable, "-m", "autograder", "--lab", str(lab), "grade", str(submission),
                           "--self-check", "--out", str(out)], capture_output=True, text=True, timeout=600, cwd=ROOT)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads((out / "results.json").read_text())["score"], (out / "report.md").read_text()


def test_a_worked_examples_gradient_is_checked(tmp_path):
    lab = tmp_path / "lab"
    shutil.copytree(TOYLAB, lab, ignore=shutil.ignore_patterns("__pycache__"))
    yaml_path = lab / "grading.yaml"
    yaml_path.write_text(yaml_path.read_text().replace("expect: 2,", GRAD, 1))
    score, _ = self_check(lab, lab / "solutions" / "toy.py", tmp_path / "ref")
    assert score == 20
    wrong = tmp_path / "toy.py"  # the right value, no gradient through it: only the gradient tells
    wrong.write_text((lab / "solutions" / "toy.py").read_text().replace(
        "return (x * mask).sum() / mask.sum()", "return (x.detach() * mask).sum() / mask.sum() + 0 * x.sum()"))
    score, report = self_check(lab, wrong, tmp_path / "wrong")
    assert score == 10 and "d masked_mean / d x differs from the hand-computed one" in report
