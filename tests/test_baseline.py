"""grading/data/baseline.json is current, covers what a grade asks for, and equals the computation bit for bit."""

from __future__ import annotations

import json

import pytest
import torch

from autograder.lab import config
from lab12 import baseline


def shipped() -> dict:
    return json.loads(baseline.DATA_FILE.read_text())


def test_the_shipped_file_is_current_and_covers_every_call_of_a_grade():
    data = shipped()
    assert data["fingerprint"] == baseline.fingerprint() and baseline.is_current(), \
        "grading/data/baseline.json is stale: run `python -m autograder refresh`"
    for kind, args in baseline.shipped_calls(config.load().e2e):
        assert baseline._key(args) in data.get(kind, {}), f"{kind}{args} is not shipped"


def test_a_stale_file_is_never_used(tmp_path, monkeypatch):
    stale = {**shipped(), "fingerprint": "0" * 64}
    (tmp_path / "baseline.json").write_text(json.dumps(stale))
    assert baseline._load.__wrapped__(tmp_path / "baseline.json") == {}
    assert baseline._load.__wrapped__(tmp_path / "absent.json") == {}


def test_docstrings_do_not_change_the_fingerprint(tmp_path):
    a, b = tmp_path / "a.py", tmp_path / "b.py"
    a.write_text('"""Module."""\ndef f(x):\n    """Doc."""\n    return x  # note\n')
    b.write_text('def f(x):\n    """Other doc."""\n    return x\n')
    assert baseline.code_of(a) == baseline.code_of(b)
    b.write_text('def f(x):\n    return -x\n')
    assert baseline.code_of(a) != baseline.code_of(b)


def same(x, y, rtol: float = 0.0) -> bool:
    """Equal bit for bit (rtol 0): same types, tensors of the same dtype and values, floats identical; with rtol,
    floats within it (a machine that rounds otherwise than the one that computed the file)."""
    if isinstance(x, torch.Tensor):
        return isinstance(y, torch.Tensor) and x.dtype == y.dtype and x.shape == y.shape \
            and (torch.equal(x, y) or bool(rtol) and torch.allclose(x, y, rtol=rtol, atol=0.0))
    if isinstance(x, dict):
        return isinstance(y, dict) and list(x) == list(y) and all(same(x[k], y[k], rtol) for k in x)
    if isinstance(x, (list, tuple)):
        return type(x) is type(y) and len(x) == len(y) and all(same(a, b, rtol) for a, b in zip(x, y))
    if isinstance(x, float) and rtol:
        return isinstance(y, float) and abs(x - y) <= rtol * abs(y)
    return type(x) is type(y) and x == y


@pytest.mark.slow
def test_shipped_values_equal_the_computation_bit_for_bit():
    """Bit for bit on a machine that rounds as the one that computed the file (fingerprints.numerics); elsewhere
    within 1e-6 (another CPU's reductions differ in the last bits), the sampled rankings exactly."""
    torch.set_num_threads(1)
    calls = baseline.shipped_calls(config.load().e2e)
    computed, data = baseline.compute(calls), shipped()
    rtol = 0.0 if data["numerics"] == computed["numerics"] else 1e-6
    assert same({**computed, "numerics": ""}, {**data, "numerics": ""}, rtol), \
        "recomputed baseline differs: run `python -m autograder refresh`"
    for kind, args in calls:
        if kind == "rankings":
            assert same(baseline.rankings(*args), baseline.computed_rankings(*args))
        elif kind == "reference_rm":
            assert same(baseline.reference_rm(*args).state_dict(), baseline.computed_rm(*args).state_dict(), rtol)
        else:
            rm_key, n, seed = args
            assert same(baseline.sft_evaluation(tuple(rm_key), n, seed),
                        baseline.computed_sft_evaluation(tuple(rm_key), n, seed), rtol)
