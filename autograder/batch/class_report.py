"""DIR/class_report.html, for staff: who got what, and where the class struggles.

Sections: summary numbers (students per status, the roster's counts), the students (one row each:
sortable, searchable, linking to the student's report.html and staff.md; vanilla JS inline, no
network), the histogram of totals and one per part, the distribution of every end-to-end measurement
(e.g. kl_penalty's gold gain) against its threshold, the pass rate of every test (HTML bars: text at
the page's size), the frequent diagnosed mistakes with who made them, the manual overrides, the most
similar pairs (--similarity), who is not on the roster or has no submission, the slowest submissions,
and the submissions that failed to grade. Built from the rows of batch/outputs.py only; plots are PNGs
in base64; rendered again only when what it shows changed (its head names a digest of the summary).
Every value is HTML-escaped (autograder/judge/templating.py), and the page's Content-Security-Policy lets only its
own script run (by hash) and nothing be fetched.
"""

from __future__ import annotations

import base64
import hashlib
import io
import json
import re
import statistics
from collections import Counter
from pathlib import Path

import jinja2

from autograder.batch.gradebook import STATUS, has_total, mistakes
from autograder.batch.overrides import describe
from autograder.batch.store import atomic_write
from autograder.judge import templating

TEMPLATES = Path(__file__).resolve().parent.parent / "templates"
TEMPLATE = "class_report.html.j2"
TOP_MISTAKES = 5     # per part
TOP_SLOWEST = 10


def summarize(records: list[dict], parts: list[str], e2e: dict | None = None, similarity: dict | None = None,
              enrolled: int | None = None) -> dict:
    """The numbers the report shows (plain data; also handy for tests). `e2e`: grading.yaml's e2e section
    (the thresholds of records made before their tests carried `bounds`); `similarity`: the last
    --similarity run's pairs (batch/similarity.py); `enrolled`: the students on the roster (None: no roster)."""
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
        "statuses": {label: n for k, label in STATUS.items() if (n := Counter(r["status"] for r in records)[k])},
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
        "with_roster": enrolled is not None,
        "enrolled": enrolled,
        "absent": [r["student"] for r in records if r["status"] == "absent"],
        "not_on_roster": [r["student"] for r in records if r.get("roster") == "not on the roster"],
        "overrides": [{"student": r["student"], "text": describe(o)} for r in records for o in r.get("overrides", [])],
        "similarity": similarity,
    }


def _roster_row(r: dict, parts: list[str]) -> dict:
    points = {p: (r["parts"].get(p) or {}).get("score") for p in parts}
    return {"student": r["student"], "name": r.get("name", ""), "status": STATUS[r["status"]],
            "total": r["score"] if has_total(r) else None, "max": r["max_score"] if has_total(r) else None,
            "parts": points, "e2e": (r.get("e2e") or {}).get("score"), "detail": r.get("reason", ""),
            "mistakes": [f"{part}: {text}" for part, text in mistakes(r)], "roster": r.get("roster", ""),
            "overridden": bool(r.get("overrides")),
            "report": f"{r['student']}/report.html" if "report.html" in r.get("reports", []) else "",
            "staff": f"{r['student']}/staff.md" if "staff.md" in r.get("reports", []) else ""}


SIDES = {">=": "min", ">": "min", "<=": "max"}


def _measurements(graded: list[dict], e2e: dict) -> list[dict]:
    """Every e2e measurement across the class, with its threshold: the test's own criterion (a record's
    `bounds`), else grading.yaml's min_<metric>/max_<metric>."""
    values: dict[tuple[str, str], list[float]] = {}
    bounds: dict[tuple[str, str], tuple[str, float]] = {}
    for r in graded:
        for t in r["tests"]:
            for metric, value in (t.get("metrics") or {}).items():
                values.setdefault((t["id"], metric), []).append(value)
            for metric, (op, threshold) in (t.get("bounds") or {}).items():
                bounds[(t["id"], metric)] = (op, threshold)
    rows = []
    for (test_id, metric), found in sorted(values.items()):
        spec = e2e.get(test_id.removeprefix("e2e."), {})
        op, threshold = bounds.get((test_id, metric)) or next(
            (({"min": ">=", "max": "<="}[side], spec[f"{side}_{metric}"]) for side in ("min", "max")
             if f"{side}_{metric}" in spec), ("", None))
        rows.append({"test": test_id, "metric": metric, "samples": found, "median": statistics.median(found),
                     "threshold": threshold, "side": SIDES.get(op, ""), "op": op,
                     "passing": sum(_passes(v, op, threshold) for v in found) if threshold is not None else None})
    return rows


def _passes(value: float, op: str, threshold: float) -> bool:
    """`value` is on the passing side of `threshold` (op: ">=", ">" or "<=")."""
    return value >= threshold if op == ">=" else value > threshold if op == ">" else value <= threshold


def write_class_report(path: Path, records: list[dict], parts: list[str], title: str,
                       e2e: dict | None = None, similarity: dict | None = None, enrolled: int | None = None) -> dict:
    """Render the report into `path` (atomically) unless it already shows these records; returns the summary."""
    summary = summarize(records, parts, e2e, similarity, enrolled)
    template = TEMPLATES / TEMPLATE
    digest = hashlib.sha256(json.dumps([summary, title, template.read_text()], sort_keys=True).encode()).hexdigest()
    if _shows(path, digest):
        return summary
    env = templating.environment(jinja2.FileSystemLoader(TEMPLATES))
    html = env.get_template(TEMPLATE).render(title=title, s=summary, digest=digest, script_hash=_script_hash(template),
                                             histogram=_histogram(summary),
                                             part_histograms=_part_histograms(summary),
                                             measurements=_measurement_plots(summary))
    atomic_write(path, html)
    return summary


def _script_hash(template: Path) -> str:
    """The Content-Security-Policy source of the template's own script (no value is rendered into it): the only
    script the page may run, whatever a student's name or message holds."""
    script = re.search(r"<script>(.*?)</script>", template.read_text(), re.S)
    assert script is not None and "{{" not in script.group(1), "the class report's script is static"
    return "sha256-" + base64.b64encode(hashlib.sha256(script.group(1).encode()).digest()).decode()


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
    """A histogram per e2e measurement across the class, its threshold as a dashed line (named in the title:
    no legend over the bars); the axis spans the values and the threshold, never a made-up unit range."""
    plots = []
    for m in summary["measurements"]:
        fig = _figure(4.5, 2.6)
        ax = fig.subplots()
        low, high = _span([*m["samples"], *([m["threshold"]] if m["threshold"] is not None else [])])
        first, last = min(m["samples"]), max(m["samples"])
        width = (high - low) / 20
        bins = [first - width / 2, first + width / 2] if first == last else min(20, max(5, len(m["samples"]) // 3))
        ax.hist(m["samples"], bins=bins, range=None if first == last else (low, high), color="#8172b2",
                edgecolor="white")
        title = f"{m['test']}: {m['metric']}"
        if m["threshold"] is not None:
            ax.axvline(m["threshold"], color="#c44e52", linestyle="--", linewidth=2)
            title += f"\n(dashed: {'minimum' if m['side'] == 'min' else 'maximum'} {m['threshold']:g})"
        ax.set_xlim(low, high)
        ax.set_title(title, fontsize=10)
        ax.set_ylabel("students")
        ax.yaxis.get_major_locator().set_params(integer=True)
        plots.append({**m, "png": _png(fig)})
    return plots


def _span(values: list[float]) -> tuple[float, float]:
    """A range holding every value with a little room; around a single value (every student's run replayed
    the reference's: the same number), 5 % of it on each side."""
    low, high = min(values), max(values)
    pad = (high - low) * 0.08 if high > low else max(abs(low) * 0.05, 0.01)
    return low - pad, high + pad


def _points_histogram(ax, scores: list[float], top: float, label: str) -> None:
    ax.hist(scores, bins=min(20, max(5, len(scores) // 3)), range=(0, top), color="#4c72b0", edgecolor="white")
    ax.set_xlabel(f"{label} (of {top:g})")
    ax.set_ylabel("students")
    ax.yaxis.get_major_locator().set_params(integer=True)


def _figure(width: float, height: float):
    from matplotlib.figure import Figure  # no pyplot: no global state, no GUI backend
    return Figure(figsize=(width, height), layout="constrained")


def _png(fig) -> str:
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=100)
    return base64.b64encode(buffer.getvalue()).decode()
