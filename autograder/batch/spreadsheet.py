"""Every CSV file the grader writes (gradebook.csv, canvas.csv, any later export), inert in a spreadsheet.

    write_csv(Path("gradebook.csv"), ["student", "total"], [{"student": "ada", "total": "12"}])

A cell whose text a spreadsheet could read as a formula is prefixed with a single quote (OWASP's CSV
injection rule): its first character is `=`, `+`, `-`, `@` (or their full-width forms), a tab, a carriage
return or a newline, or it starts with spaces followed by one of them. A plain number ("-1.5", "3e-4") is
written as it is: it is a value, never a formula. So `=HYPERLINK("http://...")` in a file name, an import
message, a student's name or a Gradescope `:name:` reaches staff as text (tests/test_spreadsheet.py;
LibreOffice headless in tests/test_inert_outputs_office.py). tests/test_templating.py fails on any
`csv.writer` or `DictWriter` outside this module.
"""

from __future__ import annotations

import csv
import io
import re
from pathlib import Path
from typing import Any, Iterable

from autograder.batch.store import atomic_write

TRIGGERS = ("=", "+", "-", "@", "\uff1d", "\uff0b", "\uff0d", "\uff20", "\t", "\r", "\n")
NUMBER = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?\Z")


def cell(value: Any) -> str:
    """The text of one cell, quoted with a leading ' when a spreadsheet could take it for a formula."""
    text = "" if value is None else str(value)
    if NUMBER.match(text):
        return text
    return "'" + text if text.lstrip(" ").startswith(TRIGGERS) else text


def csv_text(head: list[str], rows: Iterable[dict]) -> str:
    """The CSV text of `rows` (dicts keyed by `head`), every cell through `cell`, "\\n" line ends."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow([cell(h) for h in head])
    for row in rows:
        writer.writerow([cell(row.get(h, "")) for h in head])
    return buffer.getvalue()


def write_csv(path: Path, head: list[str], rows: Iterable[dict]) -> None:
    """Write `rows` as CSV to `path` atomically (readers see the old file or the new one)."""
    atomic_write(path, csv_text(head, rows))
