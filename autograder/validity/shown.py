"""Every call whose input a student is shown, with the reference's answer: what a memorising submission
hard-codes (derived_nulls' `memorized`). Two sources, both run against the reference in the judge:

    the public checks (grading/checks/public), as the self-check runs them (shown inputs only);
    the handout's tests (assignment/tests/test_*.py, their argument-free test functions), with the
    submission's module (grading.yaml `submission`) standing for the reference.

A call is plain data: (function, inputs in signature order as (dtype, nested lists) or the value itself,
answer as nested lists or None, {argument index: gradient as nested lists}, raised ValueError).
"""

from __future__ import annotations

import importlib.util
import inspect
import sys
import types

import torch

from autograder.lab import config, paths
from autograder.lab.reference import load_reference

ShownCall = tuple


def shown_calls() -> list[ShownCall]:
    return _public_check_calls() + _handout_calls()


def _plain(x):
    return (str(x.dtype), x.detach().tolist()) if isinstance(x, torch.Tensor) else x


def _answer(value):
    return [_answer(v) for v in value] if isinstance(value, (tuple, list)) else value.detach().tolist()


def _bound(ref, name: str, args: tuple, kwargs: dict) -> list:
    bound = inspect.signature(getattr(ref, name)).bind(*args, **kwargs)
    bound.apply_defaults()
    return [_plain(v) for v in bound.arguments.values()]


def _public_check_calls() -> list[ShownCall]:
    from autograder import checks
    from autograder.checks import Context
    from autograder.checks.local import LocalSubmission
    from autograder.sandbox.remote import SubmissionError

    ref = load_reference()
    calls: list[ShownCall] = []

    class Recorder(LocalSubmission):
        def call(self, fn, *args, grad=(), timeout=None, valid=True, **kwargs):
            inputs = _bound(ref, fn, args, kwargs)
            try:
                value, grads = super().call(fn, *args, grad=grad, valid=valid, **kwargs)
            except SubmissionError:
                calls.append((fn, inputs, None, {}, True))
                raise
            calls.append((fn, inputs, _answer(value),
                          {i: g.tolist() for i, g in zip(grad, grads) if g is not None}, False))
            return value, grads

    for check in checks.load_all().values():
        if checks.is_public(check):
            try:
                check.run(Context(sub=Recorder(ref), ref=None, hypothesis=config.load().hypothesis))
            except Exception:  # noqa: BLE001 - a check the reference fails still recorded what it called
                pass
    return calls


def _handout_calls() -> list[ShownCall]:
    folder = paths.ASSIGNMENT / "tests"
    if not folder.is_dir():
        return []
    ref = load_reference()
    calls: list[ShownCall] = []

    def recording(name):
        fn = getattr(ref, name)

        def wrapper(*args, **kwargs):
            inputs = _bound(ref, name, args, kwargs)
            try:
                answer = fn(*args, **kwargs)
            except ValueError:
                calls.append((name, inputs, None, {}, True))
                raise
            leaves = {i: a for i, a in enumerate(args) if isinstance(a, torch.Tensor) and a.requires_grad}
            grads = ()
            if leaves and isinstance(answer, torch.Tensor) and answer.dim() == 0 and answer.requires_grad:
                grads = torch.autograd.grad(answer, list(leaves.values()), retain_graph=True, allow_unused=True)
            calls.append((name, inputs, _answer(answer),
                          {i: g.tolist() for i, g in zip(leaves, grads) if g is not None}, False))
            return answer
        return wrapper

    module_name = config.current().submission.removesuffix(".py")
    fake = types.ModuleType(module_name)
    for attr in dir(ref):  # the reference's other names too (constants a test may import)
        setattr(fake, attr, getattr(ref, attr))
    for name in config.current().functions:
        setattr(fake, name, recording(name))
    saved = sys.modules.get(module_name)
    sys.modules[module_name] = fake
    sys.path.insert(0, str(folder))  # the tests' own helpers
    try:
        for path in sorted(folder.glob("test_*.py")):
            _run_tests(path)
    finally:
        sys.path.remove(str(folder))
        if saved is None:
            sys.modules.pop(module_name, None)
        else:
            sys.modules[module_name] = saved
    return calls


def _run_tests(path) -> None:
    spec = importlib.util.spec_from_file_location(f"handout_{path.stem}", path)
    if spec is None or spec.loader is None:
        return
    module = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(module)
    except Exception:  # noqa: BLE001 - a test module the judge cannot import shows nothing
        return
    for attr in dir(module):
        test = getattr(module, attr)
        if attr.startswith("test_") and callable(test) and not inspect.signature(test).parameters:
            try:
                test()
            except Exception:  # noqa: BLE001 - a test that the reference fails records what it called
                pass
