"""The enrolled students (`grade-all --roster FILE`): every one gets a row, "no submission" when nothing came in.

    enrolled = read_roster(Path("roster.csv"))        # or a Gradescope roster export, or nbgrader's gradebook.db
    absent, on_roster = match(enrolled, submissions)

FILE is one of:
- a CSV with a `student` column (and optionally `name`, `email`, `sid`): gradebook.csv's own columns;
- a Gradescope roster export (Course > Roster > Download): `First Name`, `Last Name`, `SID`, `Email`,
  `Role` (a `Name` or `Full Name` column is read too); only rows whose Role is Student count, each
  keyed by its email (as Gradescope's submission export keys a student), else its SID;
- an nbgrader gradebook (sqlite, `gradebook.db`): its students (id, names, email), read through
  nbgrader's own API (`Gradebook.students`).
A submission matches an enrolled student when they share an identifier (the student key, an email or a
student id, case-insensitive): a Gradescope group submission matches each of its members.
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass
from pathlib import Path

from autograder.batch.discover import Member, Submission

MAX_BYTES = 16 << 20
GRADESCOPE = ("first name", "last name", "sid", "email")   # the columns that say "a Gradescope roster"
SQLITE_MAGIC = b"SQLite format 3\x00"


class RosterError(Exception):
    """The roster cannot be read: one sentence naming the file and what is wrong."""


@dataclass(frozen=True)
class Enrolled:
    student: str      # the key: the gradebook's `student` for a student with no submission
    name: str = ""
    email: str = ""
    sid: str = ""

    def ids(self) -> set[str]:
        return {x.strip().lower() for x in (self.student, self.email, self.sid) if x.strip()}

    def member(self) -> Member:
        return Member(self.name, self.email, self.sid)


def read_roster(path: Path) -> list[Enrolled]:
    """The enrolled students of `path` (see the module docstring); raises RosterError."""
    path = Path(path)
    try:
        if path.stat().st_size > MAX_BYTES:
            raise RosterError(f"roster {path}: larger than {MAX_BYTES >> 20} MiB, not a roster")
        with open(path, "rb") as f:
            head = f.read(len(SQLITE_MAGIC))
    except OSError as exc:
        raise RosterError(f"roster {path} cannot be read ({exc.strerror or exc})") from None
    found = _from_nbgrader(path) if head == SQLITE_MAGIC else _from_csv(path)
    unique: dict[str, Enrolled] = {}
    for e in found:
        unique.setdefault(e.student.lower(), e)
    if not unique:
        raise RosterError(f"roster {path} lists no student")
    return sorted(unique.values(), key=lambda e: e.student)


def match(enrolled: list[Enrolled], subs: list[Submission]) -> tuple[list[Enrolled], dict[str, Enrolled | None]]:
    """(the enrolled students no submission matches, {student: the enrolled student it matches, or None})."""
    by_id: dict[str, Enrolled] = {}
    for e in enrolled:
        for i in e.ids():
            by_id.setdefault(i, e)
    matched: set[str] = set()
    found: dict[str, Enrolled | None] = {}
    for sub in subs:
        ids = [i.strip().lower() for i in (sub.student, *(x for m in sub.members for x in (m.email, m.sid)))
               if i.strip()]
        hits = {by_id[i].student: by_id[i] for i in ids if i in by_id}
        matched |= set(hits)
        first = next((by_id[i] for i in ids if i in by_id), None)
        found[sub.student] = first
    return [e for e in enrolled if e.student not in matched], found


def _from_csv(path: Path) -> list[Enrolled]:
    try:
        text = path.read_bytes().decode("utf-8-sig")
    except UnicodeDecodeError:
        raise RosterError(f"roster {path} is neither a CSV file (UTF-8) nor an nbgrader gradebook") from None
    rows = list(csv.reader(io.StringIO(text)))
    if not rows:
        raise RosterError(f"roster {path} is empty")
    head = [h.strip().lower() for h in rows[0]]
    column = {h: i for i, h in reversed(list(enumerate(head)))}
    cell = lambda row, name: row[column[name]].strip() if name in column and column[name] < len(row) else ""  # noqa: E731
    if "student" in column:
        return [Enrolled(cell(r, "student"), cell(r, "name"), cell(r, "email"), cell(r, "sid"))
                for r in rows[1:] if cell(r, "student")]
    if all(c in column for c in GRADESCOPE):
        found = []
        for r in rows[1:]:
            if "role" in column and cell(r, "role").lower() != "student":
                continue  # instructors, TAs, readers
            name = cell(r, "full name") or cell(r, "name") or f"{cell(r, 'first name')} {cell(r, 'last name')}".strip()
            key = cell(r, "email") or cell(r, "sid")
            if key:
                found.append(Enrolled(key, name, cell(r, "email"), cell(r, "sid")))
        return found
    shown = ", ".join(h for h in rows[0][:8] if h.strip()) or "no header"
    raise RosterError(f"roster {path} has no `student` column, nor a Gradescope roster's columns (First Name, "
                      f"Last Name, SID, Email, Role): its first line is {shown}")


def _from_nbgrader(path: Path) -> list[Enrolled]:
    """The students of an nbgrader gradebook, opened read-only (nbgrader would otherwise add its tables)."""
    from urllib.parse import quote

    from nbgrader.api import Gradebook
    from sqlalchemy.exc import SQLAlchemyError
    try:
        with Gradebook(f"sqlite:///file:{quote(str(path.resolve()))}?mode=ro&uri=true") as gb:
            return [Enrolled(s.id, " ".join(n for n in (s.first_name, s.last_name) if n), s.email or "",
                             s.lms_user_id or "")
                    for s in gb.students]
    except SQLAlchemyError as exc:
        raise RosterError(f"roster {path} is an sqlite file but not an nbgrader gradebook "
                          f"({type(exc).__name__})") from None
