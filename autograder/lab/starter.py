"""Generate the student starter from the reference: solution bodies become TODO stubs.

The reference marks each function body with nbgrader's markers:

        ### BEGIN SOLUTION
        ...the reference code...
        ### END SOLUTION

and the starter keeps everything else (signatures, docstrings, comments) and replaces each marked
block with a TODO and `raise NotImplementedError(...)` naming the function.
"""

from __future__ import annotations

import re

BEGIN, END = "### BEGIN SOLUTION", "### END SOLUTION"
_DEF = re.compile(r"^\s*def (\w+)\(")


def strip_solutions(source: str) -> str:
    """Replace every marked solution block of `source` by a stub; raise on unbalanced markers."""
    out: list[str] = []
    function = None
    inside = False
    for number, line in enumerate(source.splitlines(keepends=True), start=1):
        if (match := _DEF.match(line)) is not None:
            function = match.group(1)
        stripped = line.strip()
        if stripped == BEGIN:
            if inside:
                raise ValueError(f"line {number}: {BEGIN} inside another solution block")
            inside = True
            indent = line[: len(line) - len(line.lstrip())]
            name = function or "this"
            out.append(f"{indent}# TODO: implement {name} (see the docstring above).\n")
            out.append(f'{indent}raise NotImplementedError("{name} is not implemented yet")\n')
        elif stripped == END:
            if not inside:
                raise ValueError(f"line {number}: {END} without {BEGIN}")
            inside = False
        elif not inside:
            out.append(line)
    if inside:
        raise ValueError(f"{BEGIN} is never closed")
    return "".join(out)
