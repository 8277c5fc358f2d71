"""The tests every lab derives from its contract (autograder/checks/contract_tests.py): a wrong dtype costs the dtype
test alone (the checks compare values at the precision returned), a detached output fails a unit test, and the
reference passes them all. Lab 12 in-process for every contract function; the toy lab through `grade`."""

from __future__ import annotations

import json
import subprocess
import sys
import types

import pytest
import torch

from autograder import checks
from autograder.checks import CheckFailed
from autograder.checks.contract_tests import derived_ids, dtype_test_id, grad_test_id
from autograder.checks.local import local_context
from autograder.lab import config
from autograder.lab.paths import ROOT
from autograder.lab.reference import load_reference
from autograder.sandbox.remote import SubmissionError

TOYLAB = ROOT / "tests" / "toylab"
CONTRACT = config.current().contract


def failures(submission, function: str) -> dict[str, str]:
    """test id -> failure message, for every check of `function` (the lab's and the derived ones)."""
    reference = load_reference()
    found = {}
    for test_id, check in checks.load_all().items():
        if function in check.functions:
            try:
                check.run(local_context(submission, reference))
            except (CheckFailed, SubmissionError) as exc:
                found[test_id] = str(exc)
    return found


def with_function(function: str, impl) -> types.SimpleNamespace:
    """The reference with one function replaced."""
    reference = load_reference()
    return types.SimpleNamespace(**{name: getattr(reference, name) for name in CONTRACT} | {function: impl})


def as_float32(fn):
    def returns_float32(*args, **kwargs):
        value = fn(*args, **kwargs)
        return tuple(v.float() for v in value) if isinstance(value, tuple) else value.float()
    return returns_float32


def detached_in(fn, index: int):
    def detaches(*args, **kwargs):
        args = list(args)
        args[index] = args[index].detach()
        return fn(*args, **kwargs)
    return detaches


def test_every_function_gets_a_dtype_test_and_a_gradient_test_per_differentiable_parameter():
    ids = derived_ids(config.current())
    registered = checks.load_all()
    for name, spec in CONTRACT.items():
        assert dtype_test_id(spec.part, name) in ids
        assert {grad_test_id(spec.part, name, p) for p in spec.differentiable} <= set(ids)
    assert all(test_id in registered and test_id in config.current().tests for test_id in ids)
    assert not any(checks.is_public(registered[test_id]) for test_id in ids)  # they need the reference


@pytest.mark.parametrize("function", list(CONTRACT))
def test_the_reference_passes_every_check_of_each_function_derived_ones_included(function):
    assert not failures(load_reference(), function)


@pytest.mark.parametrize("function", list(CONTRACT))
def test_right_values_in_float32_for_float64_inputs_lose_the_dtype_test_only(function):
    found = failures(with_function(function, as_float32(getattr(load_reference(), function))), function)
    test_id = dtype_test_id(CONTRACT[function].part, function)
    assert list(found) == [test_id], found
    assert f"{function} returns float32 for float64 inputs" in found[test_id]


@pytest.mark.parametrize("function, wrt", [(f, p) for f, spec in CONTRACT.items() for p in spec.differentiable])
def test_an_output_detached_from_a_differentiable_input_fails_its_gradient_test(function, wrt):
    index = CONTRACT[function].parameters.index(wrt)
    found = failures(with_function(function, detached_in(getattr(load_reference(), function), index)), function)
    test_id = grad_test_id(CONTRACT[function].part, function, wrt)
    assert test_id in found and "detached" in found[test_id], found
    assert dtype_test_id(CONTRACT[function].part, function) not in found  # its values and dtype are right


def test_values_are_compared_at_the_precision_returned():
    """A float32 answer to float64 inputs is held to float32's tolerance, not float64's."""
    from autograder.checks.tools import Answer, tolerances
    ctx = local_context(load_reference(), load_reference())
    expected = torch.tensor([1.0, 1e-3], dtype=torch.float64)
    got = (expected * (1 + 3e-5)).float()  # within float32's rtol, outside float64's
    Answer(None, [], "f", (), {}, "").expect_close(ctx, got, expected, "differs")
    assert tolerances(ctx, torch.float32)[0] > 3e-5 > tolerances(ctx, torch.float64)[0]
    with pytest.raises(CheckFailed):
        Answer(None, [], "f", (), {}, "").expect_close(ctx, got.double(), expected, "differs")


def test_the_toy_lab_grades_a_dtype_slip_and_a_detached_output_each_on_its_own_test(tmp_path):
    """Through `grade`: scale in float32 loses scale_dtype alone; a detached masked_mean loses its gradient test
    (and its differential check, which also compares gradients); the derived tests are in results.json, visible."""
    source = (TOYLAB / "solutions" / "toy.py").read_text()
    source = source.replace("return (x * mask).sum() / mask.sum()", "return ((x * mask).sum() / mask.sum()).detach()")
    (tmp_path / "toy.py").write_text(source.replace("return x * factor", "return (x * factor).float()"))
    done = subprocess.run([sys.executable, "-m", "autograder", "--lab", str(TOYLAB), "grade", str(tmp_path / "toy.py"),
                           "--out", str(tmp_path / "out"), "--only", "mean,scale"], cwd=ROOT, capture_output=True,
                          text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]
    tests = [t for t in json.loads((tmp_path / "out" / "results.json").read_text())["tests"] if t["max_score"] > 0]
    scores = {t["name"].split(":")[0]: t["score"] for t in tests}
    lost = sorted(test_id for test_id, score in scores.items() if score == 0)
    assert lost == ["mean.masked_mean_grad_x", "mean.matches_reference", "scale.scale_dtype"], scores
    assert scores["mean.masked_mean_dtype"] == 1 and scores["scale.matches_reference"] == 4
    dtype = next(t for t in tests if t["name"].startswith("scale.scale_dtype"))
    assert "scale returns float32 for float64 inputs" in dtype["output"] and dtype["visibility"] == "visible"
