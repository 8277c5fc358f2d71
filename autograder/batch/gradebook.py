"""DIR/gradebook.csv: one row per student, columns in a fixed order, rewritten atomically.

Columns: student, name, email, one per part of grading.yaml (in its order), e2e, total, max_total,
status, seconds, mistakes, reason. A part that was not graded (`--only`) is left empty, and so are
the points of a submission that failed to grade. `status` is "graded", "failed to grade" or
"pending" (not graded yet: the batch is running or was stopped); `mistakes` lists the diagnosed
mistakes as "part: mistake" separated by " | "; `reason` says why a submission failed to grade.
"""

from __future__ import annotations

import csv
import io
from pathlib import Path

from autograder.batch.store import atomic_write

STATUS = {"graded": "graded", "failed": "failed to grade", "pending": "pending"}


def columns(parts: list[str]) -> list[str]:
    return ["student", "name", "email", *parts, "e2e", "total", "max_total", "status", "seconds", "mistakes",
            "reason"]


def mistakes(record: dict) -> list[tuple[str, str]]:
    """The distinct (part, diagnosis) pairs of a graded record, in test order."""
    seen: dict[tuple[str, str], None] = {}
    for t in record.get("tests", []):
        if t.get("diagnosis"):
            seen[(t["part"], t["diagnosis"])] = None
    return list(seen)


def row(record: dict, parts: list[str]) -> dict:
    points = lambda bucket: "" if not bucket else _num(bucket["score"])  # noqa: E731
    graded = record["status"] == "graded"
    return {
        "student": record["student"], "name": record.get("name", ""), "email": record.get("email", ""),
        **{part: points(record.get("parts", {}).get(part)) for part in parts},
        "e2e": points(record.get("e2e")),
        "total": _num(record["score"]) if graded else "",
        "max_total": _num(record["max_score"]) if graded else "",
        "status": STATUS[record["status"]],
        "seconds": f"{record['seconds']:.1f}" if record.get("seconds") else "",
        "mistakes": " | ".join(f"{part}: {text}" for part, text in mistakes(record)),
        "reason": record.get("reason", ""),
    }


def write_gradebook(path: Path, records: list[dict], parts: list[str]) -> None:
    """Rewrite the gradebook with one row per record, sorted by student."""
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=columns(parts), lineterminator="\n")
    writer.writeheader()
    for record in sorted(records, key=lambda r: r["student"]):
        writer.writerow(row(record, parts))
    atomic_write(path, buffer.getvalue())


def _num(x: float) -> str:
    return f"{round(x, 4):g}"
