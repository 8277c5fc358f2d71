"""Step: refuse to release a student tree that holds solution lines, hidden check code or secrets.

Run on the student bundle at build time (and by the tests, also on nbgrader's student notebook).
"""

from __future__ import annotations

from pathlib import Path

from autograder.lab.starter import BEGIN, END

MIN_CHARS = 12  # shorter lines ("return d", "if kind == ...") are not distinctive enough to search for


class LeakError(Exception):
    """A student-facing file contains material that must stay with the grader."""


def solution_lines(reference_source: str, starter_source: str) -> list[str]:
    """The distinctive lines between the solution markers of the reference, stripped.

    A line that the starter also holds (a formula quoted in a docstring) is interface, not solution.
    """
    lines, inside = [], False
    for line in reference_source.splitlines():
        stripped = line.strip()
        if stripped in (BEGIN, END):
            inside = stripped == BEGIN
        elif inside and len(stripped) >= MIN_CHARS and stripped not in starter_source:
            lines.append(stripped)
    return lines


def hidden_check_lines(hidden_dir: Path, public_sources: list[str]) -> list[str]:
    """Distinctive code lines of the hidden checks that no public source shares (tools' calls, say)."""
    lines = set()
    for path in sorted(hidden_dir.rglob("*.py")):
        for line in path.read_text().splitlines():
            stripped = line.strip()
            if (len(stripped) >= 40 and not stripped.startswith(("from ", "import ", "#", '"""'))
                    and not any(stripped in source for source in public_sources)):
                lines.add(stripped)
    return sorted(lines)


def find_leaks(files: dict[str, bytes], forbidden: dict[str, list[str]]) -> list[str]:
    """`file: kind: text` for every forbidden text found in a file (binary files are searched as bytes)."""
    leaks = []
    for name, data in sorted(files.items()):
        for kind, texts in forbidden.items():
            leaks += [f"{name}: {kind}: {text}" for text in texts if text.encode() in data]
    return leaks


def check_no_leaks(files: dict[str, bytes], forbidden: dict[str, list[str]]) -> None:
    leaks = find_leaks(files, forbidden)
    if leaks:
        raise LeakError("refusing to release student files holding grader-only material:\n  " + "\n  ".join(leaks))
