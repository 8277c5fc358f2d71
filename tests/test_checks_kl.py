"""The kl checks: the reference gets full marks, the starter none, every bank entry is told apart."""

from __future__ import annotations

from pathlib import Path

import pytest

from autograder import bank
from autograder.grade import GradeResult, grade
from autograder.paths import REFERENCE, STARTER

PART = "kl"
ENTRIES = [e for e in bank.load_all() if e.part == PART]


def grade_part(path: Path) -> GradeResult:
    return grade(path, only={PART})


def grade_entry(entry: bank.Entry, tmp_path: Path) -> GradeResult:
    path = tmp_path / "rlhf.py"
    path.write_text(bank.submission_source(entry))
    return grade_part(path)


def test_reference_gets_full_marks():
    result = grade_part(REFERENCE)
    assert result.tests and all(t.tags[0] == PART for t in result.tests)
    assert result.score == result.max_score == 20, [(t.id, t.message) for t in result.tests if not t.passed]


def test_starter_gets_zero_saying_not_implemented():
    result = grade_part(STARTER)
    assert result.score == 0
    for t in result.tests:
        assert "not implemented" in t.message and "NotImplementedError" in t.message, (t.id, t.message)


def test_bank_has_mistakes_with_hints_and_variants():
    mistakes = [e for e in ENTRIES if e.is_mistake]
    assert len(mistakes) >= 8 and len(ENTRIES) - len(mistakes) >= 2
    assert len({e.name for e in ENTRIES}) == len(ENTRIES)
    for e in mistakes:
        assert e.hint and "\n" not in e.hint, e.id
    for function in ("kl_estimate", "shaped_rewards"):
        assert any(not e.is_mistake and e.function == function for e in ENTRIES), function


@pytest.mark.slow
@pytest.mark.parametrize("entry", ENTRIES, ids=[e.id for e in ENTRIES])
def test_bank_entry_is_graded_as_expected(entry: bank.Entry, tmp_path: Path):
    result = grade_entry(entry, tmp_path)
    failed = [(t.id, t.message) for t in result.tests if not t.passed]
    if entry.is_mistake:
        assert result.score < result.max_score, f"{entry.id} got full marks"
    else:
        assert result.score == result.max_score, failed
