"""Tests every lab gets from its contract (grading.yaml `contract`), registered beside the lab's own checks.

For each contract function FUNCTION of part PART:

    PART.FUNCTION_dtype         FUNCTION answers fresh float32 inputs in float32 and float64 inputs in float64 (and in
                                the declared shape), with the reference's values compared at the precision returned
    PART.FUNCTION_grad_PARAM    for each PARAM the contract declares `differentiable`: the answer carries a gradient to
                                PARAM, and its vector-Jacobian product (a random cotangent, zero at padding) is the
                                reference's

Their points and visibility are grading.yaml's `tests:` entries under these ids (lab_problems asks for them). So a
wrong dtype costs this one test (the lab's checks compare the values at the precision returned: tools.Answer
.expect_close), and a detached output fails a unit test, not only an end-to-end one.

Inputs: the valid calls FUNCTION's public checks show (run on the reference, in the judge; else the lab's probe
input), at most SEEDS distinct ones, each cast to float32 and float64, then redrawn by the lab's fresh twin
(registry.Lab.twin, at positions no public check uses): new values of the same kind and size, which the lab keeps
away from kinks where a gradient is not defined. They need the reference: never in the self-check.
"""

from __future__ import annotations

import functools
import inspect
from typing import Callable

import torch

from autograder.checks.base import REGISTRY, Call, Check, Context, is_public
from autograder.checks.tools import FATAL_KINDS, Answer, expect_like_reference, fmt_call, fresh_input_like, recording
from autograder.lab import config
from autograder.sandbox import textsafe
from autograder.sandbox.remote import SubmissionError

SEEDS = 3                      # distinct seed calls per function (each in both dtypes)
DTYPES = (torch.float32, torch.float64)
DTYPE_POSITION = 1000          # twin positions: the dtype test's from here, each gradient test's from GRAD_POSITION
GRAD_POSITION = 2000
DETACHED = ("no gradient reached {wrt}: {fn}'s answer is detached from {wrt} (.detach(), .item(), .data, "
            "torch.no_grad, numpy?), and the training differentiates through it")


def dtype_test_id(part: str, function: str) -> str:
    return f"{part}.{function}_dtype"


def grad_test_id(part: str, function: str, wrt: str) -> str:
    return f"{part}.{function}_grad_{wrt}"


def derived_ids(cfg: config.Config) -> dict[str, str]:
    """test id -> the grading.yaml key that derives it ("contract.f" or "contract.f.differentiable")."""
    ids = {}
    for name, spec in cfg.contract.items():
        ids[dtype_test_id(spec.part, name)] = f"contract.{name}"
        ids.update({grad_test_id(spec.part, name, wrt): f"contract.{name}.differentiable"
                    for wrt in spec.differentiable})
    return ids


def register(cfg: config.Config) -> None:
    """Register the derived tests of every contract function (once per process)."""
    for name, spec in cfg.contract.items():
        _add(dtype_test_id(spec.part, name), f"{name} returns the input's dtype (float32 and float64) with the "
             "reference's values", name, functools.partial(dtype_test, function=name))
        for wrt in spec.differentiable:
            _add(grad_test_id(spec.part, name, wrt), f"{name} is differentiable in {wrt}, with the reference's "
                 "gradient", name, functools.partial(grad_test, function=name, wrt=wrt))


def _add(test_id: str, title: str, function: str, run: Callable[[Context], None]) -> None:
    if test_id not in REGISTRY:
        REGISTRY[test_id] = Check(test_id, title, (function,), run)


# ---------------------------------------------------------------- the tests
def dtype_test(ctx: Context, function: str) -> None:
    """Each fresh input in each dtype: the reference's values at the precision returned, then the input's dtype."""
    for made in fresh_calls(ctx, function, DTYPE_POSITION):
        answer = expect_like_reference(ctx, made, _lab().twin_scale)
        assert answer is not None  # seed calls are valid ones
        wanted = _dtype(made.args)
        for value in answer.value if isinstance(answer.value, tuple) else (answer.value,):
            if value.dtype != wanted:
                raise answer.fail(f"{function} returns {textsafe.dtype_words(value.dtype)} for "
                                  f"{textsafe.dtype_words(wanted)} inputs (its values are right at that precision): "
                                  "the contract asks for the inputs' dtype", expected=textsafe.dtype_words(wanted),
                                  got=textsafe.dtype_words(value.dtype))


def grad_test(ctx: Context, function: str, wrt: str) -> None:
    """Each fresh input in each dtype: a gradient reaches `wrt`, and d(cotangent . answer)/d wrt is the reference's."""
    spec = config.current().contract[function]
    index = spec.parameters.index(wrt)
    for position, made in enumerate(fresh_calls(ctx, function, GRAD_POSITION + 100 * index)):
        made = Call(made.function, made.args, made.kwargs, (index,), True, made.names, made.shape, made.tuple_of)
        cotangent = _cotangent(made, position)
        expected = _reference_vjp(ctx.ref, made, cotangent)
        answer = Answer(None, [], function, made.args, made.kwargs,
                        fmt_call(function, made.args, made.kwargs, made.names))
        try:
            answer.value, answer.grads = (ctx.sub.call(function, *made.args, grad=made.grad, cotangent=cotangent,
                                                       **made.kwargs) if cotangent is not None else
                                          ctx.sub.call(function, *made.args, grad=made.grad, **made.kwargs))
        except SubmissionError as exc:
            if exc.kind in FATAL_KINDS:
                raise
            raise answer.fail(str(exc), submission_text=exc.detail) from None
        got = answer.grads[0] if answer.grads else None
        if got is None:
            raise answer.fail(DETACHED.format(wrt=wrt, fn=function), expected=f"a gradient w.r.t. {wrt}",
                              got="none")
        what = "d " + function + " / d " + wrt if cotangent is None else \
            f"the vector-Jacobian product of {function} w.r.t. {wrt} (a random cotangent)"
        answer.expect_close(ctx, got, expected, f"{what} differs from the reference")


# ---------------------------------------------------------------- inputs
def fresh_calls(ctx: Context, function: str, first_position: int) -> list[Call]:
    """The test's inputs: each seed call in float32 and in float64, redrawn by the lab's twin."""
    spec = config.current().contract[function]
    made: list[Call] = []
    for seed in seed_calls(ctx.ref, function):
        for dtype in DTYPES:
            position = first_position + len(made)
            args, kwargs = fresh_input_like(function, _cast(seed.args, dtype), _cast_kwargs(seed.kwargs, dtype),
                                                 True, position)
            shape = spec.shapes(tuple(args))
            tuple_of = len(shape) if shape and isinstance(shape[0], tuple) else None
            made.append(Call(function, tuple(args), dict(kwargs), (), True, spec.parameters,
                             None if tuple_of else tuple(shape), tuple_of))
    return made


@functools.lru_cache(maxsize=None)
def _seeds(function: str, reference) -> tuple[Call, ...]:
    from autograder.checks.local import local_context

    shown: list[Call] = []
    with recording():  # the coverage measure records the checks' own calls, not these
        for check in list(REGISTRY.values()):  # the lab's checks, loaded (checks.load_all) before this test runs
            run = getattr(check.run, "shown", None)
            if function in check.functions and is_public(check) and run is not None:
                shown += [c for c in run(local_context(reference, reference)) if c.valid and c.function == function]
    distinct: dict[str, Call] = {}
    for call in shown or [_probe(function, reference)]:
        distinct.setdefault(_signature(call), call)
    return tuple(list(distinct.values())[:SEEDS])


def _probe(function: str, reference) -> Call:
    """The lab's probe input, its omitted parameters given their defaults by name (as a twin expects them all)."""
    args = tuple(_lab().probe_inputs()[function])
    parameters = list(inspect.signature(getattr(reference, function)).parameters.values())[len(args):]
    return Call(function, args, {p.name: p.default for p in parameters if p.default is not inspect.Parameter.empty})


def seed_calls(reference, function: str) -> tuple[Call, ...]:
    """Distinct valid calls of `function` to redraw (see the module docstring)."""
    return _seeds(function, reference)


def _signature(call: Call) -> str:
    """Shapes and settings: two seeds alike in these redraw alike."""
    def one(x) -> str:
        return f"T{tuple(x.shape)}" if isinstance(x, torch.Tensor) else repr(x)
    return ";".join([one(a) for a in call.args] + [f"{k}={one(v)}" for k, v in sorted(call.kwargs.items())])


def _cast(args: tuple, dtype: torch.dtype) -> tuple:
    return tuple(a.detach().to(dtype) if isinstance(a, torch.Tensor) and a.is_floating_point() else a for a in args)


def _cast_kwargs(kwargs: dict, dtype: torch.dtype) -> dict:
    return dict(zip(kwargs, _cast(tuple(kwargs.values()), dtype)))


def _dtype(args: tuple) -> torch.dtype:
    return next(a.dtype for a in args if isinstance(a, torch.Tensor) and a.is_floating_point())


def _cotangent(made: Call, position: int) -> torch.Tensor | None:
    """A random cotangent for an output of more than one element (None for a scalar), zero where `mask` is 0."""
    if made.shape == ():
        return None
    g = torch.Generator().manual_seed(7_919 + position)
    cotangent = torch.randn(made.shape or (), generator=g, dtype=torch.float64).to(_dtype(made.args))
    spec = config.current().contract[made.function]
    if spec.mask_index is not None and spec.mask_index < len(made.args):
        mask = made.args[spec.mask_index]
        if tuple(mask.shape) == tuple(cotangent.shape):
            cotangent = cotangent * mask.to(cotangent.dtype)
    return cotangent


def _reference_vjp(ref, made: Call, cotangent: torch.Tensor | None) -> torch.Tensor:
    """d(cotangent . reference(args))/d args[grad], computed in float64, in the call's dtype."""
    (i,) = made.grad
    args = [a.detach().double().requires_grad_(k == i) if isinstance(a, torch.Tensor) and a.is_floating_point()
            else a for k, a in enumerate(made.args)]
    value = getattr(ref, made.function)(*args, **made.kwargs)
    outputs = value if cotangent is None else (value * cotangent.double()).sum()
    (grad,) = torch.autograd.grad(outputs, [args[i]])
    return grad.detach().to(_dtype(made.args)) + 0.0


def _lab():
    from autograder.lab import registry  # the lab's hooks (hidden): never in the student bundle
    return registry.lab()

