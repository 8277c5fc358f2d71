"""The judge's handle on a submission: call its functions in the sandboxed child, get plain data back.

    sub = RemoteSubmission(path, limits)
    value, grads = sub.call("function", x, mask, gamma=0.9)
    parts = sub.parts()                # the seven functions as callables for the training code
    for value, grads in answers([(parts["f"], parts["f"].prepared(x, mask)), ...]): ...   # a batch (a replay's)

A failure of the submission (an exception, a timeout, a crash, a wrong type or shape) raises
SubmissionError: `str()` is the grader's own sentence (textsafe WORDS at most), `detail` what the child
produced (its exception's line and message, its exit code and last output line, the exact shape it sent),
cleaned: shown only with the inputs. A function whose call killed the child stays
failed with that sentence for the rest of the grade (so a hang costs its own tests once, not every
example of them), and the child is restarted for the other functions.

The contract's functions are pure, and both halves are checked: the child compares every tensor argument
after the call with a copy taken before it (an in-place write, through a view or `.data` too, is
"mutated": that call fails), and the judge asks a sample of calls twice (`reasked`: the 1st, 4th, 16th, ...
answer of each test) and fails the function for the rest of the test when the two answers differ bit for
bit where they matter ("inconsistent"; per-token outputs are compared where `mask` is 1 only).

Taint follows the child, not the call: a child may keep any input it received and say it later, in any answer
or text. So each call is sent at a release (`sending`: when students may see its input; the grade sets it per
test), the live child remembers the latest release of all it has received, and `heard` is the latest such release
of every child the judge heard from since `begin_test`: a test's finding is shown no earlier (outcome.Finding
.child_saw). A new child (a restart) has received nothing.

A batch (`answers`: calls none of which takes another's answer, as a replay sends them) goes in one request; the
child sends one answer per call as it computes it, stopping after its first failed one, and the judge reads,
limits (each call its own CPU limit, counted from the previous answer) and checks each as a single call's, asking
again the same calls `call` would. A caller that stops early (a replay at an answer unlike the reference's) has
the rest read and dropped: the child has received nothing `call` would not have sent it, in the same order, up
to that point, and past it at most one batch of the calls that came next, at the same release.

Nothing the child sends is trusted: every reply is plain data (autograder/sandbox/child/wire.py), gradients
must have exactly their argument's shape and dtype, and a RemoteFunction's result exactly the shape
and dtype the contract gives for its inputs (SHAPES), checked before the training code touches it.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Generator, Sequence
from contextlib import closing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch

from autograder.lab import config
from autograder.lab.config import Limits, least_visible
from autograder.sandbox import textsafe
from autograder.sandbox.budget import Budget
from autograder.sandbox.child import wire
from autograder.sandbox.sandbox import DETAIL_CHARS, Child, ChildFailure, SandboxError, started

TYPE_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,39}")
REASK_EVERY = 4  # the n-th answer of a test is asked again when n is a power of this (1, 4, 16, 64, ...)
BATCH_ASKS = 64  # requests in one batch (`answers`; a call asked again counts twice)
BATCH_BYTES = 8 << 20  # bytes of tensors in one batch's request (the wire allows 64 MiB)
BATCH_TENSORS = wire.MAX_TENSORS // 2  # tensors in one batch's request


class SubmissionError(Exception):
    """The submission failed to give an answer. `str()` is the grader's sentence; `kind` a label.

    `detail` is what the child itself said or sent (its exception's line and message, its exit code and
    last output line), cleaned, "" when none. It may carry the test's input: show it only where that
    input may be shown. `exc_type` is the name of the exception the child reported (a plain identifier,
    or None): data for comparisons, named in text only through textsafe.exception_words.
    `private_inputs`: raised again for a later call (a function that stays failed) or by a child restarted
    after calls, so `detail` may come from another test's input (outcome.Finding.private_inputs).
    """

    def __init__(self, message: str, kind: str = "error", exc_type: str | None = None, detail: str = "",
                 private_inputs: bool = False, child_saw: str = "visible"):
        super().__init__(message)
        self.kind = kind
        self.exc_type = exc_type
        self.detail = textsafe.clean(detail, DETAIL_CHARS)
        self.private_inputs = private_inputs
        self.child_saw = child_saw  # the latest release of any input its child had received (RemoteSubmission.heard)

    def again(self) -> "SubmissionError":
        """The same failure raised for another call: its text came from an earlier input."""
        return SubmissionError(str(self), self.kind, self.exc_type, self.detail, private_inputs=True,
                               child_saw=self.child_saw)


# Failures after which the function stays failed (every later call of it in the grade, or in the test for
# "inconsistent", raises the same failure `again()`, without asking the child): RemoteSubmission's `_broken` and
# `_inconsistent`.
FAILED_FOR_GOOD = ("missing", "not_implemented", "died", "inconsistent")


def parameter_names(fn: str) -> tuple[str, ...]:
    """The contract function's parameters, in order (grading.yaml `contract`); () for any other name."""
    spec = config.current().contract.get(fn)
    return spec.parameters if spec is not None else ()


def mutation_error(fn: str, argument: object, positions: int, keywords: dict) -> SubmissionError:
    """The grader's sentence for a call (of `positions` positional arguments and `keywords`) that wrote into its
    argument (a position, or a keyword: what the child said, named through textsafe.argument_words)."""
    name = textsafe.argument_words(argument, parameter_names(fn), positions, keywords)
    return SubmissionError(f"{fn} modified its argument {name} in place: the contract asks that a function never "
                           "write into its inputs (the caller's tensors would change; work on a copy: x = x - y, "
                           "not x -= y)", "mutated")


def inconsistency_error(fn: str) -> SubmissionError:
    return SubmissionError(f"{fn} gave two different answers to the same input (the grader asked it twice): the "
                           "contract asks for the same answer to the same input every time (no randomness, no state "
                           "kept between calls)", "inconsistent")


def reasked(n: int) -> bool:
    """Whether the n-th answer (1-based) of a test is asked again: 1, 4, 16, 64, ... (a few percent of the calls)."""
    while n % REASK_EVERY == 0:
        n //= REASK_EVERY
    return n == 1


def same_answer(fn: str, first: tuple, second: tuple, args: tuple, kwargs: dict) -> bool:
    """Two (value, grads) answers to one call are equal bit for bit where they matter: a per-token output
    where the call's `mask` is 1 (padding may hold anything), everything else whole."""
    spec = config.current().contract.get(fn)
    where = spec.mask_index if spec is not None else None
    mask = None
    if spec is not None and where is not None:
        mask = kwargs.get(spec.mask, args[where] if where < len(args) else None)
    return _same(first[0], second[0], mask) and _same(first[1], second[1], None)


def _same(a, b, mask) -> bool:
    if isinstance(a, (list, tuple)) or isinstance(b, (list, tuple)):
        return (isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)) and len(a) == len(b)
                and all(_same(x, y, mask) for x, y in zip(a, b)))
    if not isinstance(a, torch.Tensor) or not isinstance(b, torch.Tensor):
        return a == b
    if isinstance(mask, torch.Tensor) and a.shape == b.shape == mask.shape:
        keep = mask.bool()
        a, b = torch.where(keep, a, 0), torch.where(keep, b, 0)
    return equal_bits(a, b)


def equal_bits(a: torch.Tensor, b: torch.Tensor) -> bool:
    """Same shape, dtype and bits (a nan equals the same nan; -0.0 differs from 0.0)."""
    ints = {torch.float32: torch.int32, torch.float64: torch.int64}

    def bits(t: torch.Tensor) -> torch.Tensor:
        return t.contiguous().view(ints[t.dtype]) if t.dtype in ints else t
    return a.shape == b.shape and a.dtype == b.dtype and torch.equal(bits(a), bits(b))


@dataclass(frozen=True)
class Ask:
    """One ask of a contract function, as `RemoteSubmission.call` takes it (for `RemoteSubmission.answers`); a check's
    declared call with what validates its answer is checks.tools.Call."""

    fn: str
    args: tuple
    kwargs: dict = field(default_factory=dict)
    grad: tuple[int, ...] = ()
    cotangent: torch.Tensor | None = None

    def request(self) -> dict:
        """The request the child answers (child/worker.py)."""
        request = {"op": "call", "fn": self.fn, "args": list(self.args), "kwargs": self.kwargs, "grad": list(self.grad)}
        if self.cotangent is not None:
            request["cotangent"] = self.cotangent
        return request

    def size(self) -> tuple[int, int]:
        """(tensors, bytes of tensors) the request sends."""
        tensors = [t for t in (*self.args, *self.kwargs.values(), self.cotangent) if isinstance(t, torch.Tensor)]
        return len(tensors), sum(t.numel() * t.element_size() for t in tensors)


class RemoteSubmission:
    def __init__(self, path: Path, limits: Limits, budget: Budget | None = None, name: str = "",
                 cells: tuple | None = None):
        """`budget` is the grade's (autograder/sandbox/budget.py): once spent, later calls fail and running ones are cut
        short; the live child's CPU counts in it. `name`: the file the student wrote (a notebook's, whose converted
        `path` they do not have; default: path's name); `cells`: a notebook's line map (discovery.Submission.cells),
        so the child's line numbers are told as code cell and line."""
        self.path, self.limits, self.budget = Path(path), limits, budget
        self.name, self.cells = name or Path(path).name, cells
        self._child: Child | None = None
        self._import_error: SubmissionError | SandboxError | None = None
        self._broken: dict[str, SubmissionError] = {}
        self._inconsistent: dict[str, SubmissionError] = {}  # functions that answered one input two ways, this test
        self._answers = 0  # answers given in the current test (the sample asked twice: `reasked`)
        self.calls = 0
        self.sending = "visible"  # the release of the inputs calls send now (the grade sets it for each test)
        self._seen = "visible"    # the latest release of any input the live child has received
        self.heard = "visible"    # the latest `_seen` of any child the judge heard from since begin_test
        self.memo: dict = {}  # results the judge derived from this submission (e.g. PPO runs), per grade
        if budget is not None:
            budget.watch(self._child_cpu)  # a reaped child's CPU counts among the judge's reaped children

    # ------------------------------------------------------------ child lifecycle
    def _ensure_child(self) -> Child:
        if self._import_error is not None:
            raise self._import_error
        if self._child is None:
            restarted = self.calls > 0  # a child after calls: what it says may echo an earlier input
            try:
                child = started(self.path, self.limits)
            except SandboxError as exc:  # the grader's machine: fail every later call at once, no retries
                self._import_error = exc
                raise
            except ChildFailure as exc:
                self._import_error = SubmissionError(f"{self.name} could not be imported: {exc}", "import",
                                                     detail=exc.detail, private_inputs=restarted)
                raise self._import_error from None
            if not child.hello.get("ok"):
                err = _error_of(child.hello)
                child.kill()
                self._import_error = SubmissionError(
                    f"{self.name} could not be imported: {_raised(err)}",
                    "import", err.get("type"), textsafe.said(err.get("message"), err.get("line"), self.cells),
                    private_inputs=restarted)
                raise self._import_error
            self._child, self._seen = child, "visible"  # a new child has received no input
        return self._child

    def _child_cpu(self) -> float:
        """CPU seconds of the live child (0 when none runs): what the grade's budget counts of it."""
        return self._child.cpu_seconds() if self._child is not None else 0.0

    def output(self) -> str:
        """What the submission printed so far in the current child (capped)."""
        return self._child.output.text() if self._child is not None else ""

    def close(self) -> None:
        if self._child is not None:
            self._child.kill()
            self._child = None

    def begin_test(self, sending: str = "visible") -> None:
        """A new test starts, whose calls send inputs released at `sending`: the sample of answers asked twice, what
        was found inconsistent and what the judge has `heard` start afresh."""
        self._answers = 0
        self._inconsistent.clear()
        self.sending, self.heard = sending, "visible"

    # ------------------------------------------------------------ calls
    def call(self, fn: str, *args, grad: tuple[int, ...] = (), timeout: float | None = None,
             valid: bool = True, cotangent: torch.Tensor | None = None, **kwargs):
        """Run `fn(*args, **kwargs)` in the child. Returns (value, grads) as judge-side data.

        value is a tensor, a list of values (a tuple was returned) or {"__object__": type name};
        grads[k] is d(value)/d(args[grad[k]]) as a tensor of exactly args[grad[k]]'s shape and dtype,
        or None when no gradient reached it; with a `cotangent` (a tensor of the value's shape), grads[k] is
        d(cotangent . value)/d(args[grad[k]]) (a vector-Jacobian product, for a value of more than one element).
        `valid=False`: the inputs are ones the contract rejects
        (e.g. an unknown `kind`), so a NotImplementedError is an ordinary raised error there, not
        "not written yet" (only a valid input can show that a function is unwritten).
        """
        self._refuse_failed(fn)
        timeout, wall = self._allowance(timeout)
        child = self._ensure_child()
        self.calls += 1
        request = Ask(fn, args, kwargs, grad, cotangent).request()
        answer = self._answer(child, request, fn, args, kwargs, grad, timeout, wall, valid)
        self._answers += 1
        if reasked(self._answers):
            self._same_again(fn, answer, args, kwargs,
                             lambda: self._answer(child, request, fn, args, kwargs, grad, timeout, wall, valid))
        return answer

    def _same_again(self, fn: str, answer: tuple, args: tuple, kwargs: dict, ask_again: Callable[[], tuple]) -> None:
        """A re-ask (`reasked`): `ask_again` must give the same answer, or `fn` is inconsistent for the rest of the
        test (an exception the second time is a different answer; a child that died is that failure)."""
        try:
            again = ask_again()
        except SubmissionError as exc:
            if exc.kind == "died":
                raise
            again = None  # an answer, then an exception: two different answers
        if again is None or not same_answer(fn, answer, again, args, kwargs):
            self._inconsistent[fn] = inconsistency_error(fn)
            raise self._inconsistent[fn]

    def answers(self, calls: Sequence["Ask"]) -> Generator[tuple, None, None]:
        """The answers to `calls` in order, each exactly as `call` gives it ((value, grads), checked as `call` checks
        it, asked again where `call` would ask it again, `valid` inputs): the first that fails raises what `call`
        would raise and ends them. They go to the child in batches, one request each (at most BATCH_ASKS requests,
        BATCH_BYTES and BATCH_TENSORS; a batch of one is a `call`), and come back one frame per call as the child
        computes them, each within its own limits (`_allowance`) counted from the previous answer.

        Stopping early (closing the iterator, or a failure) reads and drops the answers the child still sends for
        the batch (it runs every call it was sent, up to its first failure, at the same release: `sending`); a child
        that fails meanwhile is stopped (the next call starts another) and fails no function: no call of it was
        asked. A batch asks the child nothing `call` would not ask it, in the same order, up to where the caller
        stops; past it, at most one batch of calls the caller would have asked next."""
        done = 0
        while done < len(calls):
            self._refuse_failed(calls[done].fn)
            fitting = self._fitting(calls[done:])
            if fitting == 1:
                one = calls[done]
                yield self.call(one.fn, *one.args, grad=one.grad, cotangent=one.cotangent, **one.kwargs)
            else:
                yield from self._batch(calls[done:done + fitting])
            done += fitting

    def _fitting(self, calls: Sequence["Ask"]) -> int:
        """How many of `calls` (at least one, none of a failed function) one batch takes."""
        asks = tensors = size = 0
        for k, one in enumerate(calls):
            if one.fn in self._broken or one.fn in self._inconsistent:
                return max(k, 1)
            times = 2 if reasked(self._answers + k + 1) else 1
            count, nbytes = one.size()
            asks, tensors, size = asks + times, tensors + times * count, size + times * nbytes
            if asks > BATCH_ASKS or tensors > BATCH_TENSORS or size > BATCH_BYTES:
                return max(k, 1)
        return len(calls)

    def _batch(self, calls: Sequence["Ask"]) -> Generator[tuple, None, None]:
        """`answers` of calls that fit one batch, every one of a function that has not failed."""
        timeout, wall = self._allowance()
        child = self._ensure_child()
        first = self._answers
        times = [2 if reasked(first + k + 1) else 1 for k in range(len(calls))]
        requests = [one.request() for one, n in zip(calls, times) for _ in range(n)]
        self.calls += len(calls)
        self._seen = least_visible(self._seen, self.sending)
        self._replied(calls[0].fn, lambda: child.send({"op": "batch", "calls": requests}, f"{calls[0].fn}()", wall))
        pending = [len(requests)]  # answers the child still sends (none after its first failed one)

        def next_answer(one: Ask, timeout: float, wall: float) -> tuple:
            try:
                reply = self._replied(one.fn, lambda: child.answer(timeout, f"{one.fn}()", wall))
            except SubmissionError:
                pending[0] = 0  # the child is gone
                raise
            pending[0] = pending[0] - 1 if reply.get("ok") is True else 0
            return self._checked(reply, one.fn, one.args, one.kwargs, one.grad, True)
        try:
            for one, n in zip(calls, times):
                timeout, wall = self._allowance()
                answer = next_answer(one, timeout, wall)
                self._answers += 1
                if n == 2:
                    self._same_again(one.fn, answer, one.args, one.kwargs,
                                     functools.partial(next_answer, one, timeout, wall))
                yield answer
        finally:
            self._drain(child, pending[0])

    def _drain(self, child: Child, pending: int) -> None:
        """Read and drop the `pending` answers of a batch no longer read; stop the child if they fail to come (or
        the grade's budget is spent): the next call starts another."""
        try:
            while pending > 0 and self._child is child:
                timeout, wall = self._allowance()
                pending = pending - 1 if child.answer(timeout, "a call", wall).get("ok") is True else 0
        except (ChildFailure, SubmissionError):
            child.kill()
            self._child = None

    def _refuse_failed(self, fn: str) -> None:
        """Raise again the failure of a function that stays failed (broken, or inconsistent in this test)."""
        for failed in (self._broken, self._inconsistent):
            if fn in failed:
                self.heard = least_visible(self.heard, failed[fn].child_saw)
                raise failed[fn].again()

    def _allowance(self, timeout: float | None = None) -> tuple[float, float]:
        """(CPU seconds, wall seconds) a call may take now: its limit, within what is left of the grade's budget."""
        timeout = timeout or self.limits.call_seconds
        wall = timeout * self.limits.wall_per_cpu
        if self.budget is not None:
            left = self.budget.left()
            if left <= 0:
                raise SubmissionError(f"not run: {self.budget.reason()}", "died")
            timeout, wall = min(timeout, left), min(wall, self.budget.wall_left())
        return timeout, wall

    def _answer(self, child: Child, request: dict, fn: str, args: tuple, kwargs: dict, grad: tuple[int, ...],
                timeout: float, wall: float, valid: bool) -> tuple:
        """One request and its checked reply: (value, grads), or SubmissionError. `timeout` is CPU seconds."""
        self._seen = least_visible(self._seen, self.sending)
        reply = self._replied(fn, lambda: child.request(request, timeout, what=f"{fn}()", wall=wall))
        return self._checked(reply, fn, args, kwargs, grad, valid)

    def _replied(self, fn: str, exchange: Callable[[], Any]) -> Any:
        """What `exchange` (a talk with the child about a call of `fn`) returns; a child that failed makes `fn` fail
        for good."""
        try:
            return exchange()
        except ChildFailure as exc:
            self._child = None
            self._broken[fn] = SubmissionError(str(exc)[0].upper() + str(exc)[1:], "died", detail=exc.detail,
                                               child_saw=self._seen)
            raise self._broken[fn] from None
        finally:
            self.heard = least_visible(self.heard, self._seen)

    def _checked(self, reply: dict, fn: str, args: tuple, kwargs: dict, grad: tuple[int, ...], valid: bool) -> tuple:
        """A reply to a call checked: (value, grads), or the SubmissionError it tells of."""
        if type(reply.get("ok")) is not bool:
            raise SubmissionError(f"{fn}: the child sent a malformed answer", "protocol")
        if not reply.get("ok"):
            err = _error_of(reply, len(args), kwargs)
            if err.get("kind") == "mutated":
                raise mutation_error(fn, err["argument"], len(args), kwargs)
            kind = "missing" if err.get("kind") == "missing" else "raised"
            if err.get("type") == "NotImplementedError" and valid and err.get("kind") == "raised":
                kind = "not_implemented"
            raised = _raised(err)
            sentence = f"{self.name} does not define {fn}" if kind == "missing" else f"{fn} {raised}"
            if err.get("kind") == "unsendable":  # the answer, not the function, failed: e.g. a sparse tensor
                sentence = f"{fn} returned a value the grader cannot read back (sending it {raised})"
            said = textsafe.said(err.get("message"), err.get("line"), self.cells) if kind == "raised" else ""
            error = SubmissionError(sentence, kind, err.get("type"), said, child_saw=self._seen)
            if kind in ("missing", "not_implemented"):  # no other input will change that answer
                self._broken[fn] = error
            raise error
        grads = reply.get("grads") or []
        if not isinstance(grads, list) or len(grads) != len(grad):
            raise SubmissionError(f"{fn}: the child sent a malformed answer", "protocol")
        sizes = [a.shape for a in args if isinstance(a, torch.Tensor)]
        for i, g in zip(grad, grads):
            if g is not None and (not isinstance(g, torch.Tensor) or g.shape != args[i].shape
                                  or g.dtype != args[i].dtype):
                raise SubmissionError(f"{fn}: the gradient for argument {i + 1} is not a tensor of its argument's "
                                      f"shape and dtype ({textsafe.compared(args[i], g, *sizes)})", "shape",
                                      detail=textsafe.shape_text(g.shape) if isinstance(g, torch.Tensor) else "")
        return reply.get("result"), grads

    def parts(self, names: tuple[str, ...] | None = None) -> dict[str, "RemoteFunction"]:
        """The contract functions (all of them by default) as callables for the training code."""
        return {name: RemoteFunction(self, name) for name in (config.current().functions if names is None else names)}


def _error_of(reply: dict, n_args: int = 0, kwargs: dict | None = None) -> dict:
    """The error of a failed reply as {kind, type, message, line, argument}: a plain identifier for the type, a str
    message, an int line, and for "mutated" the position (< n_args) or keyword (one of `kwargs`) of the argument
    the call modified (the child may send anything). Text is made of them only through textsafe (_raised, said)."""
    err = reply.get("error")
    err = err if isinstance(err, dict) else {}
    clean: dict = {"kind": err["kind"] if err.get("kind") in ("missing", "unsendable") else "raised"}
    argument = err.get("argument")
    if err.get("kind") == "mutated" and ((type(argument) is int and 0 <= argument < n_args)
                                         or (type(argument) is str and argument in (kwargs or {}))):
        return {"kind": "mutated", "argument": argument}
    name = err.get("type")
    if isinstance(name, str) and TYPE_NAME.fullmatch(name):
        clean["type"] = name
    elif name is not None:
        clean["odd_type"] = True  # a class name that is no plain identifier: not repeated
    if isinstance(err.get("message"), str):
        clean["message"] = textsafe.clean(err["message"], DETAIL_CHARS)
    if type(err.get("line")) is int and 0 < err["line"] < 10 ** 7:
        clean["line"] = err["line"]
    return clean


def _raised(err: dict) -> str:
    """ "raised ValueError", "raised an exception of its own class"... (textsafe.raised_words) for an _error_of."""
    return textsafe.raised_words(err.get("type") or ("?" if err.get("odd_type") else None), err.get("message"))


class RemoteFunction:
    """A contract function of the submission, usable by the training code like a local one.

    Tensors that require grad are sent with a gradient request; the reply's gradients are attached
    to a local surrogate  value + sum(grad * (x - x.detach()))  whose backward gives exactly them. A value of
    more than one element (e.g. one per row) asks for its gradients when the backward pass reaches it: the
    child computes the vector-Jacobian product for the incoming gradient (`call(..., cotangent=)`).
    A recording of the reference's runs (autograder/replay/record.py) wraps an instance's `answer`.
    """

    def __init__(self, submission: RemoteSubmission, name: str):
        self.submission, self.name = submission, name

    def answer(self, *args, cotangent: torch.Tensor | None = None, **kwargs) -> tuple:
        """(value, grads) of a call, checked against the contract: grads[k] is d(value)/d(the k-th
        argument that requires grad) (d(cotangent . value) with a cotangent), a tensor of its shape. Arguments
        go detached."""
        return self.asked(self.prepared(*args, cotangent=cotangent, **kwargs))

    def asked(self, call: Ask) -> tuple:
        """`answer` of a `prepared` call."""
        extra: dict[str, Any] = {} if call.cotangent is None else {"cotangent": call.cotangent}  # a stand-in's call
        value, grads = self.submission.call(self.name, *call.args, grad=call.grad, **extra, **call.kwargs)
        return self.checked(call, value, grads)

    def prepared(self, *args, cotangent: torch.Tensor | None = None, **kwargs) -> Ask:
        """The call `answer` makes: arguments detached, a gradient asked for each that requires grad."""
        grad = tuple(i for i, a in enumerate(args) if _needs_grad(a))
        return Ask(self.name, tuple(_plain(a) for a in args), kwargs, grad, cotangent)

    def checked(self, call: Ask, value, grads: list) -> tuple:
        """`answer`'s checks of the answer (value, grads) to `call`, against the contract: (value, grads)."""
        plain = call.args
        tensors = [a for a in plain if isinstance(a, torch.Tensor)]
        value = _expect_tensors(self.name, value, config.current().contract[self.name].shapes(tuple(plain)),
                                tensors[0].dtype,
                                [t.shape for t in tensors])
        if any(g is None for g in grads):
            raise SubmissionError(f"{self.name} returned a loss that is not differentiable in its inputs "
                                  "(was an input detached?)", "no_grad")
        return value, grads

    def __call__(self, *args, **kwargs):
        grad = [a for a in args if _needs_grad(a)]
        shape = config.current().contract[self.name].shapes(tuple(args))
        if grad and shape != () and all(isinstance(n, int) for n in shape):  # one tensor of more than a scalar
            value, _ = self.answer(*[_plain(a) for a in args], **kwargs)
            return _VectorJacobian.apply(self, args, kwargs, value, *grad)
        value, grads = self.answer(*args, **kwargs)
        surrogate = value  # a tensor of its own, no grad (wire.py built it): the sums below make a new one
        for a, g in zip(grad, grads):  # answer() checked that g has exactly a's shape and dtype
            surrogate = surrogate + (g * (a - a.detach())).sum()
        return surrogate


def answers(asked: Sequence[tuple[RemoteFunction, Ask]]) -> Generator[tuple, None, None]:
    """`RemoteFunction.answer` of each (function, its `prepared` call) in order, up to the first that raises: in
    batches (`RemoteSubmission.answers`) when every function is one RemoteSubmission's, else one by one."""
    submissions = {id(function.submission) for function, _ in asked}
    submission = asked[0][0].submission if asked else None
    if len(submissions) == 1 and isinstance(submission, RemoteSubmission):
        with closing(submission.answers([call for _, call in asked])) as replies:  # closed here: drained now
            for (function, call), (value, grads) in zip(asked, replies):
                yield function.checked(call, value, grads)
        return
    for function, call in asked:
        yield function.asked(call)


class _VectorJacobian(torch.autograd.Function):
    """A remote value of more than one element: its backward asks the child for d(cotangent . value)/d(inputs)."""

    @staticmethod
    def forward(ctx, remote: RemoteFunction, args: tuple, kwargs: dict, value: torch.Tensor,  # type: ignore[override]
                *inputs: torch.Tensor) -> torch.Tensor:
        ctx.remote, ctx.args, ctx.kwargs = remote, args, kwargs
        return value.clone()

    @staticmethod
    def backward(ctx, cotangent: torch.Tensor):  # type: ignore[override]
        _, grads = ctx.remote.answer(*ctx.args, cotangent=cotangent.detach(), **ctx.kwargs)
        return (None, None, None, None, *grads)


def _plain(x):
    return x.detach() if isinstance(x, torch.Tensor) else x


def _needs_grad(x) -> bool:
    """An argument whose gradient the call asks for (and the surrogate attaches)."""
    return isinstance(x, torch.Tensor) and x.requires_grad


def _expect_tensors(fn: str, value, shape, dtype: torch.dtype, sizes: tuple | list = ()):
    """Check a returned value against the contract: a tensor of exactly `shape` (a tuple of shapes: a
    tuple of that many tensors) and `dtype`; a scalar must be finite. Raises SubmissionError ("type",
    "shape", "nonfinite"). Non-scalar outputs may hold anything at padded positions; training masks those.
    `sizes`: the input tensors' shapes (what textsafe.shape_words may name).
    """
    if shape and isinstance(shape[0], tuple):
        if not isinstance(value, list) or len(value) != len(shape):
            raise SubmissionError(f"{fn} should return a tuple of {len(shape)} tensors", "type")
        return tuple(_expect_tensors(fn, v, s, dtype, sizes) for v, s in zip(value, shape))
    if not isinstance(value, torch.Tensor):
        raise SubmissionError(f"{fn} returned {textsafe.object_words(value)}, not a tensor", "type")
    if tuple(value.shape) != tuple(shape):
        raise SubmissionError(f"{fn} returned {textsafe.shape_words(value.shape, shape, *sizes)}, expected shape "
                              f"{tuple(shape)}", "shape", detail=textsafe.shape_text(value.shape))
    if value.dtype != dtype:
        raise SubmissionError(f"{fn} returned {textsafe.dtype_words(value.dtype)} for "
                              f"{textsafe.dtype_words(dtype)} inputs (return the input dtype)", "type")
    if value.dim() == 0 and not torch.isfinite(value):
        raise SubmissionError(f"{fn} returned a non-finite value", "nonfinite", detail=textsafe.fmt(value))
    return value
