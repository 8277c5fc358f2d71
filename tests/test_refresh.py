"""`python -m autograder refresh`: the lab's shipped data files, each declared once (registry.Lab.data_files)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from autograder.lab import registry
from autograder.lab.paths import LAB, ROOT


@pytest.mark.parametrize("lab", [".", "labs/lab13", "tests/toylab"])
def test_every_shipped_data_file_is_current(lab):
    """What a grade reads is what the code computes today: `refresh --check` exits 0 (it writes nothing), for
    every lab: its own data files and the e2e outcomes of its bank's mistakes."""
    run = subprocess.run([sys.executable, "-m", "autograder", "--lab", lab, "refresh", "--check"], cwd=ROOT,
                         capture_output=True, text=True)
    assert run.returncode == 0, run.stdout + run.stderr


def test_the_data_files_are_the_labs_and_in_its_folder():
    files = [d.path for d in registry.lab().data_files]
    assert files and len(set(files)) == len(files)
    assert all(path.is_relative_to(LAB) and path.exists() for path in files)
