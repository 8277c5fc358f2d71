"""What checks share: calling the submission with validation, comparing, formatting, hypothesis, and the
fresh twins that make a public check's points need more than its shown inputs (`public`)."""

from __future__ import annotations

import functools
from contextlib import contextmanager
from dataclasses import dataclass, replace
from typing import Any, Callable, Sequence

import torch
from hypothesis import HealthCheck, Phase, given, seed, settings
from hypothesis import strategies as st
from hypothesis.control import current_build_context
from hypothesis.database import ExampleDatabase, choices_to_bytes
from hypothesis.internal.conjecture import providers
from hypothesis.reporting import with_reporter

from autograder.checks.base import Call, CheckFailed, Context
from autograder.lab import config
from autograder.sandbox import textsafe
from autograder.sandbox.remote import SubmissionError, parameter_names
from autograder.sandbox.textsafe import fmt

# Failures that no other input would change: reported at once, never shrunk (an inconsistent function
# fails every later call of its test at once: no input to show).
FATAL_KINDS = ("import", "missing", "not_implemented", "died", "protocol", "inconsistent")


def fmt_call(function: str, args: tuple, kwargs: dict, names: tuple[str, ...] = ()) -> str:
    """`function(name=value, ...)`, one argument a line, tensors with their shape and dtype."""
    lines = []
    for i, a in enumerate(args):
        label = f"{names[i]}=" if i < len(names) else ""
        note = f"  # {tuple(a.shape)} {textsafe.dtype_words(a.dtype)}" if isinstance(a, torch.Tensor) else ""
        lines.append(f"    {label}{fmt(a)},{note}")
    lines += [f"    {k}={fmt(v)}," for k, v in kwargs.items()]
    return f"{function}(\n" + "\n".join(lines) + "\n)"


@dataclass
class Answer:
    """The submission's validated answer to one call, with what is needed to report a failure."""

    value: Any                  # a tensor, or a tuple of tensors
    grads: list                 # d(value)/d(args[i]) for each requested i (tensor or None)
    function: str
    args: tuple
    kwargs: dict
    inputs: str                 # the call, formatted for the report

    def fail(self, message: str, expected: str = "", got: str = "", compared: str = "",
             submission_text: str = "") -> CheckFailed:
        """The failure of this call: `message` and `compared` are shown with the outcome, `expected`, `got` and
        `submission_text` (textsafe TEXT) with the inputs."""
        return CheckFailed(message, inputs=self.inputs, expected=expected, got=got, function=self.function,
                           args=self.args, kwargs=self.kwargs, answer=self.value, compared=compared,
                           submission_text=submission_text)

    @property
    def sizes(self) -> list:
        """The shapes of the call's tensor arguments (the sizes a sentence may name: textsafe.shape_words)."""
        return [a.shape for a in self.args if isinstance(a, torch.Tensor)]

    def expect_close(self, ctx: Context, got: torch.Tensor, expected: torch.Tensor, message: str,
                     mask: torch.Tensor | None = None, scale: float = 0.0) -> None:
        """Fail with `message` unless got ~ expected (where mask == 1), at the dtype's tolerance.

        `scale` is the size of what a correct computation adds up (e.g. the sum of |terms| of a
        mean): its rounding error, 4 * scale * eps(dtype), is added to the absolute tolerance, so
        that a correct float32 sum of large terms that nearly cancel still passes."""
        precision = coarser(expected.dtype, got.dtype)  # compared at the precision returned (or expected)
        rtol, atol = tolerances(ctx, precision)
        atol += 4 * scale * torch.finfo(precision).eps
        g, e = got.double(), expected.double()
        if mask is not None:
            keep = mask.bool()
            g, e = torch.where(keep, g, 0.0), torch.where(keep, e, 0.0)
        if g.shape != e.shape or not torch.isfinite(g).all() or not torch.allclose(g, e, rtol=rtol, atol=atol):
            shown = (lambda x: x) if mask is None else (lambda x: _masked(x, mask))
            note = "" if mask is None else "   (nan marks padding: not compared)"
            raise self.fail(message, expected=fmt(shown(e)) + note, got=fmt(shown(g)),
                            compared=textsafe.compared(expected, got, *self.sizes))


RECORDED: list | None = None  # while `recording()`: every (function, args, kwargs) a check calls


@contextmanager
def recording():
    """Collect the calls checks make (to measure which parts of the valid domain they reach)."""
    global RECORDED
    saved, RECORDED = RECORDED, []
    try:
        yield RECORDED
    finally:
        RECORDED = saved


SHOWN: list[Call] | None = None  # while a public check runs (`public`): the calls it makes, in order


def call(ctx: Context, function: str, *args, grad: tuple[int, ...] = (), names: tuple[str, ...] = (),
         shape: tuple[int, ...] | None = None, tuple_of: int | None = None, **kwargs) -> Answer:
    """Call the submission's `function` and validate the answer's type, shape and dtype.

    Raises CheckFailed (with the input) on an exception or a malformed answer, so hypothesis can
    shrink the input that causes it; fatal failures (not implemented, crashed...) pass through.
    """
    if RECORDED is not None:
        RECORDED.append((function, args, kwargs))
    made = Call(function, args, kwargs, grad, True, names, shape, tuple_of)
    if SHOWN is not None:
        SHOWN.append(made)
    return ask(ctx, made)


def call_rejected(ctx: Context, function: str, *args, names: tuple[str, ...] = (), **kwargs):
    """Call with an input the contract rejects (valid=False); returns the value, or raises the SubmissionError."""
    if SHOWN is not None:
        SHOWN.append(Call(function, args, kwargs, valid=False, names=names))
    return ctx.sub.call(function, *args, valid=False, **kwargs)[0]


def expect_value_error(ctx: Context, function: str, args: tuple, kwargs: dict, names: tuple[str, ...],
                       wanted: str, *, neighbour: tuple[tuple, dict]) -> None:
    """Fail unless function(*args, **kwargs), a call the contract rejects, raises ValueError in the submission,
    and function(*neighbour[0], **neighbour[1]), its valid neighbour (the same call made valid), answers;
    `wanted` says what the contract asks ("f should raise ValueError for an unknown mode"). The neighbour makes
    a rejection test about rejecting this input, not every input: a function that always raises fails it.

    A NotImplementedError raised there is an ordinary wrong exception for this check alone, not "the function
    is not written yet". The failure shows the input, expected ValueError against what came instead."""
    from autograder.lab import config  # the neighbour's answer has the contract's shape
    spec = config.current().contract.get(function)
    items = len(spec.returns.split(",")) if spec is not None else 1
    try:
        call(ctx, function, *neighbour[0], names=names, tuple_of=items if items > 1 else None, **neighbour[1])
    except CheckFailed as failure:
        failure.message = f"{function} must answer the valid input next to the rejected one: {failure.message}"
        raise
    inputs = fmt_call(function, args, kwargs, names)
    try:
        value = call_rejected(ctx, function, *args, names=names, **kwargs)
    except SubmissionError as exc:
        if exc.kind in FATAL_KINDS:
            raise
        if exc.kind == "raised" and exc.exc_type == "ValueError":
            return
        raise CheckFailed(f"{wanted}; it {str(exc).removeprefix(function + ' ')}; the contract asks for "
                          "ValueError", inputs=inputs, expected="ValueError",
                          got=textsafe.exception_words(exc.exc_type),
                          submission_text=exc.detail, function=function, args=args, kwargs=kwargs) from None
    raise CheckFailed(f"{wanted}; it returned a value", inputs=inputs, expected="ValueError", got=fmt(value),
                      function=function, args=args, kwargs=kwargs, answer=value)


def ask(ctx: Context, made: Call) -> Answer:
    """The submission's validated answer to `made` (see `call`)."""
    function, args, kwargs, shape, tuple_of = made.function, made.args, made.kwargs, made.shape, made.tuple_of
    answer = Answer(None, [], function, args, kwargs, fmt_call(function, args, kwargs, made.names))
    try:
        value, answer.grads = ctx.sub.call(function, *args, grad=made.grad, **kwargs)
    except SubmissionError as exc:
        if exc.kind in FATAL_KINDS:
            raise
        raise answer.fail(str(exc), submission_text=exc.detail) from None
    answer.value = value
    like = next(a for a in args if isinstance(a, torch.Tensor) and a.is_floating_point())
    sizes = answer.sizes + ([shape] if shape is not None else [])
    if tuple_of and (not isinstance(value, list) or len(value) != tuple_of):
        raise answer.fail(f"{function} should return a tuple of {tuple_of} tensors", got=fmt(value))
    for v in value if tuple_of else [value]:
        if not isinstance(v, torch.Tensor):
            raise answer.fail(f"{function} returned {textsafe.object_words(v)}, not a tensor", got=fmt(v))
        if shape is not None and tuple(v.shape) != tuple(shape):
            raise answer.fail(f"{function} returned {textsafe.shape_words(v.shape, *sizes)}, expected shape "
                              f"{tuple(shape)}", got=textsafe.shape_text(v.shape))
        if not v.is_floating_point():  # another float precision is compared at its own: the dtype test fails it
            raise answer.fail(f"{function} returned {textsafe.dtype_words(v.dtype)} for "
                              f"{textsafe.dtype_words(like.dtype)} inputs (return the input dtype)")
    answer.value = tuple(value) if tuple_of else value
    return answer


# ---------------------------------------------------------------- public checks and their fresh twins
FRESH = "passes the example shown, but not a fresh input of the same kind and size"


def public(run: Callable[[Context], None]) -> Callable[[Context], None]:
    """Mark a public check (checks/public/): its shown inputs teach, and are all the self-check runs.

    In a full grade (the reference is there), once the check passes on its shown inputs, every call it
    made gets a fresh twin (checks/hidden/fresh.py: the same function, shapes, dtype, mask, requested
    gradients and settings, new values drawn by the judge), and the submission must answer each twin as
    the reference does: so answers memorised for the shown inputs earn nothing. A twin's input was never
    shown: a failure on it shows it like a hidden test's input (CheckFailed.private_inputs).
    """
    def shown(ctx: Context) -> list[Call]:
        """Run the check on its shown inputs; the calls it made, in order."""
        global SHOWN
        saved, SHOWN = SHOWN, []
        try:
            run(ctx)
            return SHOWN
        finally:
            SHOWN = saved

    @functools.wraps(run)
    def shown_then_fresh(ctx: Context) -> None:
        made = shown(ctx)
        if ctx.ref is not None:
            fresh_twins(ctx, made)

    shown_then_fresh.shown = shown  # type: ignore[attr-defined]  # the grade runs the halves apart (grade.run_lane)
    shown_then_fresh.fresh_twins = fresh_twins  # type: ignore[attr-defined]
    return shown_then_fresh


def fresh_twins(ctx: Context, made: list[Call]) -> None:
    """The submission answers a fresh twin of each call in `made` (a public check's shown calls) as the reference
    does (expect_like_reference)."""
    from autograder.lab import registry
    for position, shown in enumerate(made):
        args, kwargs = fresh_input_like(shown.function, shown.args, shown.kwargs, shown.valid, position)
        try:
            expect_like_reference(ctx, replace(shown, args=args, kwargs=kwargs), registry.lab().twin_scale)
        except CheckFailed as failure:  # the shown input passed: say so, and hold the twin's input back
            failure.message = f"{FRESH}: {failure.message}"
            failure.private_inputs = True
            raise


def fresh_input_like(function: str, args: tuple, kwargs: dict, valid: bool, position: int) -> tuple[tuple, dict]:
    """A fresh twin of a call (checks/lab_inputs.py: derived from a declared domain, else the lab's); a full grade's
    only (the student bundle, whose self-check never asks a twin, holds none of the draws: bundling/engine.py)."""
    from autograder.checks.lab_inputs import fresh_twin
    return fresh_twin(function, args, kwargs, valid, position)


def expect_like_reference(ctx: Context, made: Call,
                          scale: Callable[[str, tuple], float] | None = None) -> Answer | None:
    """The submission answers `made` as the reference does: the same exception for a rejected input; else the
    value (where `mask` is 1, for a per-token output) and each requested gradient, at the checks' tolerances
    plus a scalar value's rounding allowance (`reference_answer`; a lab's `scale(function, args)` where it is
    larger). Raises CheckFailed; returns the answer (None for a rejected input)."""
    expected = reference_answer(ctx.ref, made)
    if isinstance(expected, BaseException):
        _expect_raise(ctx, made, expected)
        return None
    allowance = max(expected.allowance, scale(made.function, made.args) if scale else 0.0)
    answer = ask(ctx, made)
    names = parameter_names(made.function)
    mask = made.args[names.index("mask")] if "mask" in names[:len(made.args)] else None
    got = answer.value if isinstance(answer.value, tuple) else (answer.value,)
    value = expected.value
    for i, (g, e) in enumerate(zip(got, value if isinstance(value, tuple) else (value,))):
        what = f"output {i + 1} of {made.function}" if len(got) > 1 else f"{made.function}'s value"
        answer.expect_close(ctx, g, e, f"{what} differs from the reference",
                            mask if mask is not None and g.shape == mask.shape else None, allowance)
    for i, g_sub, g_ref in zip(made.grad, answer.grads, expected.grads):
        wrt = names[i] if i < len(names) else f"argument {i + 1}"
        if g_sub is None:
            raise answer.fail(f"no gradient reached {wrt}", expected=f"a gradient w.r.t. {wrt}", got="none")
        answer.expect_close(ctx, g_sub, g_ref, f"d {made.function} / d {wrt} differs from the reference")
    return answer


@dataclass(frozen=True)
class Expected:
    """The reference's answer to a call, computed in float64 and returned in the call's dtype."""

    value: Any          # a tensor, or a tuple of tensors
    grads: list         # d(value)/d(args[i]) for each i in the call's `grad`
    allowance: float    # a scalar value's rounding allowance: sum_i |x_i * d value / d x_i| over the floating
    #                     tensor arguments (how far a correct float32 computation that adds up the same terms in
    #                     another order may land; expect_close adds 4 eps of it); 0 for a tensor value


def reference_answer(ref: Any, made: Call, scalar: bool | None = None) -> Expected | BaseException:
    """The reference's answer to `made` (one float64 call), or the exception it raises (a rejected input).
    `scalar`: whether the function returns one number (default: what the lab's contract says)."""
    if scalar is None:
        spec = config.current().contract.get(made.function)
        scalar = spec is not None and spec.returns == "scalar"
    floats = [i for i, a in enumerate(made.args) if isinstance(a, torch.Tensor) and a.is_floating_point()]
    dtype = made.args[floats[0]].dtype
    allowed = floats if scalar else []  # the arguments the allowance sums over
    answered = _call_reference(ref, made, allowed)
    if isinstance(answered, BaseException) and allowed:  # it rejects inputs that need a gradient: ask it as asked
        answered, allowed = _call_reference(ref, made, []), []
    if isinstance(answered, BaseException):
        return answered
    value, args = answered
    grads = torch.autograd.grad(value, [args[i] for i in made.grad], retain_graph=bool(allowed)) if made.grad else ()

    def cast(v: torch.Tensor) -> torch.Tensor:
        return v.detach().to(dtype) + 0.0  # + 0.0: -0.0 shown as 0.0

    return Expected(tuple(cast(v) for v in value) if isinstance(value, tuple) else cast(value),
                    [cast(g) for g in grads], _allowance(value, [args[i] for i in allowed]) if allowed else 0.0)


def _call_reference(ref: Any, made: Call, wrt: Sequence[int]) -> tuple[Any, list] | BaseException:
    """(value, its float64 arguments, those in `wrt` and the call's `grad` requiring a gradient), or what the
    reference raises."""
    args = [a.detach().double().requires_grad_(i in wrt or i in made.grad)
            if isinstance(a, torch.Tensor) and a.is_floating_point() else a for i, a in enumerate(made.args)]
    try:
        return getattr(ref, made.function)(*args, **made.kwargs), args
    except Exception as exc:  # noqa: BLE001 - the reference rejects this input: the submission must too
        return exc


def _allowance(value: Any, inputs: list[torch.Tensor]) -> float:
    """sum_i |x_i * d value / d x_i| (Expected.allowance); 0 where the value has no gradient."""
    try:
        grads = torch.autograd.grad(value, inputs, allow_unused=True)
    except RuntimeError:  # a value that does not depend differentiably on its inputs
        return 0.0
    return float(sum((x.detach() * g).abs().sum() for x, g in zip(inputs, grads) if g is not None))


def _expect_raise(ctx: Context, made: Call, expected: BaseException) -> None:
    wanted = type(expected).__name__
    inputs = fmt_call(made.function, made.args, made.kwargs, made.names)
    failed = functools.partial(CheckFailed, inputs=inputs, expected=wanted, function=made.function, args=made.args,
                               kwargs=made.kwargs)
    try:
        value, _ = ctx.sub.call(made.function, *made.args, valid=False, **made.kwargs)
    except SubmissionError as exc:
        if exc.kind in FATAL_KINDS:
            raise
        if exc.kind == "raised" and exc.exc_type == wanted:
            return
        raise failed(f"{made.function} should raise {wanted} here, as the reference does; it "
                     f"{str(exc).removeprefix(made.function + ' ')}",
                     got=textsafe.exception_words(exc.exc_type)) from None
    raise failed(f"{made.function} should raise {wanted} here, as the reference does; it returned a value",
                 got=fmt(value), answer=value)


def coarser(a: torch.dtype, b: torch.dtype) -> torch.dtype:
    """The less precise of two float dtypes (the larger eps); `a` when `b` is no float dtype."""
    return a if not b.is_floating_point or torch.finfo(a).eps >= torch.finfo(b).eps else b


def tolerances(ctx: Context, dtype: torch.dtype) -> tuple[float, float]:
    h = ctx.hypothesis
    if dtype == torch.float32:
        return h["rtol_float32"], h["atol_float32"]
    return h["rtol"], h["atol"]


def _masked(x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Padded positions shown as nan ("ignored") so students see which entries were compared."""
    return torch.where(mask.bool(), x, torch.full_like(x, float("nan")))


class ShrinkBudget:
    """What shrinking one check's failure may cost: `examples` more examples or `seconds` more CPU (the judge's
    and the child's, `cpu()`) after the first failure. Past it the failure found last, real and as small as it
    got, is what every later example raises: hypothesis stops calling the submission and ends at once."""

    def __init__(self, examples: int, seconds: float, cpu: Callable[[], float]):
        self.examples, self.seconds, self.cpu = examples, seconds, cpu
        self.failure: CheckFailed | None = None
        self._since = 0
        self._cpu_at = 0.0

    def failed(self, failure: CheckFailed) -> None:
        if self.failure is None:
            self._cpu_at = self.cpu()
        self.failure = failure

    def spent(self) -> bool:
        if self.failure is None:
            return False
        self._since += 1
        return self._since > self.examples or self.cpu() - self._cpu_at > self.seconds


# The seed of every grade's draws: the one hypothesis's `derandomize` derived from the code of this module's earlier
# test function (its function_digest), kept as a number so that the shipped draws stay the same when that code changes.
DRAW_SEED = 0xc1714822e6df9c261cf5bcc509696ee70e169c1f1389a171e575681fec2c34670bf6ae5132f975f6e1acb8b159fabd23


def for_all(ctx: Context, strategy: st.SearchStrategy, body: Callable) -> None:
    """Run `body(example)` on hypothesis's examples (max_examples of them, drawn from a fixed seed), smallest first;
    the first failure, shrunk, propagates.

    The examples are drawn first (`draws`), then run in hypothesis's own order of their choice sequences (shortlex:
    its reuse phase's), and the first the body fails is shrunk from its choice sequence (`shrink_from`). So a
    failure shrinks from the smallest failing draw, not the first one drawn: the same kind of minimum in a fraction
    of the steps. Should it fail no more (a body with state or randomness), the failure stands, unshrunk."""
    for example, choices in sorted(draws(ctx, strategy), key=lambda drawn: shortlex(drawn[1])):
        try:
            body(example)
        except Exception:
            shrink_from(ctx, strategy, body, choices)
            raise


def draws(ctx: Context, strategy: st.SearchStrategy) -> list[tuple[Any, bytes]]:
    """Every example for_all draws from `strategy`, in hypothesis's order (some twice, from other choices), each with
    the choice sequence it was drawn from."""
    drawn: list[tuple[Any, bytes]] = []
    _run(ctx, strategy, lambda example: drawn.append((example, choices_drawn())), [Phase.explicit, Phase.generate])
    return drawn


def shortlex(choices: bytes) -> tuple[int, bytes]:
    """Hypothesis's order of choice sequences (its reuse phase's): shorter first, then bytewise."""
    return len(choices), choices


def shrink_from(ctx: Context, strategy: st.SearchStrategy, body: Callable, start: bytes) -> None:
    """Shrink a failure of `body` from the example drawn from the choice sequence `start` (`choices_drawn()`), and
    raise it; return if the body passes that example now (state or randomness). Shrinking stops at grading.yaml's
    hypothesis.shrink_examples / shrink_seconds (ShrinkBudget)."""
    shrink = ShrinkBudget(ctx.hypothesis["shrink_examples"], ctx.hypothesis["shrink_seconds"], ctx.cpu)

    def shrunk(example):
        failure = shrink.failure if shrink.spent() else None
        if failure is None:
            try:
                body(example)
            except CheckFailed as exc:
                shrink.failed(exc)
                failure = exc
        if failure is not None:
            raise failure.with_traceback(None)  # one place for every failure: hypothesis sees one bug

    _run(ctx, strategy, shrunk, [Phase.reuse, Phase.shrink], _Start(start))


def choices_drawn() -> bytes:
    """The choice sequence of the example a hypothesis run is testing now, as shrink_from takes it."""
    return choices_to_bytes(current_build_context().data.choices)


def _run(ctx: Context, strategy: st.SearchStrategy, test: Callable, phases: list,
         starts: ExampleDatabase | None = None) -> None:
    """One hypothesis run of `test` at grading.yaml's settings, from ctx.hypothesis's seed (validity/domain.py's
    random draws), else from DRAW_SEED: the same examples in every grade."""
    config = settings(max_examples=ctx.hypothesis["max_examples"], database=starts, deadline=None,
                      suppress_health_check=list(HealthCheck), phases=phases, print_blob=False,
                      report_multiple_bugs=False)  # one failure (a CheckFailed), never an ExceptionGroup
    prop = seed(ctx.hypothesis.get("seed", DRAW_SEED))(given(strategy)(test))
    with with_reporter(lambda *_: None), _no_local_constants():
        config(prop)()  # after seed(), which would drop the database


class _Start(ExampleDatabase):
    """One choice sequence as hypothesis's secondary corpus, which its reuse phase runs before shrinking what fails
    (an entry of the primary corpus that fails would be taken as already shrunk, and not shrunk). Read-only."""

    def __init__(self, start: bytes):
        super().__init__()
        self.start = start

    def fetch(self, key: bytes):
        return iter([self.start] if key.endswith(b".secondary") else [])

    def save(self, key: bytes, value: bytes) -> None:
        pass

    def delete(self, key: bytes, value: bytes) -> None:
        pass


@contextmanager
def _no_local_constants():
    """Hypothesis mixes literals found in every imported local module into its draws, so the examples
    would depend on which modules happen to be imported (the mistake bank is, after a first failure's
    diagnosis): a check could pass or fail depending on the checks before it. Draw without them."""
    original = getattr(providers, "_get_local_constants", None)
    if original is None:  # a hypothesis without local constants
        yield
        return
    providers._get_local_constants = lambda: providers.Constants()
    providers.CONSTANTS_CACHE.cache.clear()
    try:
        yield
    finally:
        providers._get_local_constants = original
        providers.CONSTANTS_CACHE.cache.clear()
