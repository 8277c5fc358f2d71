"""Write grade-all's full grades into a course's nbgrader gradebook, through nbgrader's own API.

    write_scores(Path("course/gradebook.db"), "lab", records)   # -> students written

nbgrader autogrades only the notebook's visible test cells (25 of 100 points). For each student with
points (graded, not importable, not implemented, empty; manual overrides applied), this sets:
- each autograded test cell named after a grader check (`rm_loss.bt_stable` -> cell `rm_loss_bt_stable`)
  to the grader's points for that check (a manual score: nbgrader shows it instead of its own);
- the task cell REST_CELL to every other point of the grade (hidden checks and e2e tests). When the
  release's notebook has no such cell, it is added to the gradebook here, out of what remains.
So formgrader's total equals gradebook.csv's total. Students are created in nbgrader when missing
(their id: the folder name under `submitted/`). Rows that failed to grade are left untouched, and so are
enrolled students with no submission (nbgrader counts a missing submission itself).
"""

from __future__ import annotations

from pathlib import Path

from autograder.batch.gradebook import has_total

REST_CELL = "autograder_rest"


class NbgraderError(Exception):
    """The gradebook cannot take the scores (no such assignment, not one notebook)."""


def check_assignment(db: Path, assignment: str) -> None:
    """Raise NbgraderError unless `db` holds `assignment` with one notebook (before any grading)."""
    from nbgrader.api import Gradebook
    with Gradebook(_url(db)) as gb:
        _notebook(gb, db, assignment)


def write_scores(db: Path, assignment: str, records: list[dict]) -> int:
    """Write every record with points into `db` (sqlite) for `assignment`; returns how many were written."""
    from nbgrader.api import Gradebook, MissingEntry

    graded = [r for r in records if has_total(r) and not r.get("only") and r["status"] != "absent"]
    if not graded:
        return 0
    full = max(r["max_score"] for r in graded)
    with Gradebook(_url(db)) as gb:
        notebook = _notebook(gb, db, assignment)
        rest = _rest_cell(gb, notebook, assignment, full)
        for record in graded:
            gb.update_or_create_student(record["student"])
            try:
                submission = gb.find_submission(assignment, record["student"])
            except MissingEntry:
                submission = gb.add_submission(assignment, record["student"])
            _set_grades(gb, submission.notebooks[0], rest, record)
        gb.db.commit()
    return len(graded)


def _url(db: Path) -> str:
    return f"sqlite:///{Path(db).resolve()}"


def _notebook(gb, db: Path, assignment: str) -> str:
    """The name of the assignment's one notebook."""
    from nbgrader.api import MissingEntry
    try:
        notebooks = gb.find_assignment(assignment).notebooks
    except MissingEntry:
        raise NbgraderError(f"{db} has no assignment {assignment!r}: run `nbgrader generate_assignment "
                            f"{assignment}` in the course first (or give --nbgrader-assignment)") from None
    if len(notebooks) != 1:
        raise NbgraderError(f"nbgrader assignment {assignment!r} has {len(notebooks)} notebooks; expected one")
    return notebooks[0].name


def _rest_cell(gb, notebook: str, assignment: str, full: float):
    """The task cell holding the points nbgrader's own cells do not cover (made here if the release has none)."""
    from nbgrader.api import Grade, MissingEntry
    try:
        return gb.find_graded_cell(REST_CELL, notebook, assignment)
    except MissingEntry:
        pass
    nb = gb.find_notebook(notebook, assignment)
    covered = sum(c.max_score for c in nb.grade_cells)
    cell = gb.add_task_cell(REST_CELL, notebook, assignment, max_score=full - covered, cell_type="markdown")
    for submitted in nb.submissions:  # submissions made before the cell existed get a grade row for it
        gb.db.add(Grade(cell_id=cell.id, notebook=submitted))
    gb.db.commit()
    return cell


def _set_grades(gb, submitted, rest, record: dict) -> None:
    scores = {t["id"].replace(".", "_"): t["score"] for t in record.get("tests", [])}
    given = 0.0
    rest_grade = None
    for grade in submitted.grades:
        if grade.cell_id == rest.id:
            rest_grade = grade
        elif grade.name in scores:
            grade.manual_score = scores[grade.name]
            grade.needs_manual_grade = False
            given += scores[grade.name]
        elif record["status"] != "graded":  # nothing ran (empty, not importable): no point anywhere
            grade.manual_score = 0.0
            grade.needs_manual_grade = False
    if rest_grade is not None:
        rest_grade.manual_score = max(0.0, record["score"] - given)
        rest_grade.needs_manual_grade = False
