"""Every lab's reference over its declared domain (tier slow): each check of the lab runs on the reference itself
with DRAWS hypothesis examples per property check, drawn by the check's own strategy (float32 and float64, every
shape and value it draws; random from a fixed seed: fresh, and the same in every run), then its chosen
examples; rejections and the public checks' fresh twins as in a grade
(autograder/validity/domain.py). The reference must meet every expectation, rejection and property. Measured
cost: docs/validity.md."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from autograder.lab.paths import ROOT

LABS = {"lab12": ROOT, "lab13": ROOT / "labs" / "lab13", "toylab": ROOT / "tests" / "toylab"}
DRAWS = 1000


def domain(lab: Path, *args: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "autograder.validity.domain", *args], cwd=ROOT, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            env={**os.environ, "AUTOGRADER_LAB": str(lab)})


@pytest.mark.slow
def test_the_reference_meets_every_check_over_its_domain():
    """The three labs at once (one process each: CI's second core would idle otherwise)."""
    runs = {lab: domain(folder, "--draws", str(DRAWS)) for lab, folder in LABS.items()}
    failed = []
    for lab, run in runs.items():
        out, err = run.communicate(timeout=3600)
        if run.returncode != 0 or f"{DRAWS} draws per property check, 0 failed" not in out:
            failed.append(f"{lab}: exit {run.returncode}\n{out[-4000:]}{err[-1500:]}")
    assert not failed, "\n".join(failed)


DRAWS_ALONE = """
import dataclasses
from autograder.lab import bank, registry
from autograder.checks import examples
from autograder.lab.reference import load_reference
from autograder.validity.domain import hold
from autograder.checks.local import module_from_source
lab = registry.lab()
registry.register_lab(dataclasses.replace(lab, chosen_examples=lambda function: []))
examples.SHIPPED = {}  # the fresh draws alone: no chosen example (they now hold such groups on purpose)
entry = next(e for e in bank.load_all() if e.id == "group_adv.equal_group_rounding")
print(sorted(hold(module_from_source(bank.submission_source(entry)), load_reference(), %d, part="group_adv")))
"""


@pytest.mark.slow
def test_the_draws_alone_find_lab13s_old_reference_defect():
    """Lab 13's group_advantages before its fix (kept in the bank as group_adv.equal_group_rounding): a float32 group
    of equal rewards whose mean rounds away from them got ~0.3 on every row, where the docstring says exactly 0.
    The fresh draws find it without the chosen examples (1000 derandomised ones, a grade's kind, did not)."""
    done = subprocess.run([sys.executable, "-c", DRAWS_ALONE % DRAWS], cwd=ROOT, capture_output=True, text=True,
                          timeout=3600, env={**os.environ, "AUTOGRADER_LAB": str(LABS["lab13"])})
    assert done.returncode == 0, done.stderr[-3000:]
    assert "'group_adv.equal_groups_zero'" in done.stdout and "'group_adv.matches_reference'" in done.stdout


@pytest.mark.slow
@pytest.mark.parametrize("variant", ["group_adv.loop_over_groups", "group_adv.bessel_by_hand"])
def test_the_docstrings_formula_in_float32_passes(variant):
    """The docstring's formula computed in the rewards' dtype (mean, then std, then the guard for equal groups)
    meets the checks, whose expectations are exact (float64) and whose tolerance allows for float32 rounding."""
    run = domain(LABS["lab13"], "--draws", "300", "--entry", variant)
    out, _ = run.communicate(timeout=3600)
    assert run.returncode == 0 and "300 draws per property check, 0 failed" in out, out[-6000:]
