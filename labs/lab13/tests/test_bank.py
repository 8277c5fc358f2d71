"""Every bank mistake loses points in its own part, with no hint but its own; every variant gets full marks."""

from __future__ import annotations

import types

import pytest
from labs.lab13.grading.local import run_checks

from labs.lab13.grading import world
from labs.lab13.grading.bank import load_all, submission_source

ENTRIES = load_all()


def test_every_public_mistake_cites_its_source_and_every_mistake_has_a_hint():
    assert all(e.hint for e in ENTRIES if e.is_mistake)
    assert sum(1 for e in ENTRIES if e.is_mistake and e.source) >= 10


@pytest.mark.slow
@pytest.mark.parametrize("entry", ENTRIES, ids=[e.id for e in ENTRIES])
def test_entry_graded_as_it_should(entry):
    module = types.ModuleType(entry.id)
    exec(compile(submission_source(entry), entry.id, "exec"), module.__dict__)  # noqa: S102 - trusted bank text
    results = run_checks(module, world.load_reference(), (entry.part,))
    lost = [cid for cid, r in results.items() if r[0] < r[1]]
    assert bool(lost) == entry.is_mistake, lost
    assert {r[3] for r in results.values() if r[3]} <= {entry.hint}
