"""DIR/class_report.html: where the class struggles (jinja2, plots as PNG embedded in base64).

Sections: summary numbers, score histogram, points per part, pass rate of every test, the most
frequent diagnosed mistakes per part, the slowest submissions, and the submissions that failed
to grade with the reason. Built from the students' records (DIR/<student>/grade.json) only, and
rendered again only when what it shows changed (its head names a digest of the summary).
"""

from __future__ import annotations

import base64
import hashlib
import io
import json
import statistics
from collections import Counter
from pathlib import Path

import jinja2

from autograder.batch.gradebook import mistakes
from autograder.batch.store import atomic_write

TEMPLATES = Path(__file__).resolve().parent.parent / "templates"
TEMPLATE = "class_report.html.j2"
TOP_MISTAKES = 5     # per part
TOP_SLOWEST = 10


def summarize(records: list[dict], parts: list[str]) -> dict:
    """The numbers the report shows (plain data; also handy for tests)."""
    graded = [r for r in records if r["status"] == "graded"]
    totals = [r["score"] for r in graded]
    by_test: dict[str, list[int]] = {}
    for r in graded:
        for t in r["tests"]:
            by_test.setdefault(t["id"], []).append(int(t["passed"]))
    part_rows = []
    for part in [*parts, "e2e"]:
        buckets = [(r["e2e"] if part == "e2e" else r["parts"].get(part)) for r in graded]
        buckets = [b for b in buckets if b]
        if buckets:
            part_rows.append({"part": part, "mean": statistics.fmean(b["score"] for b in buckets),
                              "max": max(b["max"] for b in buckets), "students": len(buckets),
                              "full": sum(b["score"] >= b["max"] for b in buckets)})
    counts: dict[str, Counter] = {}
    for r in graded:
        for part, text in mistakes(r):
            counts.setdefault(part, Counter())[text] += 1
    return {
        "students": len(records),
        "graded": len(graded),
        "failed": [{"student": r["student"], "reason": r["reason"]} for r in records if r["status"] == "failed"],
        "pending": [r["student"] for r in records if r["status"] == "pending"],
        "mean": statistics.fmean(totals) if totals else None,
        "median": statistics.median(totals) if totals else None,
        "max_score": max((r["max_score"] for r in graded), default=None),
        "totals": totals,
        "parts": part_rows,
        "tests": [{"id": tid, "passed": sum(v), "students": len(v), "rate": sum(v) / len(v)}
                  for tid, v in by_test.items()],
        "mistakes": {part: [{"text": text, "students": n} for text, n in c.most_common(TOP_MISTAKES)]
                     for part, c in counts.items()},
        "slowest": [{"student": r["student"], "seconds": r["seconds"], "status": r["status"]}
                    for r in sorted((r for r in records if r.get("seconds")), key=lambda r: -r["seconds"])
                    [:TOP_SLOWEST]],
    }


def write_class_report(path: Path, records: list[dict], parts: list[str], title: str) -> dict:
    """Render the report into `path` (atomically) unless it already shows these records; returns the summary."""
    summary = summarize(records, parts)
    template = TEMPLATES / TEMPLATE
    digest = hashlib.sha256(json.dumps([summary, title, template.read_text()], sort_keys=True).encode()).hexdigest()
    if _shows(path, digest):
        return summary
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(TEMPLATES), autoescape=True,
                             undefined=jinja2.StrictUndefined)
    html = env.get_template(TEMPLATE).render(title=title, s=summary, digest=digest, histogram=_histogram(summary),
                                             pass_rates=_pass_rates(summary))
    atomic_write(path, html)
    return summary


def _shows(path: Path, digest: str) -> bool:
    """The report at `path` was rendered from the same summary (its head names the digest)."""
    try:
        with open(path, encoding="utf-8") as f:
            return f'content="{digest}"' in f.read(2048)
    except OSError:
        return False


def _histogram(summary: dict) -> str:
    if not summary["totals"]:
        return ""
    fig = _figure(6, 2.8)
    ax = fig.subplots()
    top = summary["max_score"] or max(summary["totals"]) or 1.0
    ax.hist(summary["totals"], bins=min(20, max(5, len(summary["totals"]) // 3)), range=(0, top),
            color="#4c72b0", edgecolor="white")
    ax.set_xlabel(f"total points (of {top:g})")
    ax.set_ylabel("students")
    ax.yaxis.get_major_locator().set_params(integer=True)
    return _png(fig)


def _pass_rates(summary: dict) -> str:
    tests = summary["tests"]
    if not tests:
        return ""
    fig = _figure(6, 0.6 + 0.22 * len(tests))
    ax = fig.subplots()
    ids = [t["id"] for t in tests][::-1]
    rates = [100 * t["rate"] for t in tests][::-1]
    ax.barh(ids, rates, color=["#55a868" if r >= 50 else "#c44e52" for r in rates])
    ax.set_xlim(0, 100)
    ax.set_xlabel("students who pass (%)")
    ax.tick_params(axis="y", labelsize=7)
    return _png(fig)


def _figure(width: float, height: float):
    from matplotlib.figure import Figure  # no pyplot: no global state, no GUI backend
    return Figure(figsize=(width, height), layout="constrained")


def _png(fig) -> str:
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=100)
    return base64.b64encode(buffer.getvalue()).decode()
