"""Recording the reference's runs: every call a run makes to the functions under test, in a grade of the reference.

    with recording(follow_flow=False) as runs:   # while active, replay.outcome trains and records each run
        e2e.run(...)                              # runs: repr(key) -> (calls, outcome, pace)
    write_reference()                             # both passes below, then grading/data/replays.bin

A recorded call: {"fn", "args" (detached), "grad" (the positions of the arguments that required grad),
"kwargs", "cotangent" (or None), "flow" (its links to earlier answers: autograder/replay/flow.py),
"value", "grads"}. `record_reference` grades the reference's e2e tests twice in one lane: once timed (the
pace: autograder/replay/pace.py), once under the flow's torch function mode, whose bookkeeping would
inflate the timing; the two passes must record the same calls and outcomes bit for bit (the judge's
computation is deterministic), and the file gets the first's pace and the second's links.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Hashable, Iterator
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass, field
from typing import Any

import torch

from autograder import config, e2e, registry
from autograder.paths import LAB, REFERENCE
from autograder.reference import load_reference
from autograder.remote import RemoteFunction, RemoteSubmission

from .flow import Provenance, UndeclaredFlow, pieces
from .pace import GapClock
from .shipped import DATA_FILE, write


@dataclass
class Recording:
    follow_flow: bool  # under the flow's mode (links); else timed (pace)
    runs: dict = field(default_factory=dict)  # repr(key) -> (calls, outcome, pace)


_RECORDING: Recording | None = None


def active() -> Recording | None:
    """The recording under way, if any (replay.outcome then records the run instead of replaying it)."""
    return _RECORDING


@contextmanager
def recording(follow_flow: bool) -> Iterator[dict]:
    """Record the runs `replay.outcome` trains meanwhile (none is replayed): repr(key) -> (calls, outcome, pace)."""
    global _RECORDING
    _RECORDING = Recording(follow_flow)
    try:
        yield _RECORDING.runs
    finally:
        _RECORDING = None


def record(key: Hashable, functions: dict[str, RemoteFunction], train: Callable[[], dict]) -> dict:
    """Train the run `key`, recording every call to `functions` (the reference's, across the boundary)."""
    assert _RECORDING is not None
    facts = registry.lab().replays
    seen = Provenance(facts.passes_on if facts is not None else {}) if _RECORDING.follow_flow else None
    clock = None if seen is not None else GapClock()
    calls: list[dict] = []
    for function in functions.values():
        function.answer = _recorded(function, calls, clock, seen)  # type: ignore[method-assign]
    try:
        with seen if seen is not None else nullcontext():
            result = train()
    finally:
        for function in functions.values():
            del function.answer  # the instance's wrapper: the class's method again
    _RECORDING.runs[repr(key)] = (calls, result, clock.stop() if clock is not None else [])
    return result


def _recorded(function: RemoteFunction, calls: list[dict], clock: GapClock | None, seen: Provenance | None):
    answer, where = function.answer, config.current().contract[function.name].mask_index

    def recorded(*args, cotangent: torch.Tensor | None = None, **kwargs) -> tuple:
        if clock is not None:
            clock.called()
        try:
            flow = seen.links(list(args), cotangent) if seen is not None else []
        except UndeclaredFlow as exc:
            raise UndeclaredFlow(f"call {len(calls)} ({function.name}): {exc}") from None
        if seen is not None:
            seen.paused = True
        try:
            value, grads = answer(*args, cotangent=cotangent, **kwargs)
        finally:
            if seen is not None:
                seen.paused = False
        if clock is not None:
            clock.answered()
        plain = [a.detach() if isinstance(a, torch.Tensor) else a for a in args]
        calls.append({"fn": function.name, "args": plain, "kwargs": kwargs,
                      "grad": [i for i, a in enumerate(args) if isinstance(a, torch.Tensor) and a.requires_grad],
                      "cotangent": cotangent, "flow": flow, "value": value, "grads": grads})
        if seen is not None:
            seen.answered(pieces(value, grads), plain[where] if where is not None else None)
        return value, grads
    return recorded


def _graded_reference(follow_flow: bool) -> dict:
    """Grade the reference's e2e tests in one lane, recording every run routed through replay.outcome."""
    cfg = config.load()
    reference = load_reference()
    sub = RemoteSubmission(REFERENCE, cfg.limits)
    try:
        with recording(follow_flow) as runs:
            for name in cfg.e2e:
                finding = e2e.run(name, cfg, sub, reference)
                if finding.message or finding.kind:
                    raise SystemExit(f"the reference fails {name}: {finding.message}")
    finally:
        sub.close()
    return runs


def record_reference() -> dict:
    """The reference's runs, repr(key) -> (calls, outcome, pace): timed in one pass, their flow followed in another.

    torch.optim imports torch._dynamo on first use (~1.3 s); a grade's lanes import it before any training
    (autograder/lanes.py), so it is imported here first too, lest the first run's pace hold it."""
    torch.set_num_threads(1)
    importlib.import_module("torch._dynamo")
    timed, followed = _graded_reference(follow_flow=False), _graded_reference(follow_flow=True)
    if set(timed) != set(followed):
        raise SystemExit("the two recordings of the reference trained different runs")
    runs = {}
    for key, (calls, outcome, gaps) in timed.items():
        again, outcome_again, _ = followed[key]
        if outcome != outcome_again or len(calls) != len(again) or not all(map(_same_call, calls, again)):
            raise SystemExit(f"the reference's run {key} differs between two recordings: it cannot be replayed")
        runs[key] = ([{**call, "flow": twin["flow"]} for call, twin in zip(calls, again)], outcome, gaps)
    return runs


def _same_call(a: dict, b: dict) -> bool:
    keys = ("fn", "args", "kwargs", "grad", "cotangent", "value", "grads")
    return all(_same(a[k], b[k]) for k in keys)


def _same(a: Any, b: Any) -> bool:
    """Equal bit for bit (tensors: same dtype, shape and values; NaN equal to NaN)."""
    if isinstance(a, torch.Tensor) or isinstance(b, torch.Tensor):
        return (isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor) and a.dtype == b.dtype
                and a.shape == b.shape and torch.equal(torch.nan_to_num(a), torch.nan_to_num(b)))
    if isinstance(a, (list, tuple)) or isinstance(b, (list, tuple)):
        return isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)) and len(a) == len(b) \
            and all(map(_same, a, b))
    if isinstance(a, dict) or isinstance(b, dict):
        return isinstance(a, dict) and isinstance(b, dict) and a.keys() == b.keys() \
            and all(_same(a[k], b[k]) for k in a)
    return a == b


def write_reference() -> None:
    """Record the reference's runs and write them to the lab's replays file (a registry.DataFile's writer)."""
    runs = record_reference()
    write(runs)
    print(f"wrote {DATA_FILE.relative_to(LAB)}: {len(runs)} runs, "
          f"{sum(len(calls) for calls, _, _ in runs.values())} calls, {DATA_FILE.stat().st_size >> 10} KiB",
          file=sys.stderr)
