"""Manual grade overrides: DIR/overrides.csv, written by staff, applied on every run of grade-all.

    student,target,points,reason
    ada,gae,18,"regraded by hand: the loop is right, the test's tolerance was too tight"
    bob,e2e.kl_penalty,5,"the run was unlucky on this seed; passes on 3 others"

`target` is a part (`gae`), `e2e` (all end-to-end points), or a test id (`gae.known_values`); `points`
replaces the grader's points for it (0 .. its maximum in grading.yaml). A test's override moves its
part and the total by the difference; a part's override sets the part (after its tests' overrides).
The file lives in DIR, and grade-all never writes or removes it, so it holds across every regrade.
The records (DIR/<student>/grade.json) keep the grader's own points; the overrides are applied to what
grade-all derives from them: gradebook.csv, canvas.csv, the class report, the nbgrader gradebook,
and a "Manual overrides" section at the end of DIR/<student>/staff.md. Students' own reports are not
changed. A record without points (failed to grade, pending) is left as it is, and the run says so.
"""

from __future__ import annotations

import copy
import csv
import difflib
import io
from dataclasses import dataclass
from pathlib import Path

from autograder.batch.store import atomic_write
from autograder.judge.templating import inline_markdown

FILE = "overrides.csv"
COLUMNS = ("student", "target", "points", "reason")
STAFF_MARK = "\n\n<!-- grade-all: manual overrides (from overrides.csv; rewritten on every run) -->\n"


class OverridesError(Exception):
    """overrides.csv cannot be applied: one sentence with its line."""


@dataclass(frozen=True)
class Override:
    student: str
    target: str
    points: float
    reason: str
    line: int


def maxima(cfg) -> dict[str, float]:
    """Every target and its maximum points: each test id, each part (and e2e) as the sum of its tests."""
    found: dict[str, float] = {}
    for test_id, spec in cfg.tests.items():
        found[test_id] = float(spec.points)
        part = test_id.split(".")[0]
        found[part] = found.get(part, 0.0) + float(spec.points)
    return found


def load(path: Path, students: set[str], targets: dict[str, float]) -> dict[str, list[Override]]:
    """student -> their overrides, tests first; raises OverridesError on any bad line (before any work)."""
    try:
        text = path.read_bytes().decode("utf-8-sig")
    except OSError as exc:
        raise OverridesError(f"{path} cannot be read ({exc.strerror or exc})") from None
    except UnicodeDecodeError:
        raise OverridesError(f"{path} is not a UTF-8 CSV file") from None
    rows = list(csv.reader(io.StringIO(text)))
    head = [h.strip().lower() for h in rows[0]] if rows else []
    if head[:4] != list(COLUMNS):
        raise OverridesError(f"{path}: the first line must be {','.join(COLUMNS)} (it is {','.join(head) or 'empty'})")
    found: dict[str, list[Override]] = {}
    seen: set[tuple[str, str]] = set()
    for line, row in enumerate(rows[1:], start=2):
        if not any(cell.strip() for cell in row):
            continue
        student, target, points, reason = (row + [""] * 4)[:4]
        o = _checked(path, line, student.strip(), target.strip(), points.strip(), reason.strip(), students, targets)
        if (o.student, o.target) in seen:
            raise OverridesError(f"{path}:{line}: a second override of {o.target} for {o.student}")
        seen.add((o.student, o.target))
        found.setdefault(o.student, []).append(o)
    for student in found:
        found[student].sort(key=lambda o: ("." not in o.target, o.line))
    return found


def _checked(path: Path, line: int, student: str, target: str, points: str, reason: str, students: set[str],
             targets: dict[str, float]) -> Override:
    where = f"{path}:{line}"
    if student not in students:
        near = difflib.get_close_matches(student, sorted(students), n=1)
        raise OverridesError(f"{where}: no student {student!r} in this class"
                             + (f" (did you mean {near[0]}?)" if near else ""))
    if target not in targets:
        raise OverridesError(f"{where}: {target!r} is not a part, e2e or a test id of grading.yaml")
    try:
        value = float(points)
    except ValueError:
        raise OverridesError(f"{where}: points {points!r} is not a number") from None
    if not 0 <= value <= targets[target]:
        raise OverridesError(f"{where}: points {value:g} for {target} is outside 0 .. {targets[target]:g}")
    if not reason:
        raise OverridesError(f"{where}: the reason is empty (every override says why)")
    return Override(student, target, value, reason, line)


def apply(record: dict, overrides: list[Override], targets: dict[str, float]) -> dict:
    """A copy of `record` with `overrides` applied and listed under "overrides" (the record itself is kept)."""
    if not overrides:
        return record
    record = copy.deepcopy(record)
    applied = []
    if record["status"] in ("failed", "pending") or record.get("score") is None:
        record["overrides"] = [_shown(o, None, applied=False) for o in overrides]
        return record
    for o in overrides:
        part = o.target.split(".")[0]
        bucket = _bucket(record, part, targets)
        if "." in o.target:
            test = next((t for t in record["tests"] if t["id"] == o.target), None)
            was = test["score"] if test else 0.0
            if test:
                test["score"] = o.points
        else:
            was = bucket["score"]
        delta = o.points - was
        bucket["score"] += delta
        record["score"] += delta
        applied.append(_shown(o, was))
    record["overrides"] = applied
    return record


def _bucket(record: dict, part: str, targets: dict[str, float]) -> dict:
    """The record's points of `part` (its e2e points for "e2e"), made when the grade has none (--only, empty)."""
    if part == "e2e":
        if not record.get("e2e"):
            record["e2e"] = {"score": 0.0, "max": targets["e2e"]}
        return record["e2e"]
    return record["parts"].setdefault(part, {"score": 0.0, "max": targets[part]})


def _shown(o: Override, was: float | None, applied: bool = True) -> dict:
    return {"target": o.target, "points": o.points, "was": was, "reason": o.reason, "applied": applied}


def describe(o: dict) -> str:
    """One override as text: 'gae: 18 (was 12): reason'."""
    if not o["applied"]:
        return f"{o['target']}: {o['points']:g} not applied (no grade to override): {o['reason']}"
    return f"{o['target']}: {o['points']:g} (was {o['was']:g}): {o['reason']}"


def show_in_staff_view(folder: Path, shown: list[dict]) -> None:
    """End DIR/<student>/staff.md with its overrides (or with none: a removed override disappears), each as
    inert markdown (autograder/judge/templating.py)."""
    path = folder / "staff.md"
    try:
        text = path.read_text()
    except OSError:
        return
    base = text.split(STAFF_MARK)[0]
    new = base
    if shown:
        new += STAFF_MARK + "## Manual overrides\n\n" + "".join(f"- {inline_markdown(describe(o))}\n" for o in shown)
    if new != text:
        atomic_write(path, new)
