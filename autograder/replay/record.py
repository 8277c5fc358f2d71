"""Recording the reference's runs: every call a run makes to the functions under test, in a grade of the reference.

    with recording() as runs:     # while active, replay.outcome trains and records each run
        e2e.run(...)              # runs: repr(key) -> (calls, outcome)
    write_reference()             # record_reference, then grading/data/replays.bin

A recorded call: {"fn", "args" (detached), "grad" (the positions of the arguments that required grad),
"kwargs", "cotangent" (or None), "flow" (its links to earlier answers: autograder/replay/flow.py),
"value", "grads"}. The judge's computation is deterministic: tests/test_replay.py records the runs again and
compares every call, link and outcome with the shipped file bit for bit.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Hashable, Iterator
from contextlib import contextmanager

import torch

from autograder.judge import e2e
from autograder.lab import config, registry
from autograder.lab.paths import LAB, REFERENCE
from autograder.lab.reference import load_reference
from autograder.sandbox.remote import RemoteFunction, RemoteSubmission

from .flow import Provenance, UndeclaredFlow, pieces
from .shipped import DATA_FILE, write

_RECORDING: dict | None = None  # while recording: repr(key) -> (calls, outcome)


def active() -> dict | None:
    """The recording under way, if any (replay.outcome then records the run instead of replaying it)."""
    return _RECORDING


@contextmanager
def recording() -> Iterator[dict]:
    """Record the runs `replay.outcome` trains meanwhile (none is replayed): repr(key) -> (calls, outcome)."""
    global _RECORDING
    _RECORDING = {}
    try:
        yield _RECORDING
    finally:
        _RECORDING = None


def record(key: Hashable, functions: dict[str, RemoteFunction], train: Callable[[], dict]) -> dict:
    """Train the run `key`, recording every call to `functions` (the reference's, across the boundary)."""
    assert _RECORDING is not None
    facts = registry.lab().replays
    seen = Provenance(facts.passes_on if facts is not None else {})
    calls: list[dict] = []
    for function in functions.values():
        function.answer = _recorded(function, calls, seen)  # type: ignore[method-assign]
    try:
        with seen:
            result = train()
    finally:
        for function in functions.values():
            del function.answer  # the instance's wrapper: the class's method again
    _RECORDING[repr(key)] = (calls, result)
    return result


def _recorded(function: RemoteFunction, calls: list[dict], seen: Provenance):
    answer, where = function.answer, config.current().contract[function.name].mask_index

    def recorded(*args, cotangent: torch.Tensor | None = None, **kwargs) -> tuple:
        try:
            flow = seen.links(list(args), cotangent)
        except UndeclaredFlow as exc:
            raise UndeclaredFlow(f"call {len(calls)} ({function.name}): {exc}") from None
        seen.paused = True
        try:
            value, grads = answer(*args, cotangent=cotangent, **kwargs)
        finally:
            seen.paused = False
        plain = [a.detach() if isinstance(a, torch.Tensor) else a for a in args]
        calls.append({"fn": function.name, "args": plain, "kwargs": kwargs,
                      "grad": [i for i, a in enumerate(args) if isinstance(a, torch.Tensor) and a.requires_grad],
                      "cotangent": cotangent, "flow": flow, "value": value, "grads": grads})
        seen.answered(pieces(value, grads), plain[where] if where is not None else None)
        return value, grads
    return recorded


def record_reference() -> dict:
    """The reference's runs, repr(key) -> (calls, outcome): its e2e tests graded in one lane, every run routed
    through replay.outcome recorded with its flow followed."""
    torch.set_num_threads(1)
    cfg = config.load()
    reference = load_reference()
    sub = RemoteSubmission(REFERENCE, cfg.limits)
    try:
        with recording() as runs:
            for name in cfg.e2e:
                with registry.without_plots():
                    finding = e2e.run(name, cfg, sub, reference)
                if finding.message or finding.kind:
                    raise SystemExit(f"the reference fails {name}: {finding.message}")
    finally:
        sub.close()
    return runs


def write_reference() -> None:
    """Record the reference's runs and write them to the lab's replays file (a registry.DataFile's writer)."""
    runs = record_reference()
    write(runs)
    print(f"wrote {DATA_FILE.relative_to(LAB)}: {len(runs)} runs, "
          f"{sum(len(calls) for calls, _ in runs.values())} calls, {DATA_FILE.stat().st_size >> 10} KiB",
          file=sys.stderr)
