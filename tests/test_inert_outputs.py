"""Every page and export grade-all writes from a hostile class is inert (tests/hostile_class.py): no element,
attribute or style of a page carries a payload's script or remote address, no markdown report turns one into
markup, no CSV cell begins like a formula; grade-all keeps its own files apart from entries named like them
and walks an entry of 1,500 nested folders. Headless Chromium and LibreOffice open the same outputs in
tests/test_inert_outputs_browser.py (slow)."""

from __future__ import annotations

import csv
import io
import json
import os
import re
import tempfile
from html.parser import HTMLParser
from pathlib import Path

import pytest
from hostile_class import RAN, build

from autograder.batch import run, spreadsheet

HOST = "127.0.0.1:9"


ACTIVE = {"src", "href", "srcdoc", "action", "formaction", "content", "style", "data", "background", "poster",
          "srcset", "xlink:href", "ping"}


class Elements(HTMLParser):
    """Every element of a page as (tag, {attribute: value}, the text of a script or style element)."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.found: list[tuple[str, dict, str]] = []

    def handle_starttag(self, tag, attrs):
        self.found.append((tag, {k: v or "" for k, v in attrs}, ""))

    def handle_data(self, data):
        if self.found and self.found[-1][0] in ("script", "style"):
            tag, attrs, text = self.found[-1]
            self.found[-1] = (tag, attrs, text + data)


def active(html: str) -> list[str]:
    """What in `html` could run a payload's script or fetch from its host (empty: the page is inert)."""
    parser = Elements()
    parser.feed(html)
    bad = []
    for tag, attrs, text in parser.found:
        if tag in ("iframe", "svg", "object", "embed", "base", "form", "frame"):
            bad.append(f"<{tag}>")
        if tag == "meta" and attrs.get("http-equiv", "").lower() == "refresh":
            bad.append("<meta refresh>")
        for name, value in attrs.items():  # text in a title or alt is text; a handler or an address is not
            if name.startswith("on") or (name in ACTIVE and (RAN in value or HOST in value)):
                bad.append(f"<{tag} {name}={value[:60]!r}>")
        if RAN in text or HOST in text:
            bad.append(f"<{tag}>{text[:60]!r}")
    return bad


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    pytest.importorskip("copydetect")  # the similarity pages (pip install -e ".[dev]")
    pytest.importorskip("nbconvert")   # the nbgrader feedback page
    with pytest.MonkeyPatch.context() as monkeypatch:
        return build(tmp_path_factory.mktemp("hostile"), HOST, monkeypatch)


def test_the_class_is_hostile_everywhere(built):
    """The payloads reached every output (escaped): a test that finds nothing because nothing arrived proves nothing."""
    for page in built["pages"]:
        assert "onerror" in page.read_text(), page
    for table in built["csv"]:
        assert "HYPERLINK" in table.read_text(), table
    for report in built["markdown"]:
        assert "onerror" in report.read_text(), report


def test_every_page_is_inert(built):
    assert len(built["pages"]) >= 6  # class report, similarity pages, reports, the feedback page
    found = {page.name: active(page.read_text()) for page in built["pages"]}
    assert not any(found.values()), found


def test_every_markdown_report_is_inert(built):
    """report.md and staff.md as a markdown viewer renders them (raw HTML allowed, as GitHub and Jupyter do)."""
    markdown_it = pytest.importorskip("markdown_it")
    md = markdown_it.MarkdownIt("commonmark", {"html": True}).enable("table")
    found = {str(p): active(md.render(p.read_text())) for p in built["markdown"]}
    assert not any(found.values()), found


def test_no_csv_cell_begins_like_a_formula(built):
    for table in built["csv"]:
        for row in csv.reader(io.StringIO(table.read_text())):
            for cell in row:
                assert cell == spreadsheet.cell(cell.lstrip("'")) or cell.startswith("'"), (table.name, cell)
                assert not cell.lstrip(" ").startswith(spreadsheet.TRIGGERS) or spreadsheet.NUMBER.match(cell), \
                    (table.name, cell)


def test_similarity_compares_the_padded_copy_and_names_what_it_left_out(built):
    out = built["out"][0]
    found = json.loads((out / "_similarity" / "pairs.json").read_text())
    students = {p.parent.name for p in out.glob("*/grade.json")}
    assert found["compared"] + len(found["skipped"]) == len(students), found  # none dropped silently
    assert found["compared"] == 3 and len(found["pairs"]) == 3, found  # the 1.6 MB padded copy is compared
    assert all(min(p["similarity_a"], p["similarity_b"]) > 0.9 for p in found["pairs"]), found["pairs"]
    (skipped,) = found["skipped"].values()
    assert skipped.startswith("nothing to compare"), skipped
    assert "Not compared (1)" in (out / "class_report.html").read_text()


def test_similarity_names_a_submission_too_large_even_without_comments():
    from autograder.batch.similarity import MAX_BYTES, comparable, strip_comments
    code, why = comparable('x = "' + "a" * MAX_BYTES + '"\n')  # one string: code, not a docstring
    assert code == "" and "MiB of code once comments and docstrings are removed" in why
    assert strip_comments('"""doc"""\ndef f():\n    """doc"""\n    # note\n    return "s"  # x\n') == \
        'def f():\n    return "s"  \n'
    assert strip_comments("def f(:\n# note\n    x = 1\n") == "def f(:\n    x = 1\n"  # not Python: whole-line only


def fake(todo, only, version, *rest):
    for sub, key in todo:
        yield {"student": sub.student, "key": key, "status": "graded", "reason": "", "score": 1.0, "max_score": 2.0,
               "parts": {}, "e2e": None, "tests": [], "files": {"report.html": "<p>r</p>"}, "seconds": 1.0,
               "worker_grader": version}


def test_entries_named_like_grade_alls_own_files_are_kept_apart(tmp_path, monkeypatch):
    """Entries named after every file grade-all writes or reads in DIR (any case, as a folder or as a file),
    and one 1,500 folders deep: every run grades them all under other keys, and DIR holds only student folders
    and grade-all's own files. The class lies outside pytest's tmp folder: pytest's clean-up recurses."""
    monkeypatch.setattr(run, "_outcomes", fake)
    with tempfile.TemporaryDirectory() as where:
        subs = Path(where) / "class"
        try:
            entries_kept_apart(subs, tmp_path / "out")
        finally:
            if (subs / "deep" / "d").is_dir():
                nest(subs / "deep", 1500, remove=True)


def entries_kept_apart(subs: Path, out: Path) -> None:
    names = [*run.OWN_FILES, *run.STAFF_FILES, "GRADEBOOK.CSV", "ada"]
    for name in names:
        (subs / name).mkdir(parents=True, exist_ok=True)
        (subs / name / "rlhf.py").write_text("def compute_gae(): pass\n")
    (subs / "canvas.csv.py").write_text("def compute_gae(): pass\n")  # a file named after an output
    (subs / "deep").mkdir()
    (subs / "deep" / "rlhf.py").write_text("def compute_gae(): pass\n")
    nest(subs / "deep", 1500)  # deeper than any recursion limit a walk could hit
    out.mkdir()
    (out / "overrides.csv").write_text("student,target,points,reason\nada,gae,1,by hand\n")
    for _ in range(2):  # a rerun too
        summary = run.grade_all(subs, out)
        assert summary.students == len(names) + 2 and not summary.statuses.keys() - {"graded"}, summary
    students = {p.parent.name for p in out.glob("*/grade.json")}
    others = {p.name for p in out.iterdir() if p.name not in students and not p.name.startswith(".")}
    assert others <= set(run.OWN_FILES + run.STAFF_FILES), others
    assert (out / "gradebook.csv").is_file() and (out / "canvas.csv").is_file() and (out / "batch.json").is_file()
    assert (out / "overrides.csv").read_text().endswith("by hand\n")  # staff's file, untouched
    assert "1 (was 0): by hand" in (out / "gradebook.csv").read_text()
    assert {s.lower() for s in students}.isdisjoint(n.lower() for n in run.OWN_FILES + run.STAFF_FILES)
    assert re.search(r"^gradebook\.csv-\d,", (out / "gradebook.csv").read_text(), re.M)


def nest(folder: Path, depth: int, remove: bool = False) -> None:
    """Make (or remove) `depth` nested folders `d/d/...` in `folder`, by file descriptor (no long path, no
    recursion: pathlib and shutil recurse)."""
    fds = [os.open(folder, os.O_RDONLY)]
    try:
        for _ in range(depth):
            if not remove:
                os.mkdir("d", dir_fd=fds[-1])
            fds.append(os.open("d", os.O_RDONLY, dir_fd=fds[-1]))
        if remove:
            for _ in range(depth):
                os.close(fds.pop())
                os.rmdir("d", dir_fd=fds[-1])
    finally:
        for fd in fds:
            os.close(fd)
