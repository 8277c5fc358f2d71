"""Step: the nbgrader source notebook, generated from the reference and the public tests (no second copy).

Cells, in order (nbgrader metadata, schema 3):
    the lab's docstring                          markdown, read-only
    the reference's imports                      code, read-only (given)
    per part: a heading                          markdown, read-only
              each function, `### BEGIN SOLUTION` markers and all
                                                 code, solution cell (nbgrader replaces the marked body)
              each visible test of the part      code, autograded test cell, points from grading.yaml
The test cell of `part.name` is `tests/test_<part>.py::test_<name>` with its imports, then a call.
"""

from __future__ import annotations

import ast
import json
from pathlib import Path

from autograder.release.lab import Lab
from autograder.release.public_config import visible_tests
from autograder.release.tree import Tree

NOTEBOOK_NOTE = ("**In this notebook**, write each function in its cell. The read-only cells after each part "
                 "are its visible graded tests: run them to check your work. More tests run at grading.")
KERNEL = {"kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
          "language_info": {"name": "python"}}


def _cell(kind: str, source: str, grade_id: str, *, solution: bool = False, grade: bool = False,
          locked: bool = False, points: float | None = None) -> dict:
    meta = {"grade": grade, "grade_id": grade_id, "locked": locked, "schema_version": 3,
            "solution": solution, "task": False}
    if grade:
        meta["points"] = points
    cell = {"cell_type": kind, "id": grade_id, "metadata": {"nbgrader": meta}, "source": source.splitlines(keepends=True)}
    if kind == "code":
        cell.update(execution_count=None, outputs=[])
    return cell


def test_cell_source(tests: Path, test_id: str) -> str:
    """`test_<name>` of `tests/test_<part>.py` with the module's imports (but not `from rlhf import`), then a call."""
    part, name = test_id.split(".", 1)
    path = tests / f"test_{part}.py"
    source = path.read_text()
    tree = ast.parse(source)
    imports = [ast.get_source_segment(source, node) for node in tree.body
               if isinstance(node, (ast.Import, ast.ImportFrom)) and getattr(node, "module", None) != "rlhf"]
    function = next((node for node in tree.body if isinstance(node, ast.FunctionDef)
                     and node.name == f"test_{name}"), None)
    if function is None:
        raise ValueError(f"visible test {test_id} has no public test test_{name} in {path}")
    return "\n".join(imports) + "\n\n\n" + ast.get_source_segment(source, function) + f"\n\n\ntest_{name}()\n"


def source_notebook(lab: Lab, raw: dict, tests: Path) -> dict:
    visible = visible_tests(raw)
    cells = [_cell("markdown", f"# {raw['assignment']}\n\n{lab.docstring}\n\n{NOTEBOOK_NOTE}", "intro", locked=True),
             _cell("code", lab.preamble, "imports", locked=True)]
    for part in lab.parts:
        cells.append(_cell("markdown", f"## Part `{part.name}`: {part.title}", f"part_{part.name}", locked=True))
        cells += [_cell("code", fn.source, fn.name, solution=True) for fn in part.functions]
        for test_id, spec in visible.items():
            if test_id.split(".")[0] == part.name:
                cells.append(_cell("code", test_cell_source(tests, test_id), test_id.replace(".", "_"),
                                   grade=True, locked=True, points=spec["points"]))
    return {"cells": cells, "metadata": KERNEL, "nbformat": 4, "nbformat_minor": 5}


def add_source_notebook(tree: Tree, target: str, notebook: dict) -> None:
    tree.add(target, json.dumps(notebook, indent=1, sort_keys=True) + "\n")
