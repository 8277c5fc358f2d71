"""Run the checks in-process on trusted code (the reference, a bank entry, a null submission): fast,
no sandbox. Used to measure which parts of the valid domain the checks reach, and by fast tests.

    ctx = local_context(module_with_the_seven_functions)
    REGISTRY["gae.matches_reference"].run(ctx)      # raises CheckFailed / SubmissionError when wrong

`LocalSubmission.call` answers like RemoteSubmission.call: (value, grads) with a tuple as a list and
a non-tensor as {"__object__": type name}; an exception becomes a SubmissionError of the same kind, and
so do the purity checks: a call that writes into an argument fails ("mutated"), and the same sample of
answers is asked twice ("inconsistent" for the rest of the context's checks when two answers differ).
"""

from __future__ import annotations

import importlib.util
import types
from pathlib import Path

import torch

from autograder.checks.base import Context
from autograder.lab import config
from autograder.sandbox import textsafe
from autograder.sandbox.remote import (
    SubmissionError,
    equal_bits,
    inconsistency_error,
    mutation_error,
    reasked,
    same_answer,
)


class LocalSubmission:
    def __init__(self, module: types.ModuleType):
        self.module = module
        self.memo: dict = {}
        self._answers = 0
        self._inconsistent: dict[str, SubmissionError] = {}

    def call(self, fn: str, *args, grad: tuple[int, ...] = (), timeout: float | None = None,
             valid: bool = True, cotangent: torch.Tensor | None = None, **kwargs):
        if fn in self._inconsistent:
            raise self._inconsistent[fn]
        answer = self._answer(fn, args, kwargs, grad, valid, cotangent)
        self._answers += 1
        if reasked(self._answers):
            try:
                again = self._answer(fn, args, kwargs, grad, valid, cotangent)
            except SubmissionError:
                again = None
            if again is None or not same_answer(fn, answer, again, tuple(args), kwargs):
                self._inconsistent[fn] = inconsistency_error(fn)
                raise self._inconsistent[fn]
        return answer

    def _answer(self, fn: str, sent_args: tuple, sent_kwargs: dict, grad: tuple[int, ...], valid: bool,
                cotangent: torch.Tensor | None = None) -> tuple:
        function = getattr(self.module, fn, None)
        if function is None:
            raise SubmissionError(f"{fn} is missing", "missing")
        args = [a.detach().clone().requires_grad_(i in grad) if isinstance(a, torch.Tensor) else a
                for i, a in enumerate(sent_args)]
        kwargs = {k: v.detach().clone() if isinstance(v, torch.Tensor) else v for k, v in sent_kwargs.items()}
        try:
            value = function(*args, **kwargs)
        except NotImplementedError as exc:
            raise SubmissionError(f"{fn} raised NotImplementedError", "not_implemented" if valid else "raised",
                                  "NotImplementedError", textsafe.clean(str(exc), 500)) from None
        except Exception as exc:  # noqa: BLE001 - the code under test may raise anything
            raise SubmissionError(f"{fn} {textsafe.raised_words(type(exc).__name__, str(exc))}", "raised",
                                  type(exc).__name__, textsafe.clean(str(exc), 500)) from None
        grads: list[torch.Tensor | None] = []
        if grad:
            outputs = value if isinstance(value, torch.Tensor) else None
            inputs = [args[i] for i in grad]
            if outputs is not None and outputs.requires_grad and cotangent is not None \
                    and cotangent.shape == outputs.shape:  # a vector-Jacobian product, as the child's
                grads = list(torch.autograd.grad(outputs, inputs, cotangent.to(outputs.dtype), allow_unused=True))
            elif outputs is not None and outputs.requires_grad and outputs.dim() == 0:
                grads = list(torch.autograd.grad(outputs, inputs, allow_unused=True))
            else:
                grads = [None] * len(grad)
        given = {**dict(enumerate(args)), **kwargs}
        for key, original in {**dict(enumerate(sent_args)), **sent_kwargs}.items():
            if isinstance(original, torch.Tensor) and not equal_bits(given[key].detach(), original.detach()):
                raise mutation_error(fn, key, len(sent_args), sent_kwargs)
        return _plain(value), [g.detach() if g is not None else None for g in grads]

    def close(self) -> None:
        pass


def _plain(value):
    if isinstance(value, torch.Tensor):
        return value.detach()
    if isinstance(value, (tuple, list)):
        return [_plain(v) for v in value]
    return {"__object__": type(value).__name__}


def load_module(path: Path, name: str = "lab_local_submission") -> types.ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None, path
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def module_from_source(source: str, name: str = "lab_local_submission") -> types.ModuleType:
    module = types.ModuleType(name)
    exec(compile(source, f"<{name}>", "exec"), module.__dict__)  # trusted code only (see the module docstring)
    return module


def local_context(module: types.ModuleType, reference: types.ModuleType, hypothesis: dict | None = None) -> Context:
    return Context(sub=LocalSubmission(module), ref=reference, hypothesis=hypothesis or config.load().hypothesis)
