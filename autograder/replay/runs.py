"""A run of an e2e test: the recorded outcome when the submission answers its recorded calls as the reference
did (sent at the training's pace, its own answers passed on as the training passes them), else trained."""

from __future__ import annotations

import itertools
import lzma
import os
from collections import deque
from collections.abc import Callable, Hashable
from typing import Any

from autograder import config, registry
from autograder.child import wire
from autograder.remote import RemoteFunction, SubmissionError

from .compare import answer_matches
from .flow import Feed
from .pace import Pacer
from .record import active, record
from .shipped import ShippedRun, shipped_runs

COMPARE_GAP = 0.1   # a paced replay compares the answers so far in a gap of at least this many speed units...
DECODE_GAP = 1.0     # ...and decodes the next LOOKAHEAD recorded calls in one at least this long
LOOKAHEAD = 20


def outcome(key: Hashable, parts: Any, train: Callable[[], dict], rtol: float, atol: float) -> dict:
    """The outcome of the run `key` trained with `parts` (the lab's function bundle): the shipped one, with
    "replayed" (its number of calls), when the submission's functions answer every recorded call like the
    reference's, else `train()`'s. While the reference is recorded, `train()`'s, recorded."""
    functions = {f.name: f for f in vars(parts).values() if isinstance(f, RemoteFunction)}
    if active() is not None:
        return record(key, functions, train)
    if os.environ.get("AUTOGRADER_REPLAY") == "0":
        return train()
    run = shipped_runs().get(repr(key))
    if run is not None and functions:
        try:
            if answers_match(run, functions, rtol, atol):
                return {**run.outcome, "replayed": run.n_calls}
        except (lzma.LZMAError, wire.WireError, EOFError, KeyError, IndexError):  # a damaged file only costs time
            pass
    return train()


def answers_match(run: ShippedRun, functions: dict[str, RemoteFunction], rtol: float, atol: float,
                  paced: bool = True) -> bool:
    """Send the recorded calls (`paced`: at the training's pace), fed as the training would; True when every
    answer is the reference's within the tolerances.

    Paced, the judge's own work (decoding the recorded calls, comparing the answers) is done in the gaps
    long enough to hide it, ahead of the calls that follow short ones (a call may come 0.1 ms after the
    previous answer in a training): the shortest gaps are as short as the training's."""
    facts = registry.lab().replays
    contract = config.current().contract
    pacer = Pacer(run.pace) if paced else None
    feed = Feed(facts.passes_on if facts is not None else {}, lambda fn: contract[fn].mask_index)
    calls, ahead = run.calls(), deque[dict]()
    unchecked: list[tuple[dict, Any, Any]] = []  # answers given, not compared yet
    for i in range(run.n_calls):
        room = run.pace[i] if pacer is not None else DECODE_GAP  # unpaced: the work is all there is
        if room >= COMPARE_GAP:
            if not all(answer_matches(*answer, rtol, atol) for answer in unchecked):
                return False
            unchecked = []
        wanted = LOOKAHEAD if room >= DECODE_GAP else 1
        ahead += itertools.islice(calls, max(0, wanted - len(ahead)))
        call = ahead.popleft()
        function = functions.get(call["fn"])
        if function is None:
            return False
        args, cotangent = feed.arguments(call)
        args = [a.requires_grad_(True) if j in call["grad"] else a for j, a in enumerate(args)]
        if pacer is not None:
            pacer.wait(i)
        try:
            value, grads = function.answer(*args, cotangent=cotangent, **call["kwargs"])
        except SubmissionError:
            return False  # the training decides: it calls with its own inputs
        if pacer is not None:
            pacer.answered()
        feed.answered(call, value, grads)
        unchecked.append((call, value, grads))
    if not all(answer_matches(*answer, rtol, atol) for answer in unchecked):
        return False
    if pacer is not None:
        pacer.wait(run.n_calls)  # the training's last update and its evaluation
    return True


def note(*runs: dict) -> str:
    """A note for runs the grade did not train: the submission answered their calls as the reference does."""
    if not runs or not all(run.get("replayed") for run in runs):
        return ""
    calls = sum(run["replayed"] for run in runs)
    what, recorded = ("this training", "run") if len(runs) == 1 else ("these trainings", "runs")
    return (f" (your functions answered all {calls} calls of {what} as the reference's do: the numbers are "
            f"those of the reference's recorded {recorded})")
