"""`python -m autograder validate`: the grader checked against the mistake bank and the null submissions."""

from __future__ import annotations

import argparse
import dataclasses

import pytest

from autograder import checks
from autograder.checks import CheckFailed, examples, local
from autograder.commands import validate
from autograder.lab import bank, config
from autograder.lab.reference import load_reference
from autograder.sandbox.remote import SubmissionError
from autograder.validity import derived_nulls
from autograder.validity import validation as val
from lab12 import nulls

PARTS = list(config.load().parts)


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
    assert run("--parts", "gae", "--elsewhere-examples", "0", "--no-nulls", "--no-mutants", "--no-coverage",
               "--entries", ",".join(entries)) == 0
    out = capsys.readouterr().out
    assert "mutation score" in out and "every expectation holds" in out


@pytest.mark.parametrize("part", PARTS)
def test_null_submissions_score_nothing_in_any_check_of_the_part(part, monkeypatch):
    """In-process (no sandbox): every check of the part fails every null submission (unshrunk, as validate
    grades a null: its scores alone are judged)."""
    monkeypatch.setattr(examples, "SHRINK", False)
    reference = load_reference()
    for null in nulls.NULLS.values():
        module = local.module_from_source(nulls.null_source(null), f"null_{null.name}")
        for check in checks.load_all().values():
            if check.part != part:
                continue
            with pytest.raises((CheckFailed, SubmissionError)):
                check.run(local.local_context(module, reference))


def test_every_null_rule_covers_the_seven_functions():
    CONTRACT = config.load().functions
    for null in nulls.NULLS.values():
        assert set(null.bodies) == set(CONTRACT), null.name


def test_judge_flags_a_scoring_null_and_a_wrong_hint():
    subject = val.Subject("null.zeros", "null", None, "zeros", ("gae",))
    outcome = val.Outcome(subject, [
        val.TestOutcome("gae.padding_ignored", ["gae"], 3, 3, "", ""),
        val.TestOutcome("gae.matches_reference", ["gae"], 0, 5, "hint (looks like: no_mask)", "differs"),
    ], 1.0)
    verdict = val.judge(outcome)
    assert verdict.problems == ["wrong hint on gae.matches_reference: names no_mask",
                                "scores 3 on gae.padding_ignored"]
    assert (verdict.hints, verdict.right_hints) == (1, 0)


def test_judge_flags_a_mistake_that_costs_points_elsewhere():
    subject = val.Subject("gae.x", "mistake", "gae", "x", ("gae", "kl"))
    outcome = val.Outcome(subject, [
        val.TestOutcome("gae.matches_reference", ["gae"], 0, 6, "hint (looks like: x)", "advantages differ",
                        shows_input=True, shows_expected=True),
        val.TestOutcome("kl.shaped_matches_reference", ["kl"], 0, 7, "", "rewards differ"),
    ], 1.0)
    verdict = val.judge(outcome)
    assert verdict.caught and verdict.named
    assert verdict.problems == ["costs points elsewhere: kl.shaped_matches_reference (rewards differ)"]


def test_judge_flags_a_wrong_hint_with_the_mistake_left_out():
    from autograder.validity.hints import Hinted

    subject = val.Subject("gae.x", "mistake", "gae", "x", ("gae",))
    tests = [val.TestOutcome("gae.matches_reference", ["gae"], 0, 6, "hint (looks like: x)", "advantages differ",
                             shows_input=True, shows_expected=True)]
    left_out = [Hinted("gae", "compute_gae", ["x"], ["y"]), Hinted("gae", "compute_gae", ["x"], [])]
    verdict = val.judge(val.Outcome(subject, tests, 1.0, left_out=left_out, wrong_left_out=["compute_gae: names y"]))
    assert verdict.problems == ["wrong hint with x left out of the bank, on compute_gae: names y"]
    assert (verdict.left_out_hints, verdict.left_out_right) == (1, 0)


def test_a_left_out_hint_naming_an_equivalent_mistake_is_right():
    from autograder.validity import hints

    entries = {e.name: e for e in bank.mistakes_of_part("kl")}
    # seen through shaped_rewards, "k1 is |d|" and "the penalty of |d|" answer alike on every valid input
    same = hints.Hinted("kl", "shaped_rewards", [], ["k1_abs"])
    assert hints.right(entries["penalty_of_abs_d"], same)
    assert not hints.right(entries["penalty_of_abs_d"], hints.Hinted("kl", "shaped_rewards", [], ["penalty_plus_beta"]))


def test_judge_flags_an_uncaught_mistake_and_a_failing_variant():
    tests = [val.TestOutcome("gae.matches_reference", ["gae"], 6, 6, "", "")]
    assert not val.judge(val.Outcome(val.Subject("gae.x", "mistake", "gae", "x", ("gae",)), tests, 1.0)).caught
    lost = [val.TestOutcome("gae.matches_reference", ["gae"], 0, 6, "", "differs")]
    assert val.judge(val.Outcome(val.Subject("gae.v", "variant", "gae", "v", ("gae",)), lost, 1.0)).problems


def test_judge_flags_a_mistake_whose_failures_do_not_teach():
    """What the bank entry declares (the check that must fail, a word a failure must say), and on each failure
    of its part the input and expected against got, unless the call itself failed."""
    subject = val.Subject("gae.x", "mistake", "gae", "x", ("gae",), fails="gae.padding_ignored", says="detached")
    shown = val.TestOutcome("gae.matches_reference", ["gae"], 0, 6, "", "differs", shows_input=True,
                            shows_expected=True)
    bare = val.TestOutcome("gae.lambda_one", ["gae"], 0, 3, "", "differs", shows_input=True)
    raised = val.TestOutcome("gae.known_values", ["gae"], 0, 3, "", "raised", call_failed=True)
    verdict = val.judge(val.Outcome(subject, [shown, bare, raised], 1.0))
    assert verdict.caught and verdict.problems == [
        "passes gae.padding_ignored, the check its bank entry says must catch it", "no failure says 'detached'",
        "fails gae.lambda_one without showing expected against got"]
    said = val.TestOutcome("gae.padding_ignored", ["gae"], 0, 3, "", "the input was detached", shows_input=True,
                           shows_expected=True)
    assert val.judge(val.Outcome(subject, [shown, said, raised], 1.0)).problems == []


@pytest.mark.slow  # one part: CI's validate step grades every null on every part
def test_null_submissions_validate_through_the_sandbox(capsys):
    assert run("--parts", "rm_loss", "--entries", "none", "--no-coverage", "--elsewhere-examples", "0") == 0
    assert "null submission" in capsys.readouterr().out



def test_with_e2e_every_null_and_variant_is_graded_on_the_e2e_tests_too():
    """Every null on every e2e test (an echo: those training with a function it echoes in); a variant on those
    training with its part; a mistake on the e2e tests calibration says it fails, and no other."""
    cfg = config.load()
    outcomes = {"gae.forward_recursion": ["kl_penalty", "ptx"]}
    subjects = {s.label: s for s in val.subjects_for(PARTS, PARTS, e2e_outcomes=outcomes)}
    nulls_and_variants = [s for s in subjects.values() if s.kind in ("null", "variant")]
    derived = derived_nulls.nulls()  # the engine's, from the contract, and the lab's own
    assert len([s for s in nulls_and_variants if s.kind == "null"]) == len(nulls.NULLS) + len(derived)
    e2e_tests = {f"e2e.{name}" for name in cfg.e2e}
    for s in nulls_and_variants:  # every e2e test, or (an echo) each one training with a function it echoes in
        assert "e2e" in s.only or (s.elsewhere_as and set(s.only) & e2e_tests) or s.kind == "variant", s
    for s in (s for s in nulls_and_variants if s.kind == "variant"):
        assert set(s.only) & e2e_tests == {f"e2e.{n}" for n, spec in cfg.e2e.items() if s.part in spec.parts}, s
    assert subjects["gae.forward_recursion"].only == ("gae", "e2e.kl_penalty", "e2e.ptx")
    assert not [s for s in subjects.values() if s.kind == "mistake" and s.label not in outcomes
                and set(s.only) & (e2e_tests | {"e2e"})]
    assert "e2e" not in subjects["starter"].only


def test_an_echo_null_is_graded_where_it_answers_otherwise_than_zeros():
    """derived.echo_P answers as derived.zeros in every function without P: graded only on the parts of functions
    taking P and the e2e tests training them, the rest shown as "=zeros" (the same answers give the same grade)."""
    cfg = config.load()
    subjects = {s.label: s for s in val.subjects_for(PARTS, PARTS, e2e_outcomes={}, mutants=False)}
    for null in derived_nulls.nulls():
        s = subjects[f"derived.{null.name}"]
        if null.rule != "echo":
            assert s.only == (*PARTS, "e2e") and not s.elsewhere_as
            continue
        parts = {fn.part for fn in cfg.contract.values() if null.argument in fn.parameters}
        assert s.elsewhere_as == "derived.zeros" and set(s.only) == parts | {
            f"e2e.{n}" for n, spec in cfg.e2e.items() if parts & set(spec.parts)}
    echo = subjects["derived.echo_r_better"]
    outcome = val.Outcome(echo, [val.TestOutcome("rm_loss.matches_reference", ["rm_loss"], 0, 5, "", "x")], 1.0)
    row = validate.format_null_table(["rm_loss", "gae"], [outcome]).splitlines()[2].split()
    assert row == ["derived.echo_r_better", "0/5", "=zeros"]
    assert not any("e2e" in s.only for s in val.subjects_for(PARTS, PARTS) if s.kind in ("null", "variant"))


def test_judge_flags_a_null_scoring_on_an_e2e_test_and_a_variant_failing_one():
    null = val.Subject("null.zeros_graph", "null", None, "zeros_graph", ("gae", "e2e"))
    verdict = val.judge(val.Outcome(null, [val.TestOutcome("e2e.ptx", ["e2e", "gae", "ppo_clip", "kl"], 5, 5, "", ""),
                                           val.TestOutcome("gae.matches_reference", ["gae"], 0, 5, "", "differs")],
                                    1.0))
    assert verdict.problems == ["scores 5 on e2e.ptx"]
    variant = val.Subject("rm_loss.v", "variant", "rm_loss", "v", ("rm_loss", "e2e"))
    lost = [val.TestOutcome("e2e.reward_model", ["e2e", "rm_loss"], 0, 5, "", "ranks held-out pairs poorly")]
    assert val.judge(val.Outcome(variant, lost, 1.0)).problems == [
        "loses 5 on e2e.reward_model: ranks held-out pairs poorly"]


def test_the_null_table_has_a_column_per_e2e_test():
    null = val.Subject("null.zeros", "null", None, "zeros", ("gae", "e2e"))
    outcome = val.Outcome(null, [val.TestOutcome("gae.matches_reference", ["gae"], 0, 5, "", "x"),
                                 val.TestOutcome("e2e.ptx", ["e2e", "gae"], 5, 5, "", "")], 1.0)
    table = validate.format_null_table(["gae"], [outcome])
    assert table.splitlines()[0].split() == ["null", "submission", "gae", "ptx"]
    assert table.splitlines()[2].split() == ["null.zeros", "0/5", "5/5"]  # the label: derived.zeros is another


def test_elsewhere_runs_the_other_parts_checks_in_process(tmp_path):
    """A subject's other parts are graded in process (validation.elsewhere): a file breaking them loses there, the
    reference loses nothing."""
    entry = next(e for e in bank.load_all() if e.part == "gae" and e.is_mistake)
    broken, fine = tmp_path / "broken.py", tmp_path / "fine.py"
    broken.write_text(bank.submission_source(entry))
    fine.write_text(bank.submission_source(next(e for e in bank.load_all() if e.part == "kl")))
    subject = val.Subject("x", "mistake", "kl", "x", ("kl",), (), ("gae",), 5)
    lost = [t for t in val.elsewhere(subject, broken) if t.lost]
    assert lost and all(t.tags == ["gae"] and t.message for t in lost)
    assert not [t for t in val.elsewhere(subject, fine) if t.lost]
    assert val.elsewhere(dataclasses.replace(subject, elsewhere=()), broken) == []


@pytest.mark.parametrize("e2e", [False, True])
def test_validate_keeps_its_zygote_and_imports_dynamo_once_only_when_its_subjects_train(monkeypatch, e2e):
    """grade_subjects sets its worker up once, before the grades: its zygote kept from one grade to the next (and
    stopped after the last), and torch._dynamo (an optimiser's first use imports it) imported once, which the
    grades share, only when some subject runs the e2e tests."""
    from autograder.judge import lanes
    from autograder.sandbox import zygote
    imported, kept, stopped = [], [], []
    monkeypatch.setattr(lanes, "import_dynamo", lambda: imported.append(1))
    monkeypatch.setattr(zygote, "stop", lambda: stopped.append(zygote._KEEP))

    def grade(s):
        kept.append(zygote._KEEP)
        return val.Outcome(s, [], 0.0)

    monkeypatch.setattr(val, "grade_subject", grade)
    subjects = [val.Subject(label, "null", None, label, ("gae", "e2e") if e2e else ("gae",)) for label in "ab"]
    assert len(val.grade_subjects(subjects, workers=1)) == 2
    assert imported == ([1] if e2e else [])
    assert kept == [True, True] and stopped == [False]
