"""`python -m autograder validate`: the grader checked against the mistake bank."""

from __future__ import annotations

import argparse

import pytest

from autograder import bank
from autograder.commands import validate
from autograder.validity import validation as val


def run(*argv: str) -> int:
    parser = argparse.ArgumentParser()
    validate.add_arguments(parser)
    return validate.main(parser.parse_args(list(argv)))


def first_entries(part: str) -> list[str]:
    entries = [e for e in bank.load_all() if e.part == part]
    mistake = next((e.id for e in entries if e.is_mistake), None)
    variant = next((e.id for e in entries if not e.is_mistake), None)
    return [e for e in (mistake, variant) if e]


def test_one_part_validates(capsys):
    entries = first_entries("gae")
    if not entries:
        pytest.skip("the bank has no gae entries yet")
    assert run("--parts", "gae", "--elsewhere-examples", "0", "--entries", ",".join(entries)) == 0
    out = capsys.readouterr().out
    assert "mutation score" in out and "every expectation holds" in out


def test_judge_flags_a_mistake_that_costs_points_elsewhere():
    subject = val.Subject("gae.x", "mistake", "gae", "x", ("gae", "kl"))
    outcome = val.Outcome(subject, [
        val.TestOutcome("gae.matches_reference", ["gae"], 0, 6, "hint (looks like: x)", "advantages differ"),
        val.TestOutcome("kl.shaped_matches_reference", ["kl"], 0, 7, "", "rewards differ"),
    ], 1.0)
    verdict = val.judge(outcome)
    assert verdict.caught and verdict.named
    assert verdict.problems == ["costs points elsewhere: kl.shaped_matches_reference (rewards differ)"]


def test_judge_flags_an_uncaught_mistake_and_a_failing_variant():
    tests = [val.TestOutcome("gae.matches_reference", ["gae"], 6, 6, "", "")]
    assert not val.judge(val.Outcome(val.Subject("gae.x", "mistake", "gae", "x", ("gae",)), tests, 1.0)).caught
    lost = [val.TestOutcome("gae.matches_reference", ["gae"], 0, 6, "", "differs")]
    assert val.judge(val.Outcome(val.Subject("gae.v", "variant", "gae", "v", ("gae",)), lost, 1.0)).problems


@pytest.mark.slow
def test_full_validate_passes():
    assert run() == 0
