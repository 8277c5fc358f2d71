"""No file a student receives holds the staff's absolute paths (issue 22): results.json, report.md/.html, and the
nbgrader feedback page built from report.html (autograder/bundling/assets/grader_feedback.py)."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from autograder.bundling.recipes import ASSETS
from autograder.judge.grade import grade
from autograder.judge.report import write_reports
from autograder.lab.paths import REFERENCE, ROOT

STUDENT_FILES = ("results.json", "report.md", "report.html")


def staff_paths(tmp_path: Path) -> list[str]:
    """Absolute paths only the staff's machine has: the class and grades folders, the grader's repository."""
    return [str(tmp_path), str(ROOT), str(Path.home()) + "/", "autograder-notebook-", "autograder-batch-"]


def graded_class(tmp_path: Path) -> Path:
    """grades/<student>/ for a notebook with a syntax error and a .py whose compute_gae raises."""
    from test_notebook import NOTEBOOK_ERRORS, broken_notebook
    (tmp_path / "submitted" / "bob").mkdir(parents=True)
    notebook, _ = broken_notebook(tmp_path / "submitted" / "bob", NOTEBOOK_ERRORS["syntax"][0])
    carla = tmp_path / "submitted" / "carla" / "rlhf.py"
    carla.parent.mkdir(parents=True)
    carla.write_text(REFERENCE.read_text().replace("def compute_gae(rewards, values, mask, gamma, lam):",
                                                   "def compute_gae(rewards, values, mask, gamma, lam):\n"
                                                   "    raise ValueError(__file__)", 1))
    grades = tmp_path / "grades"
    for student, path in (("bob", notebook), ("carla", carla)):
        write_reports(grade(path, only={"gae"}, mode="self_check"), grades / student)
    return grades


def test_reports_hold_no_staff_path(tmp_path):
    grades = graded_class(tmp_path)
    for student in ("bob", "carla"):
        for name in STUDENT_FILES:
            text = (grades / student / name).read_text()
            leaked = [p for p in staff_paths(tmp_path) if p in text]
            assert not leaked, f"{student}/{name} holds {leaked}"
    assert "code cell" in (grades / "bob" / "report.md").read_text()


def grader_report():
    if importlib.util.find_spec("nbconvert") is None:
        pytest.skip("nbconvert is not installed")
    spec = importlib.util.spec_from_file_location("grader_feedback", ASSETS / "grader_feedback.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.GraderReport


@pytest.mark.parametrize("student", ["bob", "nobody"])  # nobody: no report.html, the page says so
def test_the_nbgrader_feedback_page_holds_no_staff_path(tmp_path, student):
    from nbformat.v4 import new_notebook
    grades = graded_class(tmp_path) if student == "bob" else tmp_path / "grades"
    report = grader_report()(folder=str(grades))  # an absolute folder, as nbgrader_config.py sets it
    nb, _ = report.preprocess(new_notebook(), {"nbgrader": {"student": student}})
    page = json.dumps(nb)
    leaked = [p for p in staff_paths(tmp_path) if p in page]
    assert not leaked, f"the feedback page holds {leaked}"
    assert ("grade-report" in page) == (student == "bob")
