"""grade-all --nbgrader-db on a real nbgrader course: formgrader's total becomes the grader's full grade.

The released course, `nbgrader generate_assignment`, the reference and the starter submitted as
notebooks, `nbgrader autograde` (the visible cells only: 25 points), then grade-all with
--nbgrader-db: `nbgrader export` then shows 100 / 100 for the reference and 0 for the starter, and
nbgrader still works on the course afterwards (a second autograde).
"""

from __future__ import annotations

import csv
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from autograder.lab.paths import ROOT

pytestmark = pytest.mark.slow


BIN = Path(sys.executable).parent


def nbgrader(course: Path, *args: str) -> None:
    env = {"PATH": f"{BIN}:/usr/bin:/bin", "HOME": str(course), "LANG": "C.UTF-8"}
    done = subprocess.run([str(BIN / "nbgrader"), *args], cwd=course, env=env, capture_output=True, text=True,
                          timeout=900)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-5000:]


def submit(course: Path, student: str, solved: bool) -> None:
    """The released notebook, its solution cells filled from the source notebook when `solved`."""
    grade_id = lambda cell: cell["metadata"].get("nbgrader", {}).get("grade_id")  # noqa: E731
    source = {grade_id(c): c["source"] for c in json.loads((course / "source" / "lab12" / "rlhf.ipynb").read_text())
              ["cells"]}
    notebook = json.loads((course / "release" / "lab12" / "rlhf.ipynb").read_text())
    for cell in notebook["cells"]:
        if solved and cell["metadata"].get("nbgrader", {}).get("solution"):
            cell["source"] = source[grade_id(cell)]
    folder = course / "submitted" / student / "lab12"
    folder.mkdir(parents=True)
    (folder / "rlhf.ipynb").write_text(json.dumps(notebook))


def test_full_grades_reach_the_nbgrader_gradebook(tmp_path):
    from autograder.bundling.pipeline import build_release
    built = build_release(tmp_path / "out")
    course = tmp_path / "course"
    shutil.copytree(built["nbgrader_course"], course)
    nbgrader(course, "generate_assignment", "lab12", "--force")
    submit(course, "reference", solved=True)
    submit(course, "starter", solved=False)
    nbgrader(course, "autograde", "lab12", "--create", "--force")

    run = subprocess.run([sys.executable, "-m", "autograder", "grade-all", str(course / "submitted"),
                          "--out", str(tmp_path / "grades"), "--nbgrader-db", str(course / "gradebook.db"),
                          "--workers", "2"], cwd=ROOT, capture_output=True, text=True, timeout=1800,
                         env={"PATH": f"{BIN}:/usr/bin:/bin", "HOME": str(tmp_path)})
    assert run.returncode == 0, run.stdout + run.stderr[-3000:]
    assert "scores of 2 students written into assignment lab12" in run.stderr

    nbgrader(course, "export")
    with open(course / "grades.csv") as f:
        rows = {row["student_id"]: row for row in csv.DictReader(f)}
    with open(tmp_path / "grades" / "gradebook.csv") as f:
        ours = {row["student"]: row for row in csv.DictReader(f)}
    assert float(rows["reference"]["score"]) == float(ours["reference"]["total"]) == 100
    assert float(rows["reference"]["max_score"]) == 100
    assert float(rows["starter"]["score"]) == float(ours["starter"]["total"]) == 0
    assert ours["starter"]["status"] == "not implemented"
    nbgrader(course, "autograde", "lab12", "--force")  # nbgrader still works with the added cell
