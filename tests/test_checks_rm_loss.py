"""The rm_loss checks: the reference gets full marks, the starter none, every bank entry is told apart."""

from __future__ import annotations

from pathlib import Path

import pytest

from autograder import bank
from autograder.grade import GradeResult, grade
from autograder.paths import REFERENCE, STARTER

PART = "rm_loss"
ENTRIES = [e for e in bank.load_all() if e.part == PART]
# the check each mistake must fail (more may fail too)
MUST_FAIL = {
    "bt_swapped": "bt_known_values",
    "bt_no_minus": "bt_known_values",
    "bt_sum": "bt_known_values",
    "bt_log_of_sigmoid": "bt_stable",
    "bt_log1p_exp": "bt_stable",
    "bt_where_nan_grad": "bt_stable",
    "bt_detached": "bt_matches_reference",
    "bt_sigmoid_not_log": "bt_known_values",
    "ranking_as_ranks": "ranking_known_values",
    "ranking_ignored": "ranking_matches_reference",
    "ranking_worst_first": "ranking_known_values",
    "ranking_adjacent_pairs": "ranking_pairs_mean",
    "ranking_best_vs_rest": "ranking_pairs_mean",
    "ranking_sum_pairs": "ranking_pairs_mean",
    "ranking_sum_prompts": "ranking_pairs_mean",
    "ranking_with_self_pairs": "ranking_pairs_mean",
    "ranking_both_directions": "ranking_matches_reference",
}


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
    assert set(MUST_FAIL) == {e.name for e in mistakes}
    for e in mistakes:
        assert e.hint and "\n" not in e.hint, e.id
    for function in ("bradley_terry_loss", "ranking_loss"):
        assert any(not e.is_mistake and e.function == function for e in ENTRIES), function


@pytest.mark.slow
@pytest.mark.parametrize("entry", ENTRIES, ids=[e.id for e in ENTRIES])
def test_bank_entry_is_graded_as_expected(entry: bank.Entry, tmp_path: Path):
    result = grade_entry(entry, tmp_path)
    failed = [(t.id, t.message) for t in result.tests if not t.passed]
    if entry.is_mistake:
        assert f"{PART}.{MUST_FAIL[entry.name]}" in {t for t, _ in failed}, failed
        for t in result.tests:  # a failed check shows the smallest failing input, unless the call raised
            assert t.passed or t.failure is None or t.failure.inputs, t.id
    else:
        assert result.score == result.max_score, failed
