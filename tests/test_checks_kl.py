"""The kl checks: the reference gets full marks, the starter none, every bank entry is told apart."""

from __future__ import annotations

from pathlib import Path

import pytest

from autograder import bank
from autograder.grade import GradeResult, grade
from autograder.paths import REFERENCE, STARTER

PART = "kl"
ENTRIES = [e for e in bank.load_all() if e.part == PART]
# the check each mistake must fail (more may fail too)
MUST_FAIL = {
    "reversed_log_ratio": "estimate_matches_reference",
    "k2_without_half": "estimators_known_values",
    "k3_exp_d": "unbiased_and_nonnegative",
    "k3_minus_d": "unbiased_and_nonnegative",
    "k1_abs": "unbiased_and_nonnegative",
    "kind_ignored": "estimate_matches_reference",
    "unknown_kind_accepted": "estimators_known_values",
    "score_on_first_token": "shaped_known_values",
    "score_on_last_column": "shaped_known_values",
    "score_one_past_the_end": "shaped_matches_reference",
    "score_one_early": "shaped_matches_reference",
    "score_replaces_penalty": "shaped_matches_reference",
    "penalty_without_beta": "shaped_matches_reference",
    "penalty_plus_beta": "shaped_known_values",
    "kind_not_passed": "shaped_matches_reference",
    "penalty_summed_on_last_token": "shaped_matches_reference",
    "penalty_mean_with_padding": "shaped_known_values",
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
    for function in ("kl_estimate", "shaped_rewards"):
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
