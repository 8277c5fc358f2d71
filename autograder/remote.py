"""The judge's handle on a submission: call its functions in the sandboxed child, get plain data back.

    sub = RemoteSubmission(path, limits)
    value, grads = sub.call("compute_gae", rewards, values, mask, gamma=0.9)
    parts = sub.parts()                # the seven functions as callables for the training code

A failure of the submission (an exception, a timeout, a crash, a wrong type) raises SubmissionError
with one plain sentence. A function whose call killed the child stays failed with that sentence
for the rest of the grade (so a hang costs its own tests once, not every example of them), and the
child is restarted for the other functions.
"""

from __future__ import annotations

import time
from pathlib import Path

import torch

from autograder.sandbox import Child, ChildFailure, Limits, SandboxError

CONTRACT = ("bradley_terry_loss", "ranking_loss", "compute_gae", "ppo_policy_loss",
            "ppo_value_loss", "kl_estimate", "shaped_rewards")


class SubmissionError(Exception):
    """The submission failed to give an answer. `str()` is a sentence for the student; `kind` a label."""

    def __init__(self, message: str, kind: str = "error", exc_type: str | None = None):
        super().__init__(message)
        self.kind = kind
        self.exc_type = exc_type


class RemoteSubmission:
    def __init__(self, path: Path, limits: Limits, deadline: float | None = None):
        """`deadline` (time.monotonic()) ends the grade: later calls fail, running ones are cut short."""
        self.path, self.limits, self.deadline = Path(path), limits, deadline
        self._child: Child | None = None
        self._import_error: SubmissionError | SandboxError | None = None
        self._broken: dict[str, SubmissionError] = {}
        self.calls = 0
        self.memo: dict = {}  # results the judge derived from this submission (e.g. PPO runs), per grade

    # ------------------------------------------------------------ child lifecycle
    def _ensure_child(self) -> Child:
        if self._import_error is not None:
            raise self._import_error
        if self._child is None:
            try:
                child = Child(self.path, self.limits)
            except SandboxError as exc:  # the grader's machine: fail every later call at once, no retries
                self._import_error = exc
                raise
            except ChildFailure as exc:
                self._import_error = SubmissionError(f"rlhf.py could not be imported: {exc}", "import")
                raise self._import_error from None
            if not child.hello.get("ok"):
                err = _error_of(child.hello)
                child.kill()
                self._import_error = SubmissionError(
                    f"rlhf.py could not be imported: {_describe_raise(err)}", "import", err.get("type"))
                raise self._import_error
            self._child = child
        return self._child

    def output(self) -> str:
        """What the submission printed so far in the current child (capped)."""
        return self._child.output.text() if self._child is not None else ""

    def close(self) -> None:
        if self._child is not None:
            self._child.kill()
            self._child = None

    # ------------------------------------------------------------ calls
    def call(self, fn: str, *args, grad: tuple[int, ...] = (), timeout: float | None = None, **kwargs):
        """Run `fn(*args, **kwargs)` in the child. Returns (value, grads) as judge-side data.

        value is a tensor, a list of values (a tuple was returned) or {"__object__": type name};
        grads[k] is d(value)/d(args[grad[k]]) as a tensor, or None when no gradient reached it.
        """
        if fn in self._broken:
            raise self._broken[fn]
        timeout = timeout or self.limits.call_seconds
        if self.deadline is not None:
            left = self.deadline - time.monotonic()
            if left <= 0:
                raise SubmissionError("not run: the grade's time limit was reached", "died")
            timeout = min(timeout, left)
        child = self._ensure_child()
        self.calls += 1
        request = {"op": "call", "fn": fn, "args": list(args), "kwargs": kwargs, "grad": list(grad)}
        try:
            reply = child.request(request, timeout, what=f"{fn}()")
        except ChildFailure as exc:
            self._child = None
            self._broken[fn] = SubmissionError(str(exc)[0].upper() + str(exc)[1:], "died")
            raise self._broken[fn] from None
        if not reply.get("ok"):
            err = _error_of(reply)
            kind = "missing" if err.get("kind") == "missing" else "raised"
            if err.get("type") == "NotImplementedError":
                kind = "not_implemented"
            error = SubmissionError(f"{fn} {_describe_raise(err)}", kind, err.get("type"))
            if kind in ("missing", "not_implemented"):  # no other input will change that answer
                self._broken[fn] = error
            raise error
        grads = reply.get("grads") or []
        if not isinstance(grads, list) or len(grads) != len(grad) or not all(
                g is None or isinstance(g, torch.Tensor) and g.numel() == args[i].numel() for i, g in zip(grad, grads)):
            raise SubmissionError(f"{fn}: the child sent a malformed answer", "protocol")
        return reply.get("result"), grads

    def parts(self, names: tuple[str, ...] = CONTRACT) -> dict[str, "RemoteFunction"]:
        return {name: RemoteFunction(self, name) for name in names}


def _error_of(reply: dict) -> dict:
    """The error of a failed reply, with plain short strings only (the child may send anything)."""
    err = reply.get("error")
    err = err if isinstance(err, dict) else {}
    clean = {k: str(err[k])[:500] for k in ("kind", "type", "message") if isinstance(err.get(k), (str, int, float))}
    if isinstance(err.get("line"), int):
        clean["line"] = err["line"]
    if clean.get("type") == "MemoryError" or "can't allocate memory" in clean.get("message", ""):
        clean["message"] = "ran out of memory (" + clean.get("message", "")[:200] + ")"
    return clean


def _describe_raise(err: dict) -> str:
    if err.get("kind") == "missing":
        return str(err.get("message", "is missing"))
    where = f" at line {err['line']}" if err.get("line") else ""
    message = str(err.get("message", ""))
    return f"raised {err.get('type', 'an exception')}{where}" + (f": {message}" if message else "")


class RemoteFunction:
    """A contract function of the submission, usable by the training code like a local one.

    Tensors that require grad are sent with a gradient request; the reply's gradients are attached
    to a local surrogate  value + sum(grad * (x - x.detach()))  whose backward gives exactly them.
    """

    def __init__(self, submission: RemoteSubmission, name: str):
        self.submission, self.name = submission, name

    def __call__(self, *args, **kwargs):
        grad = tuple(i for i, a in enumerate(args) if isinstance(a, torch.Tensor) and a.requires_grad)
        value, grads = self.submission.call(self.name, *[_plain(a) for a in args], grad=grad, **kwargs)
        value = _expect_tensors(self.name, value, like=next(a for a in args if isinstance(a, torch.Tensor)))
        if not grad:
            return value
        if any(g is None for g in grads):
            raise SubmissionError(f"{self.name} returned a loss that is not differentiable in its inputs "
                                  "(was an input detached?)", "no_grad")
        surrogate = value.detach().clone()
        for i, g in zip(grad, grads):
            x = args[i]
            surrogate = surrogate + (g.to(x.dtype).reshape(x.shape) * (x - x.detach())).sum()
        return surrogate


def _plain(x):
    return x.detach() if isinstance(x, torch.Tensor) else x


def _expect_tensors(fn: str, value, like: torch.Tensor):
    """Check a returned value is a tensor (or a tuple of them; a scalar must be finite), in `like`'s dtype.

    Non-scalar outputs may hold anything at padded positions; the training code masks those.
    """
    if isinstance(value, list):
        return tuple(_expect_tensors(fn, v, like) for v in value)
    if not isinstance(value, torch.Tensor):
        name = value.get("__object__", "value") if isinstance(value, dict) else type(value).__name__
        raise SubmissionError(f"{fn} returned a {name}, not a tensor", "type")
    if value.dim() == 0 and value.is_floating_point() and not torch.isfinite(value):
        raise SubmissionError(f"{fn} returned a non-finite value ({value.item()})", "nonfinite")
    return value.to(like.dtype)
