"""Every jinja2 environment of the grader, with escaping chosen by the template's family (its name).

    env = environment(jinja2.FileSystemLoader(TEMPLATES))
    env.get_template("report.html.j2").render(...)   # every {{ value }} HTML-escaped
    env.get_template("report.md.j2").render(...)     # every {{ value }} inert markdown

Families, by the name's last suffixes (never the last one alone: "report.html.j2" is HTML):
- HTML (`*.html.j2`, `*.html`, `*.htm`, `*.xml`): jinja2's autoescape; a value is markup only through
  `markupsafe.Markup` (never child text).
- markdown (`*.md.j2`, `*.md`): each `{{ value }}` is finalized to inert markdown: plain words stay as they
  are, anything else becomes an inline code span (newlines folded, the fence longer than any backtick run in
  it). Block values go through the `fence` filter: a fenced code block no line of the value can close.
  `MarkdownSafe` marks the engine's own markdown (the filters' output).
  `authored=True` (the release's handout and notebook introduction only): every value is the lab's or the
  engine's own markdown, written at release from the lab's folder (no submission reaches it): printed as written.
- anything else (scripts, config files: `*.sh.j2`, `*.py.j2`, `run_autograder.j2`): rendered as written; only
  a lab's and the engine's own values go into them, never a submission's.
tests/test_templating.py fails on any `jinja2.Environment(` outside this module.
"""

from __future__ import annotations

import re
from typing import Any

import jinja2

HTML = (".html.j2", ".html", ".htm", ".xml", ".xml.j2", ".htm.j2")
MARKDOWN = (".md.j2", ".md")
PLAIN_WORDS = re.compile(r"[\w .,:;()/=%'?!@+-]*\Z")  # no markdown or HTML markup in it (but at a line start)
LINE_START = ("-", "+", "=")  # a list item or a heading's underline when printed at the start of a line
BACKTICKS = re.compile(r"`+")


class MarkdownSafe(str):
    """Markdown the engine wrote (a code span or fence made here): a markdown template prints it as it is."""


def family(name: str | None) -> str:
    """"html", "markdown" or "plain", from a template's name (a PrefixLoader's "engine/x.md.j2" too)."""
    lowered = (name or "").lower()
    if lowered.endswith(HTML):
        return "html"
    if lowered.endswith(MARKDOWN):
        return "markdown"
    return "plain"


def code_span(value: Any, cell: bool = False) -> MarkdownSafe:
    """`value` as one inline code span: newlines folded to spaces, a fence longer than any backtick run in it;
    `cell`: in a table's cell, where a pipe is escaped (GFM reads `\\|` as a pipe there, code spans too)."""
    text = " ".join(str(value).splitlines())
    text = text.replace("|", "\\|") if cell else text
    fence = "`" * (1 + max((len(run) for run in BACKTICKS.findall(text)), default=0))
    pad = " " if text.startswith("`") or text.endswith("`") or not text.strip() else ""
    return MarkdownSafe(f"{fence}{pad}{text}{pad}{fence}") if text else MarkdownSafe("")


def fence(value: Any) -> MarkdownSafe:
    """`value` as a fenced code block (no trailing newline): nothing inside it is markup, and no line of it can
    close the fence (the fence is longer than any backtick run in the text)."""
    text = str(value)
    ticks = "`" * max(3, 1 + max((len(run) for run in BACKTICKS.findall(text)), default=0))
    return MarkdownSafe(f"{ticks}\n{text}\n{ticks}")


def inline_markdown(value: Any, cell: bool = False) -> str:
    """A value printed in a markdown template: as it is when it is plain words (or engine markdown), else
    one code span (`cell`: in a table's cell)."""
    if isinstance(value, MarkdownSafe):
        return value
    text = "" if value is None else str(value)
    plain = PLAIN_WORDS.match(text) and not text.lstrip().startswith(LINE_START)
    return text if plain else code_span(text, cell)


def cell(value: Any) -> MarkdownSafe:
    """A value inside a markdown table's cell: plain words, or a code span whose pipes stay in the cell."""
    return MarkdownSafe(inline_markdown(value, cell=True))


@jinja2.pass_context
def _finalize(context: jinja2.runtime.Context, value: Any) -> Any:
    return inline_markdown(value) if family(context.name) == "markdown" else value


def environment(loader: jinja2.BaseLoader, authored: bool = False, **options: Any) -> jinja2.Environment:
    """The one way the grader makes a jinja2 environment (escaping by family, strict undefined, trailing
    newline kept); `authored`: markdown values are the lab's own (see the module docstring); `options`: other
    jinja2 settings (never autoescape or finalize)."""
    if {"autoescape", "finalize"} & set(options):
        raise ValueError("escaping is chosen by the template's family (autograder/judge/templating.py)")
    env = jinja2.Environment(loader=loader, autoescape=lambda name: family(name) == "html",
                             finalize=None if authored else _finalize, undefined=jinja2.StrictUndefined,
                             keep_trailing_newline=True, **options)
    env.filters["code"] = code_span
    env.filters["cell"] = cell
    env.filters["fence"] = fence
    return env
