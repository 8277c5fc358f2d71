"""The nbgrader edition, proven with real nbgrader on a copy of the released course folder.

    nbgrader generate_assignment lab12   -> release/lab12/rlhf.ipynb: solutions removed, nothing leaked
    nbgrader autograde lab12             -> the reference filled in gets every point, the starter none
"""

from __future__ import annotations

import csv
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from autograder.release import guard
from autograder.release.pipeline import Sources, build_release
from autograder.release.public_config import visible_tests

pytestmark = pytest.mark.slow
NBGRADER = Path(sys.executable).with_name("nbgrader")


def nbgrader(course: Path, *args: str) -> str:
    env = {"PATH": f"{NBGRADER.parent}:/usr/bin:/bin", "HOME": str(course), "LANG": "C.UTF-8"}
    done = subprocess.run([str(NBGRADER), *args], cwd=course, env=env, capture_output=True, text=True,
                          timeout=900)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-5000:]
    return done.stdout + done.stderr


@pytest.fixture(scope="module")
def course(tmp_path_factory) -> Path:
    """A copy of the released course folder, after `nbgrader generate_assignment`."""
    if not NBGRADER.exists():
        pytest.skip("nbgrader is not installed next to this interpreter")
    base = tmp_path_factory.mktemp("nbgrader")
    built = build_release(base / "out")
    course = base / "course"
    shutil.copytree(built["nbgrader_course"], course)
    nbgrader(course, "generate_assignment", "lab12", "--force")
    return course


def cells(path: Path) -> list[dict]:
    return json.loads(path.read_text())["cells"]


def test_generate_assignment_removes_the_solutions(course):
    student = course / "release" / "lab12" / "rlhf.ipynb"
    solution_cells = [c for c in cells(student) if c["metadata"].get("nbgrader", {}).get("solution")]
    assert len(solution_cells) == 7
    assert all("raise NotImplementedError()" in "".join(c["source"]) for c in solution_cells)
    files = {p.relative_to(course).as_posix(): p.read_bytes() for p in (course / "release").rglob("*") if p.is_file()}
    assert guard.find_leaks(files, Sources.load().forbidden()) == []
    for name in ("tinylm.py", "lab_helpers.py", "training.py", "sft.pt"):
        assert (course / "release" / "lab12" / name).is_file(), f"{name} is not released with the notebook"


def submit(course: Path, student: str, notebook: list[dict]) -> None:
    folder = course / "submitted" / student / "lab12"
    folder.mkdir(parents=True)
    data = json.loads((course / "release" / "lab12" / "rlhf.ipynb").read_text())
    data["cells"] = notebook
    (folder / "rlhf.ipynb").write_text(json.dumps(data))


def test_autograde_gives_the_reference_full_points_and_the_starter_none(course):
    source = {c["metadata"]["nbgrader"]["grade_id"]: c["source"] for c in cells(course / "source" / "lab12" / "rlhf.ipynb")}
    released = cells(course / "release" / "lab12" / "rlhf.ipynb")
    filled = [dict(c, source=source[c["metadata"]["nbgrader"]["grade_id"]])
              if c["metadata"].get("nbgrader", {}).get("solution") else c for c in released]
    submit(course, "reference", filled)
    submit(course, "starter", released)
    nbgrader(course, "autograde", "lab12", "--create", "--force")
    nbgrader(course, "export")
    with open(course / "grades.csv") as f:
        rows = {row["student_id"]: row for row in csv.DictReader(f)}
    visible = sum(spec["points"] for spec in visible_tests(Sources.load().raw).values())
    assert float(rows["reference"]["max_score"]) == visible
    assert float(rows["reference"]["score"]) == visible
    assert float(rows["starter"]["score"]) == 0
