"""The students' experiment runner and the SFT checkpoint command."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

from autograder.lab.paths import ASSIGNMENT, REFERENCE, ROOT


def run_experiments(*args: str, cwd) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(ASSIGNMENT / "run_experiments.py"), *args], cwd=cwd,
                          capture_output=True, text=True, timeout=600)


def test_starter_fails_with_a_message_naming_the_missing_function(tmp_path):
    done = run_experiments(cwd=tmp_path)
    assert done.returncode != 0
    assert "rlhf.bradley_terry_loss is not implemented yet" in done.stderr


@pytest.mark.slow
def test_reference_shows_gold_gain_with_kl_and_the_blind_spot_without(tmp_path):
    done = run_experiments("--solution", str(REFERENCE), "--runs", "kl,no-kl", "--out", str(tmp_path / "plots"),
                           cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("policy")) + 1
    table = {}
    for line in lines[start:]:
        if not line.strip():
            break
        table[line.split()[0]] = [float(x) for x in line.split()[1:]]
    rm, gold, malformed = 0, 1, 2
    assert table["kl"][gold] - table["SFT"][gold] >= 0.35 and table["kl"][malformed] <= 0.05
    assert table["no-kl"][rm] > table["kl"][rm] + 1.0            # the RM is exploited...
    assert table["no-kl"][gold] < table["SFT"][gold] - 0.5       # ...while gold collapses
    assert table["no-kl"][malformed] >= 0.5
    assert sorted(p.name for p in (tmp_path / "plots").iterdir()) == \
        ["gold.png", "kl.png", "malformed.png", "rm_score.png"]


@pytest.mark.slow
def test_sft_checkpoint_rebuilds_bit_for_bit():
    """build-sft is seeded: two rebuilds are identical bit for bit, and equal the shipped checkpoint when it was
    built with the same kernels. The shipped file predates the pinned kernels (autograder/lab/arithmetic.py: the
    kernels a CPU chose differed by instruction set, and 350 training steps amplify the last bit), so a rebuild
    differs from it: reported as an expected failure with the rebuild's digest, never hidden. Rebuilt pinned,
    its bits should be the same on every AVX2 machine (what tests/test_arithmetic.py shows of a small training)."""
    runs = [subprocess.run([sys.executable, "-m", "autograder", "build-sft", "--check"], cwd=ROOT,
                           capture_output=True, text=True, timeout=300) for _ in range(2)]
    digests = [re.search(r"sha256 ([0-9a-f]+)", r.stdout).group(1) for r in runs]
    assert digests[0] == digests[1], [r.stdout for r in runs]
    if "matches the rebuild" not in runs[0].stdout:
        pytest.xfail(f"assignment/sft.pt was built before the kernels were pinned (rebuild sha256 {digests[0]})")
    assert runs[0].returncode == 0, runs[0].stdout + runs[0].stderr
