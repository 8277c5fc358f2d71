"""A visible check cannot be memorised: in a full grade each public check's points also need the reference's
answers on a fresh twin of every call it made (checks/tools.py `public`, checks/hidden/fresh.py); the
self-check runs the shown inputs only, and says so."""

from __future__ import annotations

import pytest
import torch

from autograder import checks
from autograder.checks import CheckFailed, Context, local, tools
from autograder.judge.grade import grade
from autograder.judge.outcome import Finding, scored
from autograder.lab import config
from autograder.lab.paths import REFERENCE
from autograder.lab.reference import load_reference
from autograder.sandbox.remote import SubmissionError, parameter_names
from autograder.validity import derived_nulls
from lab12.checks.hidden import fresh

PUBLIC = [c for c in checks.load_all().values() if c.run.__module__.startswith("lab12.checks.public")]


def shown_calls(check) -> list[tools.Call]:
    """The calls a public check makes on the reference in the self-check (its shown inputs)."""
    reference = load_reference()
    ctx = Context(sub=local.LocalSubmission(reference), ref=None, hypothesis=config.load().hypothesis)
    saved, tools.SHOWN = tools.SHOWN, []
    try:
        check.run.__wrapped__(ctx)
        return tools.SHOWN
    finally:
        tools.SHOWN = saved


def named(function: str, args: tuple, kwargs: dict) -> dict:
    return dict(zip(parameter_names(function), args)) | kwargs


def test_every_public_check_gets_fresh_twins():
    assert len(PUBLIC) == 8
    assert all(getattr(c.run, "fresh_twins", False) for c in PUBLIC)


@pytest.mark.parametrize("check", PUBLIC, ids=[c.id for c in PUBLIC])
def test_a_twin_is_the_same_kind_and_size_with_values_never_shown(check):
    for position, shown in enumerate(shown_calls(check)):
        fn = shown.function
        given = named(fn, shown.args, shown.kwargs)
        drawn = named(fn, *fresh.twin(fn, shown.args, shown.kwargs, shown.valid, position))
        again = named(fn, *fresh.twin(fn, shown.args, shown.kwargs, shown.valid, position))
        assert given.keys() == drawn.keys()
        mask = given.get("mask")
        for name, x in given.items():
            y = drawn[name]
            if not isinstance(x, torch.Tensor):
                assert y == again[name] and (y == x) == (shown.valid or name != "kind"), (fn, name)
                assert shown.valid or name != "kind" or y not in ("k1", "k2", "k3")  # another rejected name
                continue
            assert (y.shape, y.dtype) == (x.shape, x.dtype) and torch.equal(y, again[name]), (fn, name)
            if name == "ranking":
                assert torch.equal(y.sort(1).values, torch.arange(x.shape[1]).expand_as(x))
            elif name in fresh.RANGES[fn]:
                lo, hi = fresh.RANGES[fn][name]
                padded = ~mask.bool() if isinstance(mask, torch.Tensor) and mask.shape == x.shape else x != x
                assert torch.equal(y[padded], x[padded]), "padding garbage is kept"
                assert ((y[~padded] >= lo) & (y[~padded] <= hi)).all()
                assert not torch.equal(y, x) or fn == "ppo_policy_loss"  # off a kink, logp may be old_logp's
            else:
                assert torch.equal(y, x)  # the mask


def test_a_tie_stays_a_tie():
    scores = torch.tensor([0.0, 3.0, -2.5])
    (a, b), _ = fresh.twin("bradley_terry_loss", (scores, scores.clone()), {}, True, 0)
    assert torch.equal(a, b) and not torch.equal(a, scores)


def test_the_memorised_null_passes_the_self_check_and_fails_every_public_check():
    reference = load_reference()
    module = local.module_from_source(derived_nulls.source(derived_nulls.by_name("memorized")), "null_memorized")
    for check in PUBLIC:
        check.run(Context(sub=local.LocalSubmission(module), ref=None, hypothesis=config.load().hypothesis))
        with pytest.raises((CheckFailed, SubmissionError)) as raised:
            check.run(local.local_context(module, reference))
        assert str(raised.value).startswith(tools.FRESH), (check.id, str(raised.value))
        assert getattr(raised.value, "private_inputs", False)


def test_a_rejected_input_needs_the_same_exception_on_a_fresh_name():
    source = ("import torch\n"
              "def kl_estimate(logp, ref_logp, kind='k1'):\n"
              "    if kind in ('k4', 'K1'):\n"
              "        raise ValueError(kind)\n"
              "    d = logp - ref_logp\n"
              "    return {'k1': d, 'k2': d ** 2 / 2}.get(kind, torch.exp(-d) - 1 + d)\n")
    module = local.module_from_source(source)
    check = checks.load_all()["kl.estimators_known_values"]
    check.run(Context(sub=local.LocalSubmission(module), ref=None, hypothesis=config.load().hypothesis))
    with pytest.raises(CheckFailed, match="should raise ValueError here, as the reference does; it returned a value"):
        check.run(local.local_context(module, load_reference()))


def test_a_private_input_follows_the_default_inputs_visibility():
    cfg = config.load()
    spec = cfg.tests["gae.known_values"]
    assert spec.inputs_visibility == "visible" and cfg.default_inputs_visibility != "visible"
    assert spec.private_inputs_visibility == cfg.default_inputs_visibility
    shown = scored(spec, "t", ["gae"], Finding(message="wrong", inputs="x"))
    private = scored(spec, "t", ["gae"], Finding(message="wrong", inputs="x", private_inputs=True))
    assert shown.input_release == "visible" and private.input_release == cfg.default_inputs_visibility
    assert private.withheld


def test_the_self_check_says_it_ran_the_shown_inputs_only():
    result = grade(REFERENCE, only={"gae"}, mode="self_check")
    assert result.score == result.max_score > 0
    assert result.notice == checks.SHOWN_INPUTS_ONLY and "fresh inputs of the same kind and size" in result.notice


@pytest.mark.slow
def test_a_full_grade_fails_the_memorised_null_and_keeps_the_twins_input_private(tmp_path):
    path = tmp_path / "rlhf.py"
    path.write_text(derived_nulls.source(derived_nulls.by_name("memorized")))
    assert grade(path, only={"gae"}, mode="self_check").score == 4
    full = grade(path, only={"gae"})
    known = next(t for t in full.tests if t.id == "gae.known_values")
    assert full.score == 0 and known.message.startswith(tools.FRESH) and not full.notice
    assert known.input_release == config.load().default_inputs_visibility and known.withheld


def test_only_a_fresh_twin_says_it_passed_the_example_shown():
    """expect_like_reference is also what a hidden check calls on its own inputs (the toy lab's do): its failure is
    the check's, on the check's input, and says nothing of a shown example; the twins of a public check say so."""
    source = REFERENCE.read_text().replace("def compute_gae(", "def _gae(") + (
        "\ndef compute_gae(rewards, values, mask, gamma=1.0, lam=0.95):\n"
        "    a, r = _gae(rewards, values, mask, gamma, lam)\n    return a + 1, r\n")
    ctx = local.local_context(local.module_from_source(source), load_reference())
    call = shown_calls(checks.load_all()["gae.known_values"])[0]
    with pytest.raises(CheckFailed) as raised:
        tools.expect_like_reference(ctx, call)
    assert not str(raised.value).startswith(tools.FRESH) and not raised.value.private_inputs
    with pytest.raises(CheckFailed) as raised:
        tools.fresh_twins(ctx, [call])
    assert str(raised.value).startswith(tools.FRESH) and raised.value.private_inputs
