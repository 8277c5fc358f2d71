"""What grade-all derives from the students' records: the rows of the class, and every file built from them.

    views = Views(subs, enrolled, overrides, targets, max_points)
    rows = views.rows(records)      # one per submission (+ one per enrolled student with none), overrides applied

A row is a record (DIR/<student>/grade.json, the grader's points) with:
- who it is as discovery finds it now (name, email, sid, each group member): a rerun that regrades
  nothing still shows the current roster data;
- `roster`: "enrolled" or "not on the roster" (only with --roster), and the enrolled student's name,
  email and id when the submission carried none (a plain folder named after the student);
- the manual overrides (DIR/overrides.csv, autograder/batch/overrides.py) applied;
and one "no submission" row (0 points) per enrolled student no submission matches.
"""

from __future__ import annotations

from pathlib import Path

from autograder.batch import overrides as overrides_mod
from autograder.batch.discover import Submission
from autograder.batch.roster import Enrolled, match


class Views:
    def __init__(self, subs: dict[str, Submission], enrolled: list[Enrolled] | None,
                 overrides: dict[str, list[overrides_mod.Override]], targets: dict[str, float], max_points: float):
        self.subs, self.overrides, self.targets, self.max_points = subs, overrides, targets, max_points
        self.enrolled = enrolled
        self.absent, self.on_roster = match(enrolled, list(subs.values())) if enrolled is not None else ([], {})

    @property
    def not_on_roster(self) -> list[str]:
        return sorted(s for s, e in self.on_roster.items() if e is None) if self.enrolled is not None else []

    def rows(self, records: dict[str, dict]) -> list[dict]:
        """Every row of the class, sorted by student (see the module docstring)."""
        found = [self._row(records[s]) for s in records]
        found += [overrides_mod.apply(absent_record(e, self.max_points), self.overrides.get(e.student, []),
                                      self.targets) for e in self.absent]
        return sorted(found, key=lambda r: r["student"])

    def _row(self, record: dict) -> dict:
        sub = self.subs.get(record["student"])
        row = dict(record)
        if sub is not None:
            members = list(sub.members)
            enrolled = self.on_roster.get(sub.student)
            if self.enrolled is not None:
                row["roster"] = "enrolled" if enrolled else "not on the roster"
            if not members and enrolled is not None:
                members = [enrolled.member()]
            row.update(name=sub.name or (enrolled.name if enrolled else ""),
                       email=sub.email or (enrolled.email if enrolled else ""),
                       sid=sub.sid or (enrolled.sid if enrolled else ""),
                       members=[vars(m) for m in members])
        return overrides_mod.apply(row, self.overrides.get(record["student"], []), self.targets)

    def show_overrides(self, out: Path, rows: list[dict]) -> None:
        """Each student's staff.md ends with its overrides (and loses a removed one)."""
        for row in rows:
            if row["status"] != "absent":
                overrides_mod.show_in_staff_view(out / row["student"], row.get("overrides", []))


def absent_record(e: Enrolled, points: float) -> dict:
    """The row of an enrolled student with no submission: 0 points."""
    return {"student": e.student, "name": e.name, "email": e.email, "sid": e.sid, "members": [vars(e.member())],
            "roster": "enrolled", "status": "absent", "key": None, "reason": "on the roster, but no submission",
            "score": 0.0, "max_score": points, "parts": {}, "e2e": None, "tests": [], "seconds": 0.0, "reports": []}

