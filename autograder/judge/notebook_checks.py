"""The grader's public tests inside a notebook: the read-only test cells of the nbgrader edition.

    from autograder.judge.notebook_checks import visible_test
    visible_test("gae.known_values")   # prints the grader's feedback; raises AssertionError if it fails

A test cell grades the functions that the notebook's kernel has defined: the code cells run so far,
in order, taken as the grader takes a notebook (autograder/sandbox/notebook.py; cells that do not parse never
defined anything, so they are left out), written to a temporary submission file and graded
by the same engine in self-check mode. So a cell runs the grader's public check of that id (the same
inputs and tolerances, in the sandbox), and nbgrader gives the cell its grading.yaml points exactly
when the grader would. A part is graded once per version of the code (cached): its cells cost one run.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from autograder.lab import config
from autograder.sandbox.notebook import cells_to_source

_graded: dict[tuple[str, str], object] = {}  # (module source, part) -> GradeResult


def kernel_cells() -> list[str]:
    """The source of every cell the running IPython kernel has executed, in order."""
    from IPython import get_ipython
    shell = get_ipython()
    if shell is None:
        raise RuntimeError("visible_test runs in a notebook's kernel; from a terminal, use self_check.py")
    return [cell for cell in shell.history_manager.input_hist_raw if cell.strip()]


def kernel_source(cells: list[str]) -> str:
    """The module source of executed cells: their definitions (as in a graded notebook)."""
    return cells_to_source(cells, "this notebook", keep_invalid=False)


def grade_part(source: str, part: str):
    """The self-check grade of `part`'s public tests on `source` (cached per source)."""
    from autograder.judge.grade import grade
    key = (source, part)
    if key not in _graded:
        with tempfile.TemporaryDirectory(prefix="autograder-cell-") as folder:
            module = Path(folder) / config.current().submission
            module.write_text(source, encoding="utf-8")
            _graded[key] = grade(module, only={part}, mode="self_check", lane_count=1)  # one judge: no fork
    return _graded[key]


def visible_test(test_id: str) -> None:
    """Run the grader's public test `test_id` on this notebook's functions: print what the grader
    reports, and raise AssertionError when it fails (so nbgrader gives the cell no points)."""
    from autograder.judge.report import test_text
    result = grade_part(kernel_source(kernel_cells()), test_id.split(".")[0])
    test = next((t for t in result.tests if t.id == test_id), None)
    if test is None:
        raise AssertionError(f"{test_id} is not one of the lab's public tests")
    print(f"[{'PASS' if test.passed else 'FAIL'}] {test.id} ({test.score:g}/{test.max_score:g}): {test.title}")
    print(test_text(test))
    print(result.notice)
    if not test.passed:
        raise AssertionError(f"{test_id} failed: {test.message}")
