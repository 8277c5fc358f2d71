"""Step: the nbgrader source notebook, generated from the reference and grading.yaml (no second copy).

Cells, in order (nbgrader metadata, schema 3):
    the lab's introduction and what the folder holds      markdown, read-only (the engine's notebook_intro.md.j2)
    the reference's imports, and the engine's visible_test code, read-only (given)
    per part: a heading                                   markdown, read-only
              each function, `### BEGIN SOLUTION` markers and all
                                                          code, solution cell (nbgrader replaces the marked body)
              each public test of the part                code, autograded test cell: `visible_test("<id>")` runs
                                                          the grader's check of that id
                                                          (autograder/judge/notebook_checks.py),
                                                          worth its points in grading.yaml
"""

from __future__ import annotations

import json
import textwrap

from autograder.bundling.outline import Outline
from autograder.bundling.public_config import visible_tests
from autograder.bundling.tree import Tree

ENGINE_IMPORT = "from autograder.judge.notebook_checks import visible_test  # the grader's public tests (test cells)"
KERNEL = {"kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
          "language_info": {"name": "python"}}


def _cell(kind: str, source: str, grade_id: str, *, solution: bool = False, grade: bool = False,
          locked: bool = False, points: float | None = None) -> dict:
    meta: dict[str, object] = {"grade": grade, "grade_id": grade_id, "locked": locked, "schema_version": 3,
                               "solution": solution, "task": False}
    if grade:
        meta["points"] = points
    cell: dict[str, object] = {"cell_type": kind, "id": grade_id, "metadata": {"nbgrader": meta},
                               "source": source.splitlines(keepends=True)}
    if kind == "code":
        cell.update(execution_count=None, outputs=[])
    return cell


def test_cell_source(test_id: str, title: str, points: float) -> str:
    comment = textwrap.wrap(f"The grader's public test {test_id} ({points:g} points): {title}", 88)
    return "".join(f"# {line}\n" for line in comment) + f"visible_test({test_id!r})\n"


def source_notebook(lab: Outline, raw: dict, titles: dict[str, str], intro: str) -> dict:
    visible = visible_tests(raw)
    missing = sorted(set(visible) - set(titles))
    if missing:
        raise ValueError(f"public tests without a check under grading/checks/public/: {', '.join(missing)}")
    cells = [_cell("markdown", intro, "intro", locked=True),
             _cell("code", f"{lab.preamble}\n\n{ENGINE_IMPORT}", "imports", locked=True)]
    for part in lab.parts:
        cells.append(_cell("markdown", f"## Part `{part.name}`: {part.title}", f"part_{part.name}", locked=True))
        cells += [_cell("code", fn.source, fn.name, solution=True) for fn in part.functions]
        for test_id, spec in visible.items():
            if test_id.split(".")[0] == part.name:
                cells.append(_cell("code", test_cell_source(test_id, titles[test_id], spec["points"]),
                                   test_id.replace(".", "_"), grade=True, locked=True, points=spec["points"]))
    return {"cells": cells, "metadata": KERNEL, "nbformat": 4, "nbformat_minor": 5}


def add_source_notebook(tree: Tree, target: str, notebook: dict) -> None:
    tree.add(target, json.dumps(notebook, indent=1, sort_keys=True) + "\n")
