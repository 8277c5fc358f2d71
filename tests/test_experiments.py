"""The students' experiment runner and the SFT checkpoint command."""

from __future__ import annotations

import subprocess
import sys

import pytest

from autograder.paths import ASSIGNMENT, REFERENCE, ROOT


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
    done = subprocess.run([sys.executable, "-m", "autograder", "build-sft", "--check"], cwd=ROOT,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "matches the rebuild" in done.stdout
