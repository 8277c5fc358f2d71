"""A run of an e2e test: the recorded outcome when the submission answers its recorded calls as the reference
did (sent as fast as it answers, its own answers passed on as the training passes them), else trained."""

from __future__ import annotations

import lzma
import os
from collections.abc import Callable, Hashable
from contextlib import closing
from itertools import takewhile
from typing import Any

from autograder.lab import config, registry
from autograder.sandbox.child import wire
from autograder.sandbox.remote import RemoteFunction, SubmissionError, answers

from .compare import answer_matches
from .flow import Feed, waves
from .record import active, record
from .shipped import ShippedRun, shipped_runs


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


def answers_match(run: ShippedRun, functions: dict[str, RemoteFunction], rtol: float, atol: float) -> bool:
    """Send the recorded calls in order, back to back, fed as the training would (the submission's own answers
    passed on); True when every answer is the reference's within the tolerances. The calls go in waves (flow.waves:
    those whose arguments are all known, in batches: remote.answers); the first answer that differs (or raises)
    ends the replay: the recorded calls past its wave are never decoded."""
    facts = registry.lab().replays
    contract = config.current().contract
    feed = Feed(facts.passes_on if facts is not None else {}, lambda fn: contract[fn].mask_index)
    for wave in waves(run.calls()):
        known = list(takewhile(lambda call: call["fn"] in functions, wave))
        asked = []
        for call in known:
            args, cotangent = feed.arguments(call)
            args = [a.requires_grad_(True) if j in call["grad"] else a for j, a in enumerate(args)]
            function = functions[call["fn"]]
            asked.append((function, function.prepared(*args, cotangent=cotangent, **call["kwargs"])))
        with closing(answers(asked)) as replies:
            for call in known:
                try:
                    value, grads = next(replies)
                except SubmissionError:
                    return False  # the training decides: it calls with its own inputs
                if not answer_matches(call, value, grads, rtol, atol):
                    return False
                feed.answered(call, value, grads)
        if len(known) < len(wave):
            return False  # a function the run calls is not among the submission's
    return True


def note(*runs: dict) -> str:
    """A note for runs the grade did not train: the submission answered their calls as the reference does."""
    if not runs or not all(run.get("replayed") for run in runs):
        return ""
    calls = sum(run["replayed"] for run in runs)
    what, recorded = ("this training", "run") if len(runs) == 1 else ("these trainings", "runs")
    return (f" (your functions answered all {calls} calls of {what} as the reference's do: the numbers are "
            f"those of the reference's recorded {recorded})")
