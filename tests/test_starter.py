"""The starter is generated from the reference, stays in sync, and holds no line of a solution body."""

from __future__ import annotations

import pytest
from training import CONTRACT, probe_inputs

from autograder.lab.paths import REFERENCE, STARTER
from autograder.lab.starter import BEGIN, END, strip_solutions


def solution_lines(source: str) -> list[str]:
    lines, inside = [], False
    for line in source.splitlines():
        if line.strip() == BEGIN:
            inside = True
        elif line.strip() == END:
            inside = False
        elif inside and line.strip() and not line.strip().startswith("#"):
            lines.append(line.strip())
    return lines


def test_committed_starter_is_in_sync_with_the_reference():
    assert STARTER.read_text() == strip_solutions(REFERENCE.read_text()), \
        "assignment/rlhf.py is out of date: run `python -m autograder starter`"


def test_no_solution_line_reaches_the_starter():
    starter = {line.strip() for line in STARTER.read_text().splitlines()}
    leaked = [line for line in solution_lines(REFERENCE.read_text()) if line in starter]
    assert not leaked
    assert BEGIN not in STARTER.read_text() and END not in STARTER.read_text()


def test_every_contract_function_is_marked():
    source = REFERENCE.read_text()
    assert source.count(BEGIN) == source.count(END) == len(CONTRACT)


def test_starter_raises_not_implemented_everywhere(starter):
    calls = probe_inputs()
    assert set(calls) == set(CONTRACT)
    for name, args in calls.items():
        with pytest.raises(NotImplementedError, match=name):
            getattr(starter, name)(*args)


@pytest.mark.parametrize("source", [
    f"def f():\n    {BEGIN}\n    return 1\n",
    f"def f():\n    {END}\n",
    f"def f():\n    {BEGIN}\n    {BEGIN}\n",
])
def test_unbalanced_markers_are_refused(source):
    with pytest.raises(ValueError):
        strip_solutions(source)
