"""Fresh draws of each contract function's declared domain, and whether two implementations answer them alike.

Where the draws come from: the function's differential check (the lab's domains.DIFFERENTIAL; a lab without
one: every hidden check that calls it) runs on the reference with its own strategy, but on `count` fresh
hypothesis examples (a fixed seed, not the derandomised draws a grade makes, nor the shipped examples.json),
then its chosen examples (the covering array); every call it makes of the function is kept. A check that
draws no hypothesis examples (the toy lab's seeded ones) is topped up to `count` with the lab's fresh twins
of its calls (checks/lab_inputs.py: new values of the same kind and size). Each draw is then asked in float32
and in float64 (its floating tensors cast), so `count` draws give `count` per dtype at least.

    draws = fresh(reference, "f", count=1000, seed_value=29)   # list[Draw]
    answer(reference, draw)   -> Answer: the values, the gradients of the inputs the checks ask them of
    differs(ref_answer, answer, draw, mask_index)  -> "" or what differs
"""

from __future__ import annotations

import contextlib
import copy
from dataclasses import dataclass
from types import ModuleType
from typing import Any, Iterator

import torch
from hypothesis import HealthCheck, Phase, given, seed, settings

from autograder import checks
from autograder.checks import CheckFailed, examples, lab_inputs, tools
from autograder.checks.local import LocalSubmission, local_context
from autograder.lab import config
from autograder.sandbox.remote import SubmissionError

ROUNDING = 16  # answers equal within this many units of rounding (of the dtype) of the tensor's largest entry


@dataclass(frozen=True)
class Draw:
    function: str
    args: tuple
    kwargs: dict
    grad: tuple[int, ...]  # the positional arguments whose gradients are compared: those any unit check compares
    valid: bool            # False: an input the contract rejects (the answer is an exception)


@dataclass(frozen=True)
class Answer:
    raised: str                          # the exception's type name, "" when it answered
    values: tuple[torch.Tensor | None, ...]
    grads: tuple[torch.Tensor | None, ...]


class _Recorder(LocalSubmission):
    """The reference, answering every call, keeping each call of `function`."""

    def __init__(self, module: ModuleType, function: str):
        super().__init__(module)
        self.function, self.calls = function, []

    def call(self, fn: str, *args, grad: tuple[int, ...] = (), valid: bool = True, **kwargs):
        if fn == self.function:
            kept = {k: v for k, v in kwargs.items() if k not in ("timeout", "cotangent")}
            self.calls.append(Draw(fn, _copied(args), _copied(kept), tuple(grad), valid))
        return super().call(fn, *args, grad=grad, valid=valid, **kwargs)


def source_checks(function: str) -> list[str]:
    """The checks whose calls are the function's draws: its differential check, else its hidden checks."""
    from autograder.checks import differential
    domains = differential.lab_domains()
    check_id = domains.DIFFERENTIAL.get(function) if domains is not None else None
    if check_id:
        return [check_id]
    registered = checks.load_all()
    return [c for c in config.current().tests if c in registered and function in registered[c].functions
            and not checks.is_public(registered[c])]


def fresh(reference: ModuleType, function: str, count: int, seed_value: int) -> list[Draw]:
    """At least `count` draws per dtype (float32 and float64) of `function`'s declared domain (module docstring)."""
    recorder = _Recorder(reference, function)
    ctx = local_context(reference, reference)
    ctx.sub = recorder
    with _fresh_examples(count, seed_value):
        for check_id in source_checks(function):
            try:
                checks.load_all()[check_id].run(ctx)
            except (CheckFailed, SubmissionError):
                pass  # the reference failing its own check on a draw is the domain test's finding, not ours
    asked = gradients_asked(reference, function)
    drawn = [Draw(d.function, d.args, d.kwargs, asked, d.valid) for d in recorder.calls]
    position = 0
    while drawn and len(drawn) < count:  # a check without hypothesis draws: top up with the lab's twins
        base = drawn[position % len(recorder.calls)]
        args, kwargs = lab_inputs.fresh_twin(function, base.args, base.kwargs, base.valid, 10_000 + position)
        drawn.append(Draw(function, args, kwargs, base.grad, base.valid))
        position += 1
    return [d for draw in drawn for d in (_cast(draw, torch.float32), _cast(draw, torch.float64))]


def gradients_asked(reference: ModuleType, function: str) -> tuple[int, ...]:
    """The arguments whose gradients any unit check of `function` compares (run once on the reference)."""
    recorder = _Recorder(reference, function)
    ctx = local_context(reference, reference)
    ctx.sub = recorder
    registered = checks.load_all()
    for check_id in config.current().tests:
        if check_id in registered and function in registered[check_id].functions:
            with contextlib.suppress(CheckFailed, SubmissionError):
                registered[check_id].run(ctx)
    return tuple(sorted({i for call in recorder.calls for i in call.grad}))


@contextlib.contextmanager
def _fresh_examples(count: int, seed_value: int) -> Iterator[None]:
    """The lab's property checks draw `count` fresh examples (seeded), every one run even where the body fails."""
    def drawing(ctx, strategy, body) -> None:
        def kept(example):
            with contextlib.suppress(CheckFailed, SubmissionError):
                body(example)

        run = settings(max_examples=count, derandomize=False, database=None, deadline=None,
                       suppress_health_check=list(HealthCheck), phases=[Phase.generate])(seed(seed_value)(
                           given(strategy)(kept)))
        with tools._no_local_constants():
            run()

    saved = examples.LIVE, tools.for_all
    examples.LIVE, tools.for_all = True, drawing
    try:
        yield
    finally:
        examples.LIVE, tools.for_all = saved


def answer(module: ModuleType, draw: Draw, cotangent_seed: int = 0) -> Answer:
    """The module's answer to the draw: its values, and the vector-Jacobian product of a fixed random cotangent
    (zero where the output is padding) with respect to the arguments in draw.grad."""
    args = [a.detach().clone().requires_grad_(i in draw.grad) if isinstance(a, torch.Tensor) else a
            for i, a in enumerate(draw.args)]
    kwargs = _copied(draw.kwargs)
    try:
        value = getattr(module, draw.function)(*args, **kwargs)
    except Exception as exc:  # noqa: BLE001 - the code under test may raise anything
        return Answer(type(exc).__name__, (), ())
    outputs = tuple(v if isinstance(v, torch.Tensor) else None
                    for v in (value if isinstance(value, (tuple, list)) else (value,)))
    grads: tuple[torch.Tensor | None, ...] = ()
    wanted = [args[i] for i in draw.grad]
    differentiable = [o for o in outputs if o is not None and o.requires_grad]
    if wanted and differentiable:
        gen = torch.Generator().manual_seed(cotangent_seed)
        total = sum((o * torch.randn(o.shape, generator=gen, dtype=torch.float64).to(o.dtype)).sum()
                    for o in differentiable)
        try:
            grads = tuple(torch.autograd.grad(total, wanted, allow_unused=True))
        except RuntimeError as exc:
            return Answer(type(exc).__name__, (), ())
    elif wanted:
        grads = tuple(None for _ in wanted)
    return Answer("", tuple(o.detach() if o is not None else None for o in outputs),
                  tuple(g.detach() if g is not None else None for g in grads))


def differs(expected: Answer, got: Answer, draw: Draw, mask_index: int | None) -> str:
    """"" when `got` answers the draw as `expected` does (same exception type, or the same values and gradients
    within ROUNDING units of rounding, compared where the mask is 1 for per-token outputs); else what differs."""
    if expected.raised or got.raised:
        return "" if expected.raised == got.raised else \
            f"raises {got.raised or 'nothing'} where the reference raises {expected.raised or 'nothing'}"
    if len(expected.values) != len(got.values):
        return f"returns {len(got.values)} values, the reference {len(expected.values)}"
    mask = draw.args[mask_index] if mask_index is not None and mask_index < len(draw.args) else None
    for i, (e, g) in enumerate(zip(expected.values, got.values)):
        keep = mask.bool() if mask is not None and e is not None and e.shape == mask.shape else None
        if (found := _tensor_differs(e, g, keep)):
            return f"output {i}: {found}"
    for i, (e, g) in enumerate(zip(expected.grads, got.grads)):
        if (found := _tensor_differs(_zero_if_none(e, g), _zero_if_none(g, e), None)):
            return f"gradient of argument {draw.grad[i]}: {found}"
    return ""


def _tensor_differs(expected: torch.Tensor | None, got: torch.Tensor | None, keep: torch.Tensor | None) -> str:
    if expected is None or got is None:
        return "" if expected is got else "a tensor where the reference has none, or the reverse"
    if expected.shape != got.shape or expected.dtype != got.dtype:
        return f"{got.dtype} {tuple(got.shape)} where the reference gives {expected.dtype} {tuple(expected.shape)}"
    if keep is not None:
        expected, got = expected[keep], got[keep]
    if not expected.is_floating_point():
        return "" if torch.equal(expected, got) else "values differ"
    e, g = expected.double(), got.double()
    finite = torch.isfinite(e)
    if not torch.equal(finite, torch.isfinite(g)) or not torch.equal(e[~finite].nan_to_num(0.0, 1.0, -1.0),
                                                                     g[~finite].nan_to_num(0.0, 1.0, -1.0)):
        return "non-finite values differ"
    if not finite.any():
        return ""
    scale = max(float(e[finite].abs().max()), 1.0)
    worst = float((e[finite] - g[finite]).abs().max())
    allowed = ROUNDING * torch.finfo(expected.dtype).eps * scale
    return "" if worst <= allowed else f"differs by {worst:.3g} (allowed {allowed:.2g})"


def _zero_if_none(t: torch.Tensor | None, like: torch.Tensor | None) -> torch.Tensor | None:
    return torch.zeros_like(like) if t is None and like is not None else t


def _cast(draw: Draw, dtype: torch.dtype) -> Draw:
    def to(x: Any) -> Any:
        return x.to(dtype) if isinstance(x, torch.Tensor) and x.is_floating_point() else x
    return Draw(draw.function, tuple(to(a) for a in draw.args), {k: to(v) for k, v in draw.kwargs.items()},
                draw.grad, draw.valid)


def _copied(value: Any) -> Any:
    if isinstance(value, torch.Tensor):
        return value.detach().clone()
    if isinstance(value, dict):
        return {k: _copied(v) for k, v in value.items()}
    if isinstance(value, (tuple, list)):
        return type(value)(_copied(v) for v in value)
    return copy.copy(value)


def describe(draw: Draw, limit: int = 600) -> str:
    """The draw as a call, for a report (tensors in full up to `limit` characters)."""
    names = registry_names(draw.function)
    parts = [f"{names[i] if i < len(names) else i}={_short(a)}" for i, a in enumerate(draw.args)]
    parts += [f"{k}={_short(v)}" for k, v in draw.kwargs.items()]
    text = f"{draw.function}({', '.join(parts)})"
    return text if len(text) <= limit else text[:limit] + " ..."


def registry_names(function: str) -> tuple[str, ...]:
    return tuple(config.current().contract[function].parameters)


def _short(x: Any) -> str:
    if isinstance(x, torch.Tensor):
        return f"tensor({x.tolist()}, dtype={x.dtype})"
    return repr(x)
