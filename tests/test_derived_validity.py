"""What validate derives from a lab's contract (issue 29): the null family and the contract mutants, the
gradients a contract declares, and the valid neighbour every rejection test needs answered.

The toy lab's and Lab 13's derivations run in fresh processes (a process grades one lab), in-process there
(no sandbox: `validity/local.py`), on every check of the lab."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
import torch

from autograder.checks import CheckFailed, local, tools
from autograder.lab.paths import ROOT
from autograder.lab.reference import load_reference
from autograder.validity import contract_mutants

# For every derived null and contract mutant of the lab: the checks it passes, and the part each belongs to.
RUN_LOCALLY = """
import json
from autograder import checks
from autograder.lab import config
from autograder.checks import CheckFailed
from autograder.lab.reference import load_reference
from autograder.sandbox.remote import SubmissionError
from autograder.checks import local
from autograder.validity import contract_mutants, derived_nulls

ref = load_reference()
subjects = [("derived." + n.name, None, derived_nulls.source(n)) for n in derived_nulls.nulls()]
subjects += [(m.label, m.part, contract_mutants.source(m)) for m in contract_mutants.mutants()]
subjects = [s for s in subjects if not ONLY or s[0] in ONLY]
found = {}
for label, part, source in subjects:
    module = local.module_from_source(source, "derived_" + label.replace(".", "_"))
    passed = []
    for name, check in checks.load_all().items():
        try:
            check.run(local.local_context(module, ref))
            passed.append(name)
        except (CheckFailed, SubmissionError):
            pass
    shown_only = []  # the public checks it passes on their shown inputs alone (the self-check: no reference)
    for name, check in checks.load_all().items():
        if checks.is_public(check):
            try:
                check.run(checks.Context(sub=local.LocalSubmission(module), ref=None,
                                         hypothesis=config.load().hypothesis))
                shown_only.append(name)
            except (CheckFailed, SubmissionError):
                pass
    found[label] = {"part": part, "passes": passed, "self_check": shown_only}
public = [c for c, check in checks.load_all().items() if checks.is_public(check)]
print(json.dumps({"subjects": found, "checks": {c: c.split(".")[0] for c in checks.load_all()}, "public": public}))
"""


def derived_outcomes(lab: str, only: tuple[str, ...] = ()) -> tuple[dict, dict]:
    """Each subject's passing checks (those labelled `only`, else all)."""
    program = f"ONLY = {set(only)!r}\n" + RUN_LOCALLY
    done = subprocess.run([sys.executable, "-c", program], cwd=ROOT, capture_output=True, text=True,
                          timeout=3000, env={**os.environ, "AUTOGRADER_LAB": str(ROOT / lab)})
    assert done.returncode == 0, done.stderr[-3000:]
    found = json.loads(done.stdout.strip().splitlines()[-1])
    if "derived.memorized" in found["subjects"]:
        assert set(found["subjects"]["derived.memorized"]["self_check"]) == set(found["public"])  # memorised them
    return found["subjects"], found["checks"]


def assert_nulls_zero_and_mutants_caught_in_their_part(subjects: dict, parts_of: dict) -> None:
    for label, outcome in subjects.items():
        if label.startswith("derived."):
            assert outcome["passes"] == [], f"{label} passes {outcome['passes']}"
        else:
            own = [c for c, part in parts_of.items() if part == outcome["part"]]
            elsewhere = [c for c, part in parts_of.items() if part != outcome["part"]]
            assert set(own) - set(outcome["passes"]), f"{label}: full marks on every check of its part"
            assert set(elsewhere) <= set(outcome["passes"]), f"{label}: fails {set(elsewhere) - set(outcome['passes'])}"


def test_the_toy_lab_gets_its_nulls_and_mutants_from_its_contract():
    subjects, parts_of = derived_outcomes("tests/toylab")
    assert set(subjects) == {
        *(f"derived.{n}" for n in ("zeros", "ones", "log2", "minus_one", "zeros_graph", "nan_grad", "noise",
                                   "echo_x", "echo_mask", "raises_value_error", "raises_runtime_error", "memorized")),
        *(f"mutant.masked_mean.{k}" for k in ("detached", "float32", "mutates", "no_mask", "dropped")),
        *(f"mutant.scale.{k}" for k in ("float32", "mutates", "dropped"))}  # scale: no mask, not differentiable
    assert_nulls_zero_and_mutants_caught_in_their_part(subjects, parts_of)


@pytest.mark.slow
def test_lab13s_former_holes_are_derived_and_closed():
    """Before issue 29: every function raising ValueError passed 2 rejection tests, and a detached
    sequence_logprob passed every unit check. (Every other derived null and contract mutant of Lab 13: CI's
    `validate --lab labs/lab13` step grades them all, through the sandbox.)"""
    subjects, parts_of = derived_outcomes("labs/lab13", ("derived.raises_value_error", "derived.memorized",
                                                         "mutant.sequence_logprob.detached"))
    assert set(subjects) == {"derived.raises_value_error", "derived.memorized", "mutant.sequence_logprob.detached"}
    passes = subjects["mutant.sequence_logprob.detached"]["passes"]  # one slip: the test about it, not the values'
    assert "dpo.sequence_logprob_grad_token_logp" not in passes and "dpo.sequence_logprob_known_values" in passes
    assert_nulls_zero_and_mutants_caught_in_their_part(subjects, parts_of)


class Always:
    """A stand-in submission whose every call raises ValueError, or only the calls `rejects` says."""

    def __init__(self, rejects=lambda args, kwargs: True):
        self.rejects = rejects

    def call(self, fn, *args, grad=(), valid=True, **kwargs):
        from autograder.sandbox.remote import SubmissionError
        if self.rejects(args, kwargs):
            raise SubmissionError(f"{fn} raised ValueError", "raised", "ValueError")
        return torch.zeros(args[0].shape, dtype=args[0].dtype), []


def expect_unknown_kind(sub) -> None:
    from autograder.checks import Context
    logp = torch.zeros(2, 3)
    tools.expect_value_error(Context(sub=sub, ref=None, hypothesis={}), "kl_estimate", (logp, logp), {"kind": "k4"},
                             ("logp", "ref_logp"), "an unknown kind", neighbour=((logp, logp), {"kind": "k1"}))


def test_a_rejection_test_also_needs_its_valid_neighbour_answered():
    expect_unknown_kind(Always(lambda args, kwargs: kwargs.get("kind") != "k1"))   # rejects only the invalid kind
    with pytest.raises(CheckFailed, match="must answer the valid input next to the rejected one"):
        expect_unknown_kind(Always())                                              # rejects everything


def test_a_detached_output_fails_its_gradient_test_and_only_that():
    """bradley_terry_loss is declared differentiable in r_better and r_worse: the detached mutant fails the derived
    gradient test (checks/contract_tests.py), while a comparison of its value alone still passes: one slip, the test
    about it."""
    from autograder import checks
    from autograder.checks import contract_tests
    reference = load_reference()
    mutant = contract_mutants.by_label("mutant.bradley_terry_loss.detached")
    module = local.module_from_source(contract_mutants.source(mutant), "detached_bt")
    ctx = local.local_context(module, reference)
    gradient_test = checks.load_all()[contract_tests.grad_test_id("rm_loss", "bradley_terry_loss", "r_better")]
    with pytest.raises(CheckFailed, match="no gradient reached"):
        gradient_test.run(ctx)
    r = torch.tensor([0.5, -1.0, 2.0], dtype=torch.float64)
    tools.expect_like_reference(ctx, tools.Call("bradley_terry_loss", (r, r.flip(0)), names=("r_better", "r_worse"),
                                                shape=()))


def test_a_contract_mutants_hint_is_right_only_when_the_mistake_it_names_answers_as_it_does():
    from autograder.validity import validation as val
    mutant = val.Subject("mutant.compute_gae.no_mask", "mutant", "gae", "mutant.compute_gae.no_mask", ("gae",))
    hinted = [val.TestOutcome("gae.matches_reference", ["gae"], 0, 5, "padding counted (looks like: no_mask)", "x",
                              shows_input=True, shows_expected=True)]
    assert val.judge(val.Outcome(mutant, hinted, 1.0)).problems == []
    wrong = val.judge(val.Outcome(mutant, hinted, 1.0, wrong_left_out=["no_mask"]))
    assert wrong.problems == ["wrong hint on gae.matches_reference: names no_mask"] and wrong.right_hints == 0
    full = val.judge(val.Outcome(mutant, [val.TestOutcome("gae.matches_reference", ["gae"], 5, 5, "", "")], 1.0))
    assert full.problems == ["not caught: full marks on every gae check"]
