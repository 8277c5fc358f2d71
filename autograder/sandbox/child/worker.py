"""The child process: imports one submission and answers the judge's calls, nothing else.

Runs inside the sandbox with only this folder, the given world and the submission visible:
    python -I worker.py SUBMISSION_FILE WORLD_DIR IN_FD OUT_FD
It first reads the judge's set-up and confines itself before any submission code runs (confine.py:
own uid, rlimits, Landlock, seccomp)
      -> {"ready": True}, or {"ok": False, "error": {"kind": "sandbox", ...}} when it could not
then answers {"ok": bool, ...} for the import, then serves requests until the channel closes:
    {"op": "call", "fn": NAME, "args": [...], "kwargs": {...}, "grad": [arg indices], "cotangent": tensor (optional)}
      -> {"ok": True, "result": VALUE, "grads": [tensor or None, ...]}
      -> {"ok": False, "error": {"type", "message", "line", "kind"}}
      -> {"ok": False, "error": {"kind": "mutated", "argument": position or keyword}}  (the call wrote into it)
    {"op": "batch", "calls": [call, ...]}  (a replay's calls: autograder/sandbox/remote.py RemoteSubmission.answers)
      -> one answer per call, in order, each sent as soon as it is computed, up to and including the first
         that is not {"ok": True, ...}: the calls after a failed one are not run
VALUE is a tensor, a list of values (for tuples), or {"__object__": type name} for anything else.
The judge trusts none of it: it checks every type, shape and number it receives.
"""

from __future__ import annotations

import importlib.util
import os
import sys
import traceback

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # `python -I` leaves the script's folder out
import confine  # noqa: E402
import wire  # noqa: E402

torch.set_num_threads(1)
torch.set_num_interop_threads(1)


def import_submission(path: str):
    name = os.path.splitext(os.path.basename(path))[0]  # as students import it (grading.yaml `submission`)
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None  # a .py path always has a source loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def error_reply(exc: BaseException, path: str) -> dict:
    """Describe an exception raised by submission code: type, message, and the line in the submission."""
    line = None
    for frame in traceback.extract_tb(exc.__traceback__):
        if os.path.abspath(frame.filename) == path:
            line = frame.lineno
    try:  # a submission's exception class may define __str__ (and make it fail)
        message = str(exc)[:500]
        if isinstance(exc, SyntaxError) and exc.filename and os.path.abspath(exc.filename) == path:
            line, message = exc.lineno, str(exc.msg)[:500]  # the line apart, not "expected ':' (its file, line 61)"
    except BaseException:  # noqa: BLE001
        message = "(its message could not be read)"
    return {"ok": False, "error": {"kind": "raised", "type": str(type(exc).__name__)[:100],
                                   "message": message, "line": line}}


def tag(value):
    """A submission's return value as wire data (tensors kept as tensors, anything else named)."""
    if isinstance(value, torch.Tensor):
        with torch._C.DisableTorchFunctionSubclass():
            return torch.Tensor.as_subclass(value, torch.Tensor).detach().clone()
    if isinstance(value, (tuple, list)) and len(value) <= 16:
        return [tag(v) for v in value]
    return {"__object__": type(value).__name__}


def call(module, request: dict) -> dict:
    fn = getattr(module, request["fn"], None)
    if not callable(fn):
        return {"ok": False, "error": {"kind": "missing", "type": "AttributeError",
                                       "message": f"the submission does not define {request['fn']}", "line": None}}
    args = list(request["args"])
    kwargs = dict(request.get("kwargs", {}))
    grad = request.get("grad", [])
    for i in grad:
        args[i] = args[i].clone().requires_grad_(True)
    before = copies(args, kwargs)
    result = fn(*args, **kwargs)
    grads = []
    cotangent = request.get("cotangent")
    if grad:
        if isinstance(result, torch.Tensor) and result.requires_grad and isinstance(cotangent, torch.Tensor) \
                and cotangent.shape == result.shape:
            result.backward(cotangent.to(result.dtype))  # the vector-Jacobian product: d(cotangent . result)
            grads = [args[i].grad for i in grad]
        elif isinstance(result, torch.Tensor) and result.requires_grad and result.numel() == 1:
            result.backward()  # one element: the same gradient as result.sum().backward()
            grads = [args[i].grad for i in grad]
        else:
            grads = [None for _ in grad]
    changed = modified(before, args, kwargs)
    if changed is not None:
        return {"ok": False, "error": {"kind": "mutated", "argument": changed}}
    return {"ok": True, "result": result, "grads": grads}


def copies(args: list, kwargs: dict) -> dict:
    """A copy of every tensor argument (position or keyword -> tensor), taken before the call."""
    named = {**dict(enumerate(args)), **kwargs}
    return {key: t.detach().clone() for key, t in named.items() if isinstance(t, torch.Tensor)}


def modified(before: dict, args: list, kwargs: dict):
    """The first argument the call wrote into (an in-place write, also through a view or .data), or None."""
    named = {**dict(enumerate(args)), **kwargs}
    for key, old in before.items():
        now = named[key].detach()
        if now.shape != old.shape or now.dtype != old.dtype or not torch.equal(bits(now), bits(old)):
            return key
    return None


def bits(t: torch.Tensor) -> torch.Tensor:
    """A float tensor's bit patterns (a nan written in place differs from the number that was there)."""
    ints = {torch.float32: torch.int32, torch.float64: torch.int64}
    return t.contiguous().view(ints[t.dtype]) if t.dtype in ints else t


def answer(module, request: dict, path: str) -> dict:
    """The reply to one call: its answer, or the exception it raised."""
    try:
        return call(module, request)
    except BaseException as exc:  # noqa: BLE001
        return error_reply(exc, path)


def send_reply(out_fd: int, reply: dict, path: str) -> bool:
    """Send a reply; a result that cannot be made wire data (a sparse tensor, a subclass that raises) is
    answered as "unsendable": the answer failed, not the function. True when an answer went ("ok": True)."""
    try:
        if reply.get("ok"):
            reply = {**reply, "result": tag(reply["result"])}
        frame = wire.encode(reply)
    except Exception as exc:  # noqa: BLE001 - whatever the submission's object raised
        failed = error_reply(exc, path)
        failed["error"]["kind"] = "unsendable"
        reply, frame = failed, wire.encode(failed)
    wire.write_bytes(out_fd, frame)
    return reply.get("ok") is True


def main() -> None:
    path, world, in_fd, out_fd = os.path.abspath(sys.argv[1]), sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    if not confine.start(in_fd, out_fd):
        return
    sys.path[:0] = [world, os.path.dirname(path)]
    try:
        module = import_submission(path)
        wire.write_frame(out_fd, {"ok": True})
    except BaseException as exc:  # noqa: BLE001 - any failure of the submission is reported, not raised
        wire.write_frame(out_fd, error_reply(exc, path))
        return
    requests = wire.FrameReader(in_fd)
    while True:
        try:
            request = requests.read()
        except EOFError:
            return
        if request.get("op") == "batch":
            for one in request["calls"]:
                if not send_reply(out_fd, answer(module, one, path), path):
                    break
        else:
            send_reply(out_fd, answer(module, request, path), path)


if __name__ == "__main__":
    main()
