"""DIR/class_report.html, for staff: who got what, and where the class struggles.

Sections: summary numbers (students per status), the roster (one row per student: sortable,
searchable, linking to the student's report.html; vanilla JS inline, no network), the histogram of
totals and one per part, the distribution of every end-to-end measurement (e.g. kl_penalty's gold
gain) against its grading.yaml threshold, the pass rate of every test, the frequent diagnosed
mistakes with who made them, the slowest submissions, and the submissions that failed to grade.
Built from the students' records (DIR/<student>/grade.json) only; plots are PNGs in base64; rendered
again only when what it shows changed (its head names a digest of the summary).
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

from autograder.batch.gradebook import STATUS, has_total, mistakes
from autograder.batch.store import atomic_write

TEMPLATES = Path(__file__).resolve().parent.parent / "templates"
TEMPLATE = "class_report.html.j2"
TOP_MISTAKES = 5     # per part
TOP_SLOWEST = 10


def summarize(records: list[dict], parts: list[str], e2e: dict | None = None) -> dict:
    """The numbers the report shows (plain data; also handy for tests). `e2e`: grading.yaml's e2e section
    (its min_/max_ keys are the thresholds drawn on the measurements' distributions)."""
    scored = [r for r in records if has_total(r)]
    graded = [r for r in records if r["status"] == "graded"]
    totals = [r["score"] for r in scored]
    by_test: dict[str, list[int]] = {}
    for r in graded:
        for t in r["tests"]:
            by_test.setdefault(t["id"], []).append(int(t["passed"]))
    part_rows, part_scores = [], {}
    for part in [*parts, "e2e"]:
        buckets = [b for b in ((r["e2e"] if part == "e2e" else r["parts"].get(part)) for r in scored) if b]
        if buckets:
            part_scores[part] = {"scores": [b["score"] for b in buckets], "max": max(b["max"] for b in buckets)}
            part_rows.append({"part": part, "mean": statistics.fmean(b["score"] for b in buckets),
                              "max": part_scores[part]["max"], "students": len(buckets),
                              "full": sum(b["score"] >= b["max"] for b in buckets)})
    who: dict[str, dict[str, list[str]]] = {}
    for r in graded:
        for part, text in mistakes(r):
            who.setdefault(part, {}).setdefault(text, []).append(r["student"])
    return {
        "students": len(records),
        "graded": len(graded),
        "statuses": {STATUS[k]: n for k, n in sorted(Counter(r["status"] for r in records).items())},
        "failed": [{"student": r["student"], "reason": r["reason"]} for r in records if r["status"] == "failed"],
        "pending": [r["student"] for r in records if r["status"] == "pending"],
        "mean": statistics.fmean(totals) if totals else None,
        "median": statistics.median(totals) if totals else None,
        "max_score": max((r["max_score"] for r in scored), default=None),
        "totals": totals,
        "parts": part_rows,
        "part_scores": part_scores,
        "measurements": _measurements(graded, e2e or {}),
        "tests": [{"id": tid, "passed": sum(v), "students": len(v), "rate": sum(v) / len(v)}
                  for tid, v in by_test.items()],
        "mistakes": {part: [{"text": text, "students": len(names), "who": sorted(names)}
                            for text, names in sorted(found.items(), key=lambda kv: -len(kv[1]))[:TOP_MISTAKES]]
                     for part, found in who.items()},
        "roster": [_roster_row(r, parts) for r in sorted(records, key=lambda r: r["student"])],
        "slowest": [{"student": r["student"], "seconds": r["seconds"], "status": STATUS[r["status"]]}
                    for r in sorted((r for r in records if r.get("seconds")), key=lambda r: -r["seconds"])
                    [:TOP_SLOWEST]],
    }


def _roster_row(r: dict, parts: list[str]) -> dict:
    points = {p: (r["parts"].get(p) or {}).get("score") for p in parts}
    return {"student": r["student"], "name": r.get("name", ""), "status": STATUS[r["status"]],
            "total": r["score"] if has_total(r) else None, "max": r["max_score"] if has_total(r) else None,
            "parts": points, "e2e": (r.get("e2e") or {}).get("score"), "detail": r.get("reason", ""),
            "mistakes": [f"{part}: {text}" for part, text in mistakes(r)],
            "report": f"{r['student']}/report.html" if "report.html" in r.get("reports", []) else "",
            "staff": f"{r['student']}/staff.md" if "staff.md" in r.get("reports", []) else ""}


def _measurements(graded: list[dict], e2e: dict) -> list[dict]:
    """Every e2e measurement across the class, with its threshold (grading.yaml min_<metric>/max_<metric>)."""
    values: dict[tuple[str, str], list[float]] = {}
    for r in graded:
        for t in r["tests"]:
            for metric, value in (t.get("metrics") or {}).items():
                values.setdefault((t["id"], metric), []).append(value)
    rows = []
    for (test_id, metric), found in sorted(values.items()):
        spec = e2e.get(test_id.removeprefix("e2e."), {})
        bound = next(((side, spec[f"{side}_{metric}"]) for side in ("min", "max") if f"{side}_{metric}" in spec),
                     None)
        rows.append({"test": test_id, "metric": metric, "samples": found, "median": statistics.median(found),
                     "threshold": bound[1] if bound else None, "side": bound[0] if bound else "",
                     "passing": sum((v >= bound[1]) if bound[0] == "min" else (v <= bound[1]) for v in found)
                     if bound else None})
    return rows


def write_class_report(path: Path, records: list[dict], parts: list[str], title: str,
                       e2e: dict | None = None) -> dict:
    """Render the report into `path` (atomically) unless it already shows these records; returns the summary."""
    summary = summarize(records, parts, e2e)
    template = TEMPLATES / TEMPLATE
    digest = hashlib.sha256(json.dumps([summary, title, template.read_text()], sort_keys=True).encode()).hexdigest()
    if _shows(path, digest):
        return summary
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(TEMPLATES), autoescape=True,
                             undefined=jinja2.StrictUndefined)
    html = env.get_template(TEMPLATE).render(title=title, s=summary, digest=digest, histogram=_histogram(summary),
                                             part_histograms=_part_histograms(summary),
                                             measurements=_measurement_plots(summary), pass_rates=_pass_rates(summary))
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
    _points_histogram(fig.subplots(), summary["totals"], summary["max_score"] or max(summary["totals"]) or 1.0,
                      "total points")
    return _png(fig)


def _part_histograms(summary: dict) -> str:
    """One small histogram per part (and e2e): how many students got how many of its points."""
    parts = summary["part_scores"]
    if not parts:
        return ""
    columns = min(3, len(parts))
    rows = -(-len(parts) // columns)
    fig = _figure(3.2 * columns, 2.2 * rows)
    axes = fig.subplots(rows, columns, squeeze=False).ravel()
    for ax, (part, found) in zip(axes, parts.items()):
        _points_histogram(ax, found["scores"], found["max"] or 1.0, part)
    for ax in axes[len(parts):]:
        ax.set_visible(False)
    return _png(fig)


def _measurement_plots(summary: dict) -> list[dict]:
    """A histogram per e2e measurement across the class, its threshold as a dashed line."""
    plots = []
    for m in summary["measurements"]:
        fig = _figure(4.5, 2.4)
        ax = fig.subplots()
        ax.hist(m["samples"], bins=min(20, max(5, len(m["samples"]) // 3)), color="#8172b2", edgecolor="white")
        if m["threshold"] is not None:
            ax.axvline(m["threshold"], color="#c44e52", linestyle="--",
                       label=f"{'minimum' if m['side'] == 'min' else 'maximum'} {m['threshold']:g}")
            ax.legend(loc="best", fontsize=8, framealpha=0.8)
        ax.set_xlabel(f"{m['test']}: {m['metric']}")
        ax.set_ylabel("students")
        ax.yaxis.get_major_locator().set_params(integer=True)
        plots.append({**m, "png": _png(fig)})
    return plots


def _points_histogram(ax, scores: list[float], top: float, label: str) -> None:
    ax.hist(scores, bins=min(20, max(5, len(scores) // 3)), range=(0, top), color="#4c72b0", edgecolor="white")
    ax.set_xlabel(f"{label} (of {top:g})")
    ax.set_ylabel("students")
    ax.yaxis.get_major_locator().set_params(integer=True)


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
