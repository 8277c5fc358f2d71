"""The gae checks: the reference gets full marks, the starter none, every bank entry is told apart."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
from hypothesis import given, settings

from autograder import bank
from autograder.checks.hidden import gae as hidden
from autograder.grade import GradeResult, grade
from autograder.paths import REFERENCE, STARTER

PART = "gae"
ENTRIES = [e for e in bank.load_all() if e.part == PART]
# the check each mistake must fail (more may fail too)
MUST_FAIL = {
    "forward_recursion": "matches_reference",
    "no_mask": "padding_ignored",
    "mask_off_by_one": "padding_ignored",
    "whitened_inside": "matches_reference",
    "gamma_lam_swapped": "lambda_zero_td_error",
    "no_gamma_in_delta": "lambda_zero_td_error",
    "no_gamma_lam_in_recursion": "lambda_one_reward_to_go",
    "returns_reward_to_go": "returns_are_advantages_plus_values",
    "outputs_swapped": "returns_are_advantages_plus_values",
    "next_value_wraps_around": "lambda_zero_td_error",
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
    assert set(MUST_FAIL) <= {e.name for e in mistakes}
    for e in mistakes:
        assert e.hint and "\n" not in e.hint, e.id


@settings(max_examples=30, deadline=None, derandomize=True, database=None)
@given(hidden.CASES)
def test_cases_are_ragged_with_garbage_in_the_padding(case):
    inp, gamma, lam = case
    rewards, values = inp.tensors
    B, T = inp.mask.shape
    assert 1 <= B <= 16 and 1 <= T <= 6 and 0.5 <= gamma <= 1.0 and 0.05 <= lam <= 0.99
    lengths = inp.mask.sum(1)
    assert (lengths >= 1).all() and torch.equal(inp.mask, (torch.arange(T) < lengths[:, None]).to(inp.dtype))
    for x in (rewards, values):
        assert x.dtype == inp.dtype and x.shape == (B, T)
        assert x[inp.mask.bool()].abs().max() <= 5.0


@pytest.mark.slow
@pytest.mark.parametrize("entry", ENTRIES, ids=[e.id for e in ENTRIES])
def test_bank_entry_is_graded_as_expected(entry: bank.Entry, tmp_path: Path):
    result = grade_entry(entry, tmp_path)
    failed = {t.id.split(".", 1)[1]: t.message for t in result.tests if not t.passed}
    if not entry.is_mistake:
        assert result.score == result.max_score, failed
        return
    assert result.score < result.max_score, f"{entry.id} got full marks"
    if entry.name in MUST_FAIL:
        assert MUST_FAIL[entry.name] in failed, failed
    for t in result.tests:  # every failure shows the input and expected vs got
        if not t.passed:
            assert t.failure is not None and t.failure.inputs and (t.failure.expected or t.failure.got), t.id
