"""Human reports of a grade: report.md and report.html for students, staff.md for course staff (jinja2).

    write_reports(result, Path("out"))   # results.json, report.md, report.html, staff.md

The student reports show what students may see right away (autograder/judge/outcome.py: visible outcomes,
inputs only where released); staff.md shows every test, every input, and how the child was isolated.
Each distinct hint is shown once, in a Hints section listing the tests it explains; each of those tests
refers to it by number (results.json keeps each test's hint in full: Gradescope shows tests one by one).
Imports only outcome, results, templating and jinja2: rendering needs no torch. Every value is escaped
(autograder/judge/templating.py: HTML in report.html, inert markdown in report.md and staff.md).
"""

from __future__ import annotations

import base64
from pathlib import Path

import jinja2

from autograder.judge import templating
from autograder.judge.outcome import (
    GradeResult,
    hint_groups,
    inputs_shown,
    outcome_shown,
    part_table,
    summary_lines,
    test_text,
)
from autograder.judge.results import write_results
from autograder.lab import config

TEMPLATES = templating.environment(jinja2.FileSystemLoader(Path(__file__).resolve().parents[1] / "templates"))
MAX_REPORT = 512 * 1024  # characters of one report
__all__ = ["summary_lines", "test_text", "write_reports"]


def render(name: str, result: GradeResult, student: bool) -> str:
    """One template for one reader: `student` shows only what students may see right away."""
    shown, release = result.shown(student), "visible" if student else None
    hints = hint_groups(shown, release)
    number = {hint: i for i, (hint, _) in enumerate(hints, start=1)}

    def text(t) -> str:
        ref = f"hint {number[t.finding.hint]} under Hints above" if t.finding.hint in number and not t.passed else ""
        return test_text(t, show_inputs=inputs_shown(t, release), hint_ref=ref,
                         show_outcome=outcome_shown(t, release))

    text_out = TEMPLATES.get_template(name).render(
        result=result, tests=shown, table=part_table(shown, release), text=text, student=student, hints=hints,
        title=config.current().title,
        detailed=lambda t: outcome_shown(t, release),
        output=result.output if not student or result.output_visibility == "visible" else "",
        png=lambda data: base64.b64encode(data).decode(),
        mime=lambda data: "image/svg+xml" if data.startswith(b"<svg") else "image/png")
    return text_out if len(text_out) <= MAX_REPORT else text_out[:MAX_REPORT] + "\n[report cut: too long]\n"


def write_reports(result: GradeResult, out: Path, with_leaderboard: bool = False) -> None:
    """results.json, report.md, report.html (students) and staff.md into `out` (created if needed)."""
    out.mkdir(parents=True, exist_ok=True)
    write_results(result, out / "results.json", with_leaderboard)
    for name, template, student in (("report.md", "report.md.j2", True), ("report.html", "report.html.j2", True),
                                    ("staff.md", "report.md.j2", False)):
        (out / name).write_text(render(template, result, student), encoding="utf-8", errors="replace")
