"""The output folder of a batch: each student's reports and record, written so nothing is ever half-done.

    DIR/<student>/results.json, report.md, report.html   the reports of `grade`
    DIR/<student>/grade.json                             the record: key, status, points, time, tests
    DIR/batch.json                                       whose grades DIR holds: the class and the grader

DIR belongs to one class graded by one grader configuration (batch.json). Another class, or a folder
grade-all did not write, is refused unless `--force`; then only what grade-all wrote is removed.

Every file is written to a temporary name and moved into place with os.replace (atomic on POSIX).
The record is written last: it is the commit mark, so a student whose record matches the job's
key has complete reports, and a batch killed at any moment leaves only whole files behind.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

RECORD = "grade.json"
OWNER = "batch.json"


def atomic_write(path: Path, data: str | bytes) -> None:
    """Write `data` to `path` so readers see the old file or the new one, never a mix."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data.encode() if isinstance(data, str) else data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def save(out: Path, outcome: dict, extra: dict) -> dict:
    """Write a job's reports, then its record (outcome without the report texts, plus `extra`)."""
    folder = out / outcome["student"]
    for name, text in outcome.get("files", {}).items():
        atomic_write(folder / name, text)
    record = {k: v for k, v in outcome.items() if k != "files"}
    record.update(extra)
    record["reports"] = sorted(outcome.get("files", {}))
    atomic_write(folder / RECORD, json.dumps(record, indent=1, sort_keys=True))
    return record


def load(out: Path, student: str) -> dict | None:
    """The student's record, or None when there is none (or it is unreadable)."""
    try:
        record = json.loads((out / student / RECORD).read_text())
    except (OSError, ValueError):
        return None
    return record if isinstance(record, dict) else None


def is_current(out: Path, record: dict | None, key: str) -> bool:
    """The record was made by this very job, and the reports it lists are all present."""
    return (record is not None and record.get("key") == key
            and all((out / record["student"] / name).is_file() for name in record.get("reports", [])))


def owner(out: Path) -> dict | None:
    """Whose grades `out` holds (its batch.json), or None when it has none (or it is unreadable)."""
    try:
        stamp = json.loads((out / OWNER).read_text())
    except (OSError, ValueError):
        return None
    return stamp if isinstance(stamp, dict) else None


def ownership_problem(out: Path, identity: dict, own_files: tuple[str, ...]) -> str:
    """Why writing `identity`'s grades into `out` would overwrite someone else's files, or "" when it would not."""
    if not out.is_dir():
        return ""
    stamp = owner(out)
    if stamp is None:
        others = sorted(p.name for p in out.iterdir() if p.name not in own_files)
        if not others:
            return ""
        shown = ", ".join(others[:5]) + (", ..." if len(others) > 5 else "")
        return f"{out} is not empty and was not written by grade-all (it holds {shown})"
    changed = [k for k in identity if stamp.get(k) != identity[k]]
    if not changed:
        return ""
    was = "; ".join(f"{k}: {stamp.get(k)!r} (now {identity[k]!r})" for k in changed)
    return f"{out} holds the grades of another class or grader configuration ({was})"


def student_folders(out: Path) -> list[str]:
    """The students `out` holds results for: the folders with a record, not following links."""
    if not out.is_dir():
        return []
    return sorted(p.name for p in out.iterdir()
                  if p.is_dir() and not p.is_symlink() and (p / RECORD).is_file())


def remove_students(out: Path, students: list[str]) -> None:
    """Remove the result folders of `students` (only folders holding a record: what grade-all wrote)."""
    from autograder.sandbox.filetree import remove_tree
    for student in students:
        folder = out / student
        if folder.is_dir() and not folder.is_symlink() and (folder / RECORD).is_file():
            remove_tree(folder)
