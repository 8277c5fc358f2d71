"""The student bundle, unpacked into an empty folder, runs its public tests and self-check on its own.

The interpreter is a fresh virtual environment that sees this environment's third-party packages
(torch, hypothesis, ...), hard-linked into it, but NOT the repository's editable install: the bundle's
own `autograder/` is the only grading engine it can import, so a module missing from the bundle fails
here. (Installing torch into a brand-new venv takes minutes; the README's `pip install -r
requirements.txt` path is checked with `pip install --no-index`, which must find every pin satisfied.)
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

from autograder.bundling.pipeline import build_release
from autograder.lab.paths import REFERENCE

pytestmark = pytest.mark.slow


def fresh_python(folder: Path) -> Path:
    """A new venv (no pip) holding this interpreter's third-party packages, hard-linked, minus the repository.

    Hard links (not a .pth line) because the sandbox shows the child only the venv's own folder.
    """
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(folder)], check=True)
    python = folder / "bin" / "python"
    site = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          check=True, capture_output=True, text=True).stdout.strip()
    ours = Path(sysconfig.get_paths()["purelib"])
    shutil.copytree(ours, site, copy_function=os.link, dirs_exist_ok=True,
                    ignore=shutil.ignore_patterns("__editable__*", "llm_labs_autograder*", "__pycache__"))
    return python


def run(python: Path, args: list[str], cwd: Path) -> subprocess.CompletedProcess:
    env = {"PATH": f"{python.parent}:/usr/bin:/bin", "HOME": str(cwd), "LANG": "C.UTF-8"}
    return subprocess.run([str(python), *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=900)


@pytest.fixture(scope="module")
def lab(tmp_path_factory) -> tuple[Path, Path]:
    """(the unpacked lab12/ folder, the fresh interpreter)."""
    base = tmp_path_factory.mktemp("student")
    built = build_release(base / "out")
    with zipfile.ZipFile(built["student"]) as archive:
        archive.extractall(base / "unpacked")
    return base / "unpacked" / "lab12", fresh_python(base / "venv")


def test_the_fresh_interpreter_imports_the_bundled_engine_only(lab):
    folder, python = lab
    found = run(python, ["-c", "import autograder, torch; print(autograder.__file__)"], folder)
    assert found.returncode == 0, found.stderr
    assert Path(found.stdout.strip()).resolve() == (folder / "autograder" / "__init__.py").resolve()
    elsewhere = run(python, ["-c", "import autograder"], folder.parent)
    assert elsewhere.returncode != 0, "the repository's autograder leaks into the fresh venv"


def test_requirements_are_pinned_and_satisfied(lab):
    folder, python = lab
    pip = subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install", "--no-index",
                          "--dry-run", "-r", str(folder / "requirements.txt")], capture_output=True, text=True)
    assert pip.returncode == 0, pip.stdout + pip.stderr
    assert "Would install" not in pip.stdout, pip.stdout


def test_starter_fails_clearly(lab):
    folder, python = lab
    tests = run(python, ["-m", "pytest", "-q", "-p", "no:cacheprovider", "tests"], folder)
    assert tests.returncode == 1, tests.stdout[-3000:]
    assert "NotImplementedError" in tests.stdout and " passed" not in tests.stdout.splitlines()[-1]
    check = run(python, ["self_check.py"], folder)
    assert check.returncode == 1, check.stdout + check.stderr
    assert "[FAIL]" in check.stdout and "is not implemented yet" in check.stdout
    assert "[PASS]" not in check.stdout
    assert "When you submit" in check.stdout and "the hidden and end-to-end tests run" in check.stdout
    assert (folder / "self_check_report" / "report.html").is_file()


def test_reference_dropped_in_passes(lab, tmp_path):
    folder, python = lab
    copy = tmp_path / "lab12"
    shutil.copytree(folder, copy)
    shutil.copy(REFERENCE, copy / "rlhf.py")
    tests = run(python, ["-m", "pytest", "-q", "-p", "no:cacheprovider", "tests"], copy)
    assert tests.returncode == 0, tests.stdout[-3000:]
    check = run(python, ["self_check.py"], copy)
    assert check.returncode == 0, check.stdout + check.stderr
    assert "[FAIL]" not in check.stdout and "[PASS]" in check.stdout
    total = next(line for line in check.stdout.splitlines() if line.startswith("total"))
    got, top = (float(x) for x in total.split()[1::2][:2])
    assert got == top > 0, total
