"""Make text that came from the sandboxed child safe to store and show.

    clean("shapes differ\x00\ud800", 200)  ->  "shapes differ"

Anything the child produced (exception messages, printed output, type names) may hold lone UTF-16
surrogates (they survive JSON and crash a UTF-8 writer later), control characters (terminal escapes,
NULs) or megabytes of text. `clean` removes the first two, keeping newlines and tabs, and caps the
length with a marker that says how much was cut. A leaf module: it imports nothing of the grader.
"""

from __future__ import annotations

import re

_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\ud800-\udfff]")  # C0 (not \t \n), DEL, C1, lone surrogates


def clean(text: str, limit: int) -> str:
    """`text` without control characters (except \\n and \\t) and lone surrogates, at most ~`limit` chars."""
    if not isinstance(text, str):
        text = str(text)
    text = _UNSAFE.sub("", text.replace("\r\n", "\n"))
    if len(text) <= limit:
        return text
    return text[:limit] + f" [... {len(text) - limit} more characters cut]"
