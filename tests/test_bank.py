"""The bank of known mistakes and correct variants (grading/bank) against the checks.

Every part's bank has at least eight mistakes, each with a one-line hint, and at least two correct
variants. How each entry is graded is `python -m autograder validate`'s judgement (CI's own step), with the
expectations declared on the entries themselves (`fails=`: the check a mistake must fail; `says=`: a word
one of its failures must say): a variant gets full marks, a mistake loses points in its own part only,
failing that check, each failed check showing the input that exposes it and expected against got.
"""

from __future__ import annotations

import pytest
import torch
from training import probe_inputs

from autograder.lab import bank, config

ENTRIES = bank.load_all()
PARTS = list(config.load().parts)


@pytest.mark.parametrize("part", PARTS)
def test_each_part_has_mistakes_with_hints_and_variants_of_each_function(part):
    entries = [e for e in ENTRIES if e.part == part]
    mistakes = [e for e in entries if e.is_mistake]
    assert len(mistakes) >= 8 and len(entries) - len(mistakes) >= 2
    assert len({e.name for e in entries}) == len(entries)
    for e in mistakes:
        assert e.hint and "\n" not in e.hint, e.id
    for function in config.load().parts[part]:
        assert any(not e.is_mistake and e.function == function for e in entries), function


@pytest.mark.parametrize("entry", ENTRIES, ids=[e.id for e in ENTRIES])
def test_every_entry_runs_as_a_submission(entry: bank.Entry):
    """An entry is self-contained: its submission (the reference + the entry) runs on a tiny valid input
    (a helper outside the entry would raise NameError there, and be 'caught' for the wrong reason)."""
    namespace: dict = {}
    exec(compile(bank.submission_source(entry), entry.id, "exec"), namespace)  # trusted bank code
    args = probe_inputs()[entry.function]
    grad = [a.clone().requires_grad_(a.is_floating_point()) if isinstance(a, torch.Tensor) else a for a in args]
    namespace[entry.function](*grad)


def test_mistakes_from_public_code_cite_their_source():
    public = [e for e in ENTRIES if e.impl.__module__ == "lab12.bank.public_code"]
    assert len(public) >= 16
    assert all(e.is_mistake and len(e.source) > 20 for e in public), [e.id for e in public if not e.source]


def test_the_check_a_mistake_must_fail_is_one_of_its_part():
    """`fails=` names a real check of the mistake's own part (validate checks that it fails); only mistakes
    declare one, and the word a failure must say."""
    tests = config.load().tests
    for e in ENTRIES:
        assert not (e.fails or e.says) or e.is_mistake, e.id
        assert not e.fails or (e.fails in tests and e.fails.split(".")[0] == e.part), e.id
    assert sum(bool(e.fails) for e in ENTRIES) >= 50 and sum(bool(e.says) for e in ENTRIES) >= 3
