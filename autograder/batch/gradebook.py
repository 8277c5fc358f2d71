"""DIR/gradebook.csv (every student, every status) and DIR/canvas.csv (an LMS import), rewritten atomically.

gradebook.csv columns, in this order (docs/class-grading.md):
    student, name, email, sid     who (name/email/sid: from a Gradescope export's metadata or the roster)
    <each part of grading.yaml>   the part's points; empty when it was not graded (--only, no grade)
    e2e, total, max_total         end-to-end points, the total and what it is out of
    status                        graded | not importable | not implemented | empty or missing |
                                  ambiguous | no submission | failed to grade | pending (see STATUS)
    detail                        why, for every status but graded: the import error with its line,
                                  the empty or linked file, the files that could each be the submission
    seconds, mistakes             grading time; the diagnosed mistakes as "part: mistake" joined by " | "
    overrides                     the manual overrides applied (overrides.csv) as "target: points (was x): reason"
    roster                        enrolled | not on the roster (with --roster), else empty
A submission that failed to grade has no total (it is the grader's failure, not a zero); every other
status has one (0 for not importable, not implemented, empty or missing, ambiguous, no submission).
canvas.csv has one row per person: each member of a group submission gets the group's total.
Both are written by autograder/batch/spreadsheet.py: a cell a spreadsheet could read as a formula is quoted.
"""

from __future__ import annotations

from pathlib import Path

from autograder.batch.discover import Member
from autograder.batch.overrides import describe
from autograder.batch.spreadsheet import write_csv

STATUS = {"graded": "graded", "not_importable": "not importable", "not_implemented": "not implemented",
          "empty": "empty or missing", "ambiguous": "ambiguous", "absent": "no submission",
          "failed": "failed to grade", "pending": "pending"}
CANVAS_HEAD = ["Student", "ID", "SIS User ID", "SIS Login ID", "Section"]


def columns(parts: list[str]) -> list[str]:
    return ["student", "name", "email", "sid", *parts, "e2e", "total", "max_total", "status", "detail", "seconds",
            "mistakes", "overrides", "roster"]


def has_total(record: dict) -> bool:
    """The record carries points (every status but failed to grade and pending)."""
    return record["status"] not in ("failed", "pending") and record.get("score") is not None


def mistakes(record: dict) -> list[tuple[str, str]]:
    """The distinct (part, diagnosis) pairs of a graded record, in test order."""
    seen: dict[tuple[str, str], None] = {}
    for t in record.get("tests", []):
        if t.get("diagnosis"):
            seen[(t["part"], t["diagnosis"])] = None
    return list(seen)


def members(record: dict) -> list[Member]:
    """The people a row's grade belongs to: each group member, else the row's own name, email and id."""
    found = [Member(**m) for m in record.get("members") or []]
    return found or [Member(record.get("name", ""), record.get("email", ""), record.get("sid", ""))]


def row(record: dict, parts: list[str]) -> dict:
    points = lambda bucket: "" if not bucket else _num(bucket["score"])  # noqa: E731
    total = has_total(record)
    return {
        "student": record["student"], "name": record.get("name", ""), "email": record.get("email", ""),
        "sid": record.get("sid", ""), "roster": record.get("roster", ""),
        **{part: points(record.get("parts", {}).get(part)) for part in parts},
        "e2e": points(record.get("e2e")),
        "total": _num(record["score"]) if total else "",
        "max_total": _num(record["max_score"]) if total else "",
        "status": STATUS[record["status"]],
        "detail": record.get("reason", ""),
        "seconds": f"{record['seconds']:.1f}" if record.get("seconds") else "",
        "mistakes": " | ".join(f"{part}: {text}" for part, text in mistakes(record)),
        "overrides": " | ".join(describe(o) for o in record.get("overrides", [])),
    }


def write_gradebook(path: Path, records: list[dict], parts: list[str]) -> None:
    """Rewrite the gradebook with one row per record, sorted by student."""
    write_csv(path, columns(parts), [row(r, parts) for r in sorted(records, key=lambda r: r["student"])])


def write_canvas(path: Path, records: list[dict], assignment: str, points_possible: float) -> None:
    """A Canvas gradebook import: Canvas's own first columns, a "Points Possible" row, one column of totals,
    one row per person (each member of a group submission). Canvas matches a row by SIS Login ID (the email)
    or SIS User ID (the student id); a column whose name is not an existing assignment becomes a new
    assignment. Failed or pending rows are left blank, never 0."""
    head = [*CANVAS_HEAD, assignment]
    rows = [dict.fromkeys(head, "") | {"Student": "Points Possible", assignment: _num(points_possible)}]
    for r in sorted(records, key=lambda r: r["student"]):
        people = members(r)
        for m in people:
            rows.append({"Student": m.name or r["student"], "ID": "", "SIS User ID": m.sid,
                         "SIS Login ID": m.email or (r["student"] if len(people) == 1 else ""), "Section": "",
                         assignment: _num(r["score"]) if has_total(r) else ""})
    write_csv(path, head, rows)


def _num(x: float) -> str:
    return f"{round(x, 4):g}"
