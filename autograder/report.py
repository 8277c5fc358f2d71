"""Human reports of a grade: the words for each test, report.md and report.html (jinja2)."""

from __future__ import annotations

import base64
from collections import OrderedDict
from pathlib import Path

import jinja2

from autograder.grade import GradeResult, TestResult

TEMPLATES = jinja2.Environment(loader=jinja2.FileSystemLoader(Path(__file__).with_name("templates")),
                               autoescape=jinja2.select_autoescape(["html"]), keep_trailing_newline=True,
                               undefined=jinja2.StrictUndefined)
MAX_REPORT = 512 * 1024  # characters of report.md / report.html


def part_table(result: GradeResult) -> list[dict]:
    """One row per part (and one for the end-to-end tests): points, maximum, tests passed."""
    rows: OrderedDict[str, dict] = OrderedDict()
    for t in result.tests:
        row = rows.setdefault(t.tags[0], {"part": t.tags[0], "score": 0.0, "max": 0.0, "passed": 0, "tests": 0,
                                          "first_failure": ""})
        row["score"] += t.score
        row["max"] += t.max_score
        row["tests"] += 1
        row["passed"] += t.passed
        if not t.passed and not row["first_failure"]:
            row["first_failure"] = t.message
    return list(rows.values())


def summary_lines(result: GradeResult) -> list[str]:
    """The score table as plain text lines (printed by `grade`, and Gradescope's top-level output)."""
    lines = [f"{'part':<10} {'points':>13}  tests   first problem"]
    for row in part_table(result):
        problem = row["first_failure"][:90]
        lines.append(f"{row['part']:<10} {row['score']:>6.1f} / {row['max']:<5g} {row['passed']:>2}/{row['tests']:<3}  "
                     f"{problem}")
    lines.append(f"{'total':<10} {result.score:>6.1f} / {result.max_score:<5g}")
    if result.partial:
        lines.append("(partial grade: only some tests were selected with --only)")
    return lines


def test_text(t: TestResult) -> str:
    """What a student reads about one test (Gradescope's per-test output and the Markdown report)."""
    if t.passed:
        return "Passed." + (f"\n{t.details}" if t.details else "")
    lines = [f"Failed: {t.message}"]
    f = t.failure
    if f is not None:
        if f.inputs:
            lines += ["Smallest failing input:", f.inputs]
        if f.expected or f.got:
            lines += [f"Expected: {f.expected}", f"Got:      {f.got}"]
    if t.diagnosis:
        lines.append(f"Hint: {t.diagnosis}")
    if t.details:
        lines.append(t.details)
    return "\n".join(lines)


def _render(name: str, result: GradeResult) -> str:
    text = TEMPLATES.get_template(name).render(
        result=result, table=part_table(result), text=test_text,
        png=lambda data: base64.b64encode(data).decode())
    return text if len(text) <= MAX_REPORT else text[:MAX_REPORT] + "\n[report cut: too long]\n"


def write_reports(result: GradeResult, out: Path) -> None:
    """results.json, report.md and report.html into `out` (created if needed)."""
    from autograder.results import write_results
    out.mkdir(parents=True, exist_ok=True)
    write_results(result, out / "results.json")
    (out / "report.md").write_text(_render("report.md.j2", result))
    (out / "report.html").write_text(_render("report.html.j2", result))
