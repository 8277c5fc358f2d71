"""grade-all's roster and output folder, fast: grades are faked (run._outcomes), everything else is real.

Checked: every student gets a row with a distinct status; links are never followed (folder, zip);
an output folder of another class, or with files grade-all did not write, is refused unless --force,
which removes only what grade-all wrote; stale students are removed and said; canvas.csv; the scores
land in a real nbgrader gradebook (nbgrader's API) with formgrader's total = the grader's total.
"""

from __future__ import annotations

import csv
import io
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
from autograder.lab.paths import REFERENCE

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


CANVAS_COLUMNS = ["Student", "ID", "SIS User ID", "SIS Login ID", "Section"]  # Canvas's gradebook import
ASSIGNMENT = "Lab 12: RLHF on a tiny transformer"
# A Gradescope roster export (Course > Roster > Download) as assumed here: First Name, Last Name, SID, Email, Role
GRADESCOPE_ROSTER = ("First Name,Last Name,SID,Email,Role,Sections\n"
                     "Ada,Lovelace,11,ada@uni.edu,Student,A\nBob,Babbage,2,bob@uni.edu,Student,A\n"
                     "Carla,Pair,3,carla@uni.edu,Student,A\nDan,Never,4,dan@uni.edu,Student,B\n"
                     "Tess,Assistant,,tess@uni.edu,TA,\n")
GROUP_EXPORT = ("submission_1:\n  :submitters:\n  - :name: Ada Lovelace\n    :email: ada@uni.edu\n    :sid: '11'\n"
                "submission_2:\n  :submitters:\n  - :name: Bob Babbage\n    :email: bob@uni.edu\n    :sid: '2'\n"
                "  - :name: Carla Pair\n    :email: carla@uni.edu\n    :sid: '3'\n"
                "submission_3:\n  :submitters:\n  - :name: Eve Auditor\n    :email: eve@uni.edu\n    :sid: '5'\n")


def canvas_rows(out: Path) -> list[dict]:
    with open(out / "canvas.csv", newline="") as f:
        reader = csv.DictReader(f)
        assert reader.fieldnames == [*CANVAS_COLUMNS, ASSIGNMENT]
        return list(reader)


def gradescope_export(path: Path) -> Path:
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("submission_metadata.yml", GROUP_EXPORT)
        z.writestr("submission_1/rlhf.py", "graded 90\n")
        z.writestr("submission_2/rlhf.py", "graded 70\n")
        z.writestr("submission_3/rlhf.py", "graded 50\n")
    return path


def test_canvas_has_one_row_per_group_member_in_canvas_columns(tmp_path):
    grade_all(gradescope_export(tmp_path / "export.zip"), tmp_path / "out")
    rows = canvas_rows(tmp_path / "out")
    assert rows[0]["Student"] == "Points Possible" and rows[0][ASSIGNMENT] == "100"
    people = {(r["Student"], r["SIS User ID"], r["SIS Login ID"]): r[ASSIGNMENT] for r in rows[1:]}
    assert people == {("Ada Lovelace", "11", "ada@uni.edu"): "90", ("Bob Babbage", "2", "bob@uni.edu"): "70",
                      ("Carla Pair", "3", "carla@uni.edu"): "70", ("Eve Auditor", "5", "eve@uni.edu"): "50"}
    assert not any(";" in value for r in rows for value in r.values())  # one person, one id, one login
    assert all(r["ID"] == "" and r["Section"] == "" for r in rows)


def test_a_gradescope_roster_gives_every_enrolled_student_a_row(tmp_path, capsys):
    roster = write(tmp_path / "roster.csv", GRADESCOPE_ROSTER)
    out = tmp_path / "out"
    assert main(["grade-all", str(gradescope_export(tmp_path / "export.zip")), "--out", str(out),
                 "--roster", str(roster)]) == 0
    stdout, stderr = capsys.readouterr()
    rows = gradebook(out)
    assert set(rows) == {"ada@uni.edu", "bob@uni.edu", "eve@uni.edu", "dan@uni.edu"}  # carla: in bob's group
    assert (rows["dan@uni.edu"]["status"], rows["dan@uni.edu"]["total"]) == ("no submission", "0")
    assert rows["dan@uni.edu"]["name"] == "Dan Never" and rows["dan@uni.edu"]["sid"] == "4"
    assert {s: r["roster"] for s, r in rows.items()} == {"ada@uni.edu": "enrolled", "bob@uni.edu": "enrolled",
                                                         "dan@uni.edu": "enrolled", "eve@uni.edu": "not on the roster"}
    assert "tess@uni.edu" not in rows  # a TA is not a student
    assert stdout.startswith("4 students (3 graded, 1 no submission), 4 on the roster: "), stdout
    assert "warning: 1 submission not on the roster: eve@uni.edu" in stderr
    canvas = {r["SIS Login ID"]: r[ASSIGNMENT] for r in canvas_rows(out)[1:]}
    assert canvas == {"ada@uni.edu": "90", "bob@uni.edu": "70", "carla@uni.edu": "70", "dan@uni.edu": "0",
                      "eve@uni.edu": "50"}
    html = (out / "class_report.html").read_text()
    assert "Roster: 4 enrolled, 1 of them with no submission; 1 submission not on the roster." in html
    assert not (out / "dan@uni.edu").exists()  # a student without a submission has no folder


def test_a_csv_roster_with_a_student_column(tmp_path):
    subs = tmp_path / "class"
    write(subs / "ada" / "rlhf.py", "graded 80\n")
    write(subs / "zed" / "rlhf.py", "graded 40\n")
    roster = write(tmp_path / "enrolled.csv", "\ufeffStudent,Email\nada,ada@uni.edu\nbo,bo@uni.edu\n")  # Excel's BOM
    summary = grade_all(subs, tmp_path / "out", roster=roster)
    rows = gradebook(tmp_path / "out")
    assert {s: (r["status"], r["roster"]) for s, r in rows.items()} == {
        "ada": ("graded", "enrolled"), "bo": ("no submission", "enrolled"), "zed": ("graded", "not on the roster")}
    assert rows["ada"]["email"] == "ada@uni.edu"  # the roster fills in who a plain folder is
    assert {r["SIS Login ID"] for r in canvas_rows(tmp_path / "out")[1:]} == {"ada@uni.edu", "bo@uni.edu", "zed"}
    assert (summary.students, summary.enrolled, summary.not_on_roster) == (3, 2, ["zed"])


def test_an_nbgrader_roster_and_gradebook(tmp_path, nbgrader_path, capsys):
    from nbgrader.api import Gradebook
    db = tmp_path / "gradebook.db"
    with Gradebook(f"sqlite:///{db}") as gb:
        gb.add_assignment("lab12")
        gb.add_notebook("rlhf", "lab12")
        gb.add_grade_cell("rm_loss_bt_known_values", "rlhf", "lab12", max_score=3, cell_type="code")
        for student, first in (("ada", "Ada"), ("bob", "Bob"), ("cy", "Cy")):
            gb.add_student(student, first_name=first, last_name="Student", email=f"{student}@uni.edu")
    subs = tmp_path / "submitted"
    write(subs / "ada" / "lab12" / "rlhf.ipynb", "graded 81\n")
    write(subs / "bob" / "lab12" / "rlhf.ipynb", "graded 20\n")
    stamp = db.stat().st_mtime_ns
    summary = grade_all(subs, tmp_path / "out", roster=db)
    assert db.stat().st_mtime_ns == stamp  # reading the roster writes nothing into the course's gradebook
    rows = gradebook(tmp_path / "out")
    assert (rows["cy"]["status"], rows["cy"]["name"], rows["cy"]["email"]) == ("no submission", "Cy Student",
                                                                                "cy@uni.edu")
    assert summary.statuses == {"graded": 2, "absent": 1} and summary.enrolled == 3
    assert main(["grade-all", str(subs), "--out", str(tmp_path / "out"), "--roster", str(db),
                 "--nbgrader-db", str(db)]) == 0
    with Gradebook(f"sqlite:///{db}") as gb:  # nbgrader counts a missing submission itself: cy is not written
        assert sorted(s.student.id for s in gb.find_assignment("lab12").submissions) == ["ada", "bob"]


def test_student_regrades_only_those(tmp_path, capsys):
    subs, out = tmp_path / "class", tmp_path / "out"
    for name, score in (("ada", 90), ("bob", 70), ("cy", 50)):
        write(subs / name / "rlhf.py", f"graded {score}\n")
    grade_all(subs, out)
    before = {s: (out / s / "grade.json").stat().st_mtime_ns for s in ("ada", "bob", "cy")}
    write(subs / "cy" / "rlhf.py", "graded 55\n")  # changed, but not asked for: kept as it was
    summary = grade_all(subs, out, students=["ada"])
    after = {s: (out / s / "grade.json").stat().st_mtime_ns for s in ("ada", "bob", "cy")}
    assert after["ada"] != before["ada"] and after["bob"] == before["bob"] and after["cy"] == before["cy"]
    assert (summary.graded, summary.kept) == (1, 2) and gradebook(out)["cy"]["total"] == "50"
    assert "1 to grade (--student), the other 2 kept as they are" in capsys.readouterr().err
    with pytest.raises(BatchError, match=r"--student: adda is not a student of this class \(did you mean ada\?\)"):
        grade_all(subs, out, students=["adda"])


def test_overrides_hold_across_regrades_and_reach_every_export(tmp_path, nbgrader_path):
    from nbgrader.api import Gradebook
    db = tmp_path / "gradebook.db"
    with Gradebook(f"sqlite:///{db}") as gb:
        gb.add_assignment("lab12")
        gb.add_notebook("rlhf", "lab12")
        gb.add_grade_cell("rm_loss_bt_known_values", "rlhf", "lab12", max_score=3, cell_type="code")
    subs, out = tmp_path / "submitted", tmp_path / "out"
    write(subs / "ada" / "rlhf.py", "graded 2\n")   # fake: rm_loss 2, its one test 2 of 3
    write(subs / "bob" / "rlhf.py", "graded 60\n")
    write(out / "overrides.csv", "student,target,points,reason\n"
          "ada,rm_loss.bt_known_values,3,\"the test's tolerance was too tight, checked by hand\"\n"
          "bob,e2e,10,extension: graded the late e2e run by hand\n")
    for run_args in ({}, {"force": True}, {"students": ["ada"]}):  # the first grade, a full regrade, one student
        grade_all(subs, out, nbgrader=(db, "lab12"), **run_args)
        rows = gradebook(out)
        assert (rows["ada"]["total"], rows["ada"]["rm_loss"]) == ("3", "3"), run_args
        assert rows["ada"]["overrides"] == ("rm_loss.bt_known_values: 3 (was 2): the test's tolerance was too tight, "
                                            "checked by hand")
        assert (rows["bob"]["total"], rows["bob"]["e2e"]) == ("70", "10")
        assert {r["Student"]: r[ASSIGNMENT] for r in canvas_rows(out)[1:]} == {"ada": "3", "bob": "70"}
        html = (out / "class_report.html").read_text()
        assert "2 manual overrides applied." in html and "extension: graded the late e2e run by hand" in html
        with Gradebook(f"sqlite:///{db}") as gb:
            assert gb.find_submission("lab12", "ada").score == 3.0
            assert gb.find_grade("rm_loss_bt_known_values", "rlhf", "lab12", "ada").score == 3.0
            assert gb.find_submission("lab12", "bob").score == 70.0
    assert json.loads((out / "ada" / "grade.json").read_text())["score"] == 2  # the record keeps the grader's
    write(out / "overrides.csv", "student,target,points,reason\n")  # removed: the grader's points again
    grade_all(subs, out)
    assert gradebook(out)["ada"]["total"] == "2" and gradebook(out)["ada"]["overrides"] == ""


def test_overrides_show_in_the_staff_view(tmp_path):
    subs, out = tmp_path / "class", tmp_path / "out"
    write(subs / "ada" / "rlhf.py", "graded 2\n")
    grade_all(subs, out)
    write(out / "ada" / "staff.md", "# staff view\n")  # as `grade` writes it (the fake grader writes none)
    write(out / "overrides.csv", "student,target,points,reason\nada,rm_loss,20,hand-graded\n")
    grade_all(subs, out)
    assert (out / "ada" / "staff.md").read_text().endswith("## Manual overrides\n\n- rm_loss: 20 (was 2): "
                                                          "hand-graded\n")
    grade_all(subs, out)  # idempotent
    assert (out / "ada" / "staff.md").read_text().count("## Manual overrides") == 1
    write(out / "overrides.csv", "student,target,points,reason\n")
    grade_all(subs, out)
    assert (out / "ada" / "staff.md").read_text() == "# staff view\n"


def test_progress_line_rate_and_time_left():
    from rich.console import Console

    from autograder.batch.progress import progress_bar
    now = [0.0]
    console = Console(file=io.StringIO(), width=200, force_terminal=False)
    with progress_bar(console, get_time=lambda: now[0], auto_refresh=False) as bar:
        task = bar.add_task("grading", total=10, failed=0)
        line = lambda: " ".join(str(c.render(bar.tasks[0])) for c in bar.columns[-3:])  # noqa: E731
        assert line() == "-/min 0:00:00 elapsed left: -"
        now[0] = 19.8
        bar.update(task, advance=1, failed=0)
        now[0] = 20.0
        bar.update(task, advance=1, failed=0)  # two workers finishing together, 20 s in
        assert line() == "6.0/min 0:00:20 elapsed about 0:01:20 left"
        now[0] = 80.0
        bar.update(task, advance=8, failed=0)
        assert line() == "7.5/min 0:01:20 elapsed done"
