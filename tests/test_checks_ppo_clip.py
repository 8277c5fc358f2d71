"""The ppo_clip checks: the reference gets full marks, the starter none, every bank entry is told apart."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
from hypothesis import given, settings

from autograder import bank
from autograder.checks.hidden import ppo_clip as hidden
from autograder.grade import GradeResult, grade
from autograder.paths import REFERENCE, STARTER

PART = "ppo_clip"
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
    for function in ("ppo_policy_loss", "ppo_value_loss"):
        assert sum(not e.is_mistake and e.function == function for e in ENTRIES) >= 2, function


@settings(max_examples=30, deadline=None, derandomize=True, database=None)
@given(hidden.POLICY_CASES)
def test_policy_inputs_stay_away_from_the_clip_boundaries(case):
    logp, old_logp, advantages, mask, eps = hidden._policy_inputs(case)
    ratio = torch.exp(logp.double() - old_logp.double())
    assert ((ratio - (1 + eps)).abs() > hidden.MARGIN).all() and ((ratio - (1 - eps)).abs() > hidden.MARGIN).all()
    assert torch.isfinite(ratio).all() and logp.dtype == old_logp.dtype == advantages.dtype == mask.dtype


@settings(max_examples=30, deadline=None, derandomize=True, database=None)
@given(hidden.VALUE_CASES)
def test_value_inputs_stay_away_from_the_kinks(case):
    values, old_values, returns, mask, eps = hidden._value_inputs(case)
    v, old, ret = values.double(), old_values.double(), returns.double()
    assert ((v - old).abs() - eps).abs().gt(hidden.MARGIN).all()
    v_clip = old + torch.clamp(v - old, -eps, eps)
    clipped = (v - old).abs() > eps
    assert (((v - ret) ** 2 - (v_clip - ret) ** 2).abs() > hidden.MARGIN)[clipped].all()


def _failed(result: GradeResult) -> dict[str, str]:
    return {t.id.split(".", 1)[1]: t.message for t in result.tests if not t.passed}


@pytest.mark.slow
@pytest.mark.parametrize("entry", ENTRIES, ids=[e.id for e in ENTRIES])
def test_bank_entry_is_graded_as_expected(entry: bank.Entry, tmp_path: Path):
    result = grade_entry(entry, tmp_path)
    failed = _failed(result)
    if not entry.is_mistake:
        assert result.score == result.max_score, failed
        return
    assert result.score < result.max_score, f"{entry.id} got full marks"
    for t in result.tests:  # every failure shows the input and expected vs got
        if not t.passed:
            assert t.failure is not None and t.failure.inputs and (t.failure.expected or t.failure.got), t.id
    if entry.name in ("detached_logp", "value_detached"):
        assert any("detached" in message for message in failed.values()), failed
