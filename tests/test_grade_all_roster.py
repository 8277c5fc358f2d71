"""grade-all's roster and output folder, fast: grades are faked (run._outcomes), everything else is real.

Checked: every student gets a row with a distinct status; links are never followed (folder, zip);
an output folder of another class, or with files grade-all did not write, is refused unless --force,
which removes only what grade-all wrote; stale students are removed and said; canvas.csv; the scores
land in a real nbgrader gradebook (nbgrader's API) with formgrader's total = the grader's total.
"""

from __future__ import annotations

import csv
import json
import os
import stat
import sys
import zipfile
from pathlib import Path

import pytest

from autograder.__main__ import main
from autograder.batch import run
from autograder.batch.discover import discover
from autograder.batch.run import BatchError, grade_all
from autograder.paths import REFERENCE

FULL = 100.0


def fake_outcomes(todo, only, version, *rest):
    """A worker's outcome from the submission's first line: "<status> <score> [detail]"."""
    for sub, key in todo:
        status, score, *detail = sub.data().decode().split(" ", 2)
        tests = [{"id": "rm_loss.bt_known_values", "part": "rm_loss", "passed": float(score) >= 3,
                  "score": min(3.0, float(score)), "max_score": 3, "seconds": 0.1, "diagnosis": "", "message": ""}]
        outcome = {"student": sub.student, "key": key, "status": status, "reason": " ".join(detail).strip(),
                   "score": float(score), "max_score": FULL, "parts": {"rm_loss": {"score": float(score), "max": 25}},
                   "e2e": None, "tests": tests, "files": {"report.html": "<p>report</p>"}, "seconds": 1.0,
                   "worker_grader": version}
        if status == "failed":
            outcome.update(score=None, max_score=None, parts={}, tests=[], files={})
        yield outcome


@pytest.fixture(autouse=True)
def no_real_grading(monkeypatch):
    monkeypatch.setattr(run, "_outcomes", fake_outcomes)


@pytest.fixture
def nbgrader_path(monkeypatch):
    """nbgrader runs `alembic` from PATH when it creates a gradebook: the venv's, as in an activated venv."""
    monkeypatch.setenv("PATH", f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def gradebook(out: Path, name: str = "gradebook.csv") -> dict[str, dict]:
    with open(out / name, newline="") as f:
        return {row.get("student") or row["Student"]: row for row in csv.DictReader(f)}


def test_every_submission_gets_a_row_with_its_status(tmp_path):
    subs = tmp_path / "class"
    write(subs / "ada" / "rlhf.py", "graded 100\n")
    write(subs / "bob" / "rlhf.py", "not_importable 0 SyntaxError: invalid syntax (rlhf.py, line 3)\n")
    write(subs / "cy" / "rlhf.py", "not_implemented 0 no contract function is implemented yet\n")
    write(subs / "dee" / "rlhf.py", "failed 0 grader error: RuntimeError: boom (at grade.py:10)\n")
    write(subs / "eve" / "rlhf.py", "  \n\n")
    write(subs / "fay" / "notes.txt", "forgot the code\n")
    (subs / "gus").mkdir()
    summary = grade_all(subs, tmp_path / "out")
    rows = gradebook(tmp_path / "out")
    status = {s: (r["status"], r["total"], r["max_total"]) for s, r in rows.items()}
    assert status == {"ada": ("graded", "100", "100"), "bob": ("not importable", "0", "100"),
                      "cy": ("not implemented", "0", "100"), "dee": ("failed to grade", "", ""),
                      "eve": ("empty or missing", "0", "100"), "fay": ("empty or missing", "0", "100"),
                      "gus": ("empty or missing", "0", "100")}
    assert "line 3" in rows["bob"]["detail"] and "rlhf.py is empty" in rows["eve"]["detail"]
    assert "notes.txt" in rows["fay"]["detail"] and "boom" in rows["dee"]["detail"]
    assert "is empty (no file at all)" in rows["gus"]["detail"]  # an empty folder is a student too
    assert summary.statuses == {"graded": 1, "not_importable": 1, "not_implemented": 1, "failed": 1, "empty": 3}


def test_gradescope_students_without_files_get_a_row(tmp_path):
    export = tmp_path / "export.zip"
    meta = ("submission_1:\n  :submitters:\n  - :name: Ada\n    :email: ada@uni.edu\n    :sid: '11'\n"
            "submission_2:\n  :submitters:\n  - :name: Bob\n    :email: bob@uni.edu\n")
    with zipfile.ZipFile(export, "w") as z:
        z.writestr("submission_metadata.yml", meta)
        z.writestr("submission_1/rlhf.py", "graded 80\n")
    grade_all(export, tmp_path / "out")
    rows = gradebook(tmp_path / "out")
    assert rows["ada@uni.edu"]["status"] == "graded" and rows["ada@uni.edu"]["sid"] == "11"
    assert rows["bob@uni.edu"]["status"] == "empty or missing" and rows["bob@uni.edu"]["total"] == "0"
    canvas = gradebook(tmp_path / "out", "canvas.csv")
    assert list(canvas["Ada"])[:5] == ["Student", "ID", "SIS User ID", "SIS Login ID", "Section"]
    assert canvas["Points Possible"]["Lab 12: RLHF on a tiny transformer"] == "100"
    assert (canvas["Ada"]["SIS User ID"], canvas["Ada"]["SIS Login ID"]) == ("11", "ada@uni.edu")
    assert canvas["Ada"]["Lab 12: RLHF on a tiny transformer"] == "80"


def test_links_are_never_followed(tmp_path):
    subs = tmp_path / "class"
    write(subs / "honest" / "rlhf.py", "graded 10\n")
    (subs / "copycat").mkdir(parents=True)
    (subs / "copycat" / "rlhf.py").symlink_to(REFERENCE)
    (subs / "folder_link").symlink_to(REFERENCE.parent, target_is_directory=True)
    (subs / "file_link.py").symlink_to(REFERENCE)
    (subs / "sneaky").mkdir()
    (subs / "sneaky" / "rlhf.py").symlink_to(REFERENCE)
    write(subs / "sneaky" / "helper.py", "graded 1\n")  # a regular .py beside the link is not graded instead
    os.mkfifo(subs / "honest" / "pipe.py")  # never opened (it would block)
    found = {s.student: s for s in discover(subs)}
    assert found["honest"].member == "honest/rlhf.py" and not found["honest"].problem
    for student in ("copycat", "folder_link", "file_link", "sneaky"):
        assert found[student].member == "" and "symbolic link to" in found[student].problem, student
    assert str(REFERENCE) in found["copycat"].problem
    grade_all(subs, tmp_path / "out")
    rows = gradebook(tmp_path / "out")
    assert rows["copycat"]["status"] == "empty or missing"
    assert "only regular files are graded" in rows["copycat"]["detail"]


def test_zip_symlink_members_are_refused(tmp_path):
    export = tmp_path / "class.zip"
    with zipfile.ZipFile(export, "w") as z:
        z.writestr("ada/rlhf.py", "graded 5\n")
        link = zipfile.ZipInfo("eve/rlhf.py")
        link.create_system = 3
        link.external_attr = (stat.S_IFLNK | 0o777) << 16
        z.writestr(link, "../../solutions/rlhf.py")
    found = {s.student: s for s in discover(export)}
    assert found["ada"].data() == b"graded 5\n"
    assert "symbolic link to ../../solutions/rlhf.py" in found["eve"].problem and not found["eve"].member


def test_another_class_is_refused_unless_force(tmp_path, capsys):
    out = tmp_path / "out"
    write(tmp_path / "a" / "ada" / "rlhf.py", "graded 90\n")
    write(tmp_path / "b" / "bob" / "rlhf.py", "graded 70\n")
    assert main(["grade-all", str(tmp_path / "a"), "--out", str(out), "--workers", "1"]) == 0
    capsys.readouterr()
    write(out / "my_notes.txt", "staff notes\n")
    before = {p: p.stat().st_mtime_ns for p in out.rglob("*")}
    assert main(["grade-all", str(tmp_path / "b"), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and "another class" in err and "--force" in err
    assert {p: p.stat().st_mtime_ns for p in out.rglob("*")} == before  # nothing touched
    assert main(["grade-all", str(tmp_path / "b"), "--out", str(out), "--force"]) == 0
    assert "removed the results of 1 students" in capsys.readouterr().err
    assert sorted(gradebook(out)) == ["bob"] and not (out / "ada").exists()
    assert (out / "my_notes.txt").read_text() == "staff notes\n"  # not grade-all's: kept
    assert json.loads((out / "batch.json").read_text())["submissions"] == str((tmp_path / "b").resolve())


def test_a_folder_grade_all_did_not_write_is_refused_unless_force(tmp_path, capsys):
    write(tmp_path / "class" / "ada" / "rlhf.py", "graded 90\n")
    write(tmp_path / "out" / "thesis.tex", "precious\n")
    with pytest.raises(BatchError, match="not written by grade-all"):
        grade_all(tmp_path / "class", tmp_path / "out")
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["thesis.tex"]
    grade_all(tmp_path / "class", tmp_path / "out", force=True)
    assert (tmp_path / "out" / "thesis.tex").read_text() == "precious\n"
    assert gradebook(tmp_path / "out")["ada"]["total"] == "90"


def test_a_student_who_left_loses_the_row_and_folder_with_a_message(tmp_path, capsys):
    subs, out = tmp_path / "class", tmp_path / "out"
    write(subs / "ada" / "rlhf.py", "graded 90\n")
    write(subs / "bob" / "rlhf.py", "graded 70\n")
    grade_all(subs, out)
    (subs / "bob" / "rlhf.py").unlink()
    (subs / "bob").rmdir()
    summary = grade_all(subs, out)
    assert summary.removed == ["bob"] and summary.up_to_date == 1
    assert sorted(gradebook(out)) == ["ada"] and not (out / "bob").exists()
    assert "html" in (out / "class_report.html").read_text() and "bob" not in (out / "class_report.html").read_text()


def test_scores_land_in_the_nbgrader_gradebook(tmp_path, capsys, nbgrader_path):
    from nbgrader.api import Gradebook
    db = tmp_path / "gradebook.db"
    with Gradebook(f"sqlite:///{db}") as gb:  # what `nbgrader generate_assignment lab12` records
        gb.add_assignment("lab12")
        gb.add_notebook("rlhf", "lab12")
        gb.add_grade_cell("rm_loss_bt_known_values", "rlhf", "lab12", max_score=3, cell_type="code")
        gb.add_grade_cell("gae_known_values", "rlhf", "lab12", max_score=4, cell_type="code")
        gb.add_student("bob")
        gb.add_submission("lab12", "bob")  # autograded by nbgrader before grade-all ran
    subs = tmp_path / "submitted"
    write(subs / "ada" / "lab12" / "rlhf.ipynb", "graded 81\n")
    write(subs / "bob" / "lab12" / "rlhf.ipynb", "graded 2\n")
    write(subs / "cy" / "lab12" / "rlhf.ipynb", "")
    write(subs / "dee" / "lab12" / "rlhf.ipynb", "failed 0 worker died\n")
    args = ["grade-all", str(subs), "--out", str(tmp_path / "out"), "--nbgrader-db", str(db)]
    assert main([*args, "--nbgrader-assignment", "lab13"]) == 2  # checked before any grading
    assert "no assignment 'lab13'" in capsys.readouterr().err and not (tmp_path / "out").exists()
    assert main(args) == 1  # dee failed to grade
    with Gradebook(f"sqlite:///{db}") as gb:
        totals = {s: (gb.find_submission("lab12", s).score, gb.find_submission("lab12", s).max_score)
                  for s in ("ada", "bob", "cy")}
        assert totals == {"ada": (81.0, 100.0), "bob": (2.0, 100.0), "cy": (0.0, 100.0)}
        bt = gb.find_grade("rm_loss_bt_known_values", "rlhf", "lab12", "ada")
        assert bt.score == 3 and not bt.needs_manual_grade
        assert sorted(s.id for s in gb.students) == ["ada", "bob", "cy"]  # dee failed to grade: not written
