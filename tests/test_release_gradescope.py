"""The Gradescope autograder, unpacked into Gradescope's layout at /autograder, grades a submission.

/autograder is a temporary folder bound there in a private mount namespace (`unshare -m`, root
only), so nothing outside the test sees it:

    /autograder/source/        autograder.zip unpacked (setup.sh, run_autograder, the grader)
    /autograder/run_autograder copied there, as Gradescope does
    /autograder/submission/    the student's upload
    /autograder/results/       results.json must appear here

setup.sh is not run (it installs packages): run_autograder falls back to `python3` from PATH, which is
a fresh venv holding this environment's packages but not the repository (see test_release_bundle).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from docker_level import gradescope_layout
from test_release_bundle import fresh_python

from autograder.bundling.pipeline import build_release
from autograder.lab import config
from autograder.lab.paths import REFERENCE, STARTER

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("unshare"),
                                 reason="binding a folder at /autograder needs root and unshare")]
MOUNT = Path("/autograder")


@pytest.fixture(scope="module")
def setup(tmp_path_factory):
    """(autograder.zip, the fresh venv's bin folder); makes the empty /autograder mount point if needed."""
    base = tmp_path_factory.mktemp("gradescope")
    built = build_release(base / "out")
    python = fresh_python(base / "venv")
    created = not MOUNT.exists()
    MOUNT.mkdir(exist_ok=True)
    yield built["gradescope"], python.parent
    if created:
        MOUNT.rmdir()


def run_autograder(setup, tmp_path: Path, submission: Path, only: str = "",
                   beside: dict[str, str] | None = None) -> dict:
    """Gradescope's run of `submission` (uploaded with the files `beside` it: name -> text)."""
    archive, bin_dir = setup
    root = gradescope_layout(archive, tmp_path / "autograder", submission.name, submission.read_bytes())
    for name, text in (beside or {}).items():
        (root / "submission" / name).write_text(text)
    env = {"PATH": f"{bin_dir}:/usr/sbin:/usr/bin:/sbin:/bin", "HOME": str(tmp_path), "LANG": "C.UTF-8"}
    if only:
        env["AUTOGRADER_ONLY"] = only
    script = f"mount --make-rprivate / && mount --bind {root} {MOUNT} && exec {MOUNT}/run_autograder"
    done = subprocess.run(["unshare", "-m", "sh", "-c", script], env=env, capture_output=True, text=True,
                          timeout=1800)
    assert done.returncode == 0, done.stdout + done.stderr
    assert not list(MOUNT.iterdir()), "the bind mount leaked out of its namespace"
    results = root / "results" / "results.json"
    assert results.is_file(), done.stdout + done.stderr + (root / "results" / "grader-errors.txt").read_text()
    return json.loads(results.read_text())


def test_the_zip_grades_the_reference_with_full_marks(setup, tmp_path):
    """The whole grade, end-to-end training included (about 3 minutes on a loaded 2-core machine)."""
    results = run_autograder(setup, tmp_path, REFERENCE)
    tests = results["tests"]
    assert {t["tags"][0] for t in tests} == {"rm_loss", "gae", "ppo_clip", "kl", "e2e"}
    assert [t["name"] for t in tests if t["status"] != "passed"] == []
    assert results["score"] == sum(t["max_score"] for t in tests) > 0
    public = {tid for tid, spec in config.load().tests.items() if spec.inputs_visibility == "visible"}
    ran = {t["name"].split(":")[0] for t in tests}
    assert ran == set(config.load().tests) and ran > public, "the hidden tests ran too"


def test_the_zip_grades_the_starter_with_zero_and_says_why(setup, tmp_path):
    results = run_autograder(setup, tmp_path, STARTER)
    assert results["score"] == 0
    assert results["tests"] and all(t["status"] == "failed" for t in results["tests"])
    assert any(t["tags"][0] == "e2e" for t in results["tests"]), "the end-to-end tests are part of the grade"
    assert "not implemented yet" in results["tests"][0]["output"]


def test_the_zip_grades_a_notebook_upload(setup, tmp_path):
    from test_notebook import notebook_of
    notebook = notebook_of(REFERENCE.read_text(), tmp_path / "rlhf.ipynb")
    results = run_autograder(setup, tmp_path, notebook, only="gae")
    assert results["tests"] and all(t["status"] == "passed" for t in results["tests"])


def test_no_submission_gives_a_readable_zero(setup, tmp_path):
    empty = tmp_path / "notes.txt"
    empty.write_text("forgot the code")
    results = run_autograder(setup, tmp_path, empty)
    assert results["score"] == 0 and "could not grade this submission" in results["output"]


def test_the_upload_is_graded_by_the_file_rule(setup, tmp_path):
    """solution.py beside a copy of lab_helpers.py: solution.py (it defines the functions), as `grade-all` does;
    two files defining them: nothing graded, and the student reads why."""
    from autograder.lab.paths import ASSIGNMENT
    solution = tmp_path / "solution.py"
    solution.write_text(REFERENCE.read_text())
    results = run_autograder(setup, tmp_path / "one", solution, only="gae",
                             beside={"lab_helpers.py": (ASSIGNMENT / "lab_helpers.py").read_text()})
    assert results["tests"] and all(t["status"] == "passed" for t in results["tests"]), results
    old = tmp_path / "a_old.py"
    old.write_text(STARTER.read_text())
    results = run_autograder(setup, tmp_path / "two", old, only="gae", beside={"z_final.py": REFERENCE.read_text()})
    assert results["score"] == 0 and results["output"] == (
        "The autograder could not grade this submission: your upload holds no rlhf.py, and 2 files define contract "
        "functions (a_old.py: 7 of 7, z_final.py: 7 of 7): rename the one to grade to rlhf.py.")
