"""Shipped reference trainings: a grade skips an e2e training whose calls the submission answers as the reference.

A PPO run of an e2e test calls the functions under test about 1,300 times; everything else in it (sampling,
the forward and backward passes, the evaluation) is the judge's own deterministic code. The reference's
runs are recorded once, in a grade of the reference: every call's inputs, the answer (value and gradients),
the judge's time before each call (grading/replay_pace.py) and the run's outcome (history and final
evaluation), in grading/data/replays.bin (wire frames, compressed; `python -m autograder refresh`
rewrites it, tests/test_replay.py checks it is current).

Before training a run, a grade sends the submission the recorded calls in order, as its own training
would: at the training's pace (replay_pace.Pacer), and with the submission's own answers passed on where
the training passes them on (`Flow`: the rewards it gets are its shaped rewards, its advantages and
returns are its GAE's), so that nothing it sees tells the replay from its training. When every answer
lies within grading.yaml's `calibration.replay_rtol` / `replay_atol` of the reference's (per-token outputs
compared where the mask is 1 only: the training never reads the rest; a gradient the reference's is exactly
0 must be 0: Adam would turn any other value into a full step), the run's outcome is the recorded one.
Answers equal bit for bit would take that very training; answers this close differ from it as rounding
does, and the calibration shows that the reference passes every criterion on each of its seeds with 3 std
to spare. At the first answer that differs, or raises, the run trains as it always did: the answers given
so far cost a fraction of a second. A stale or missing file only costs time.

AUTOGRADER_REPLAY=0 in the judge's environment trains every run (benchmarks, and A/B checks of this module).
"""

from __future__ import annotations

import hashlib
import itertools
import lzma
import os
import sys
from collections import deque
from collections.abc import Callable, Hashable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from autograder import config, e2e
from autograder.child import wire
from autograder.paths import ASSIGNMENT, ENGINE, LAB, LAB_DATA, REFERENCE, WORLD_FILES, use_world
from autograder.reference import load_reference
from autograder.remote import RemoteFunction, RemoteSubmission, SubmissionError

from . import replay_pace
from .baseline import DATA_FILE, code_of

use_world()
import training  # noqa: E402

REPLAYS = LAB_DATA / "replays.bin"
# Where a per-token output is padding, by the position of its `mask` argument: never compared.
COMPARE_GAP = 0.1   # a paced replay compares the answers so far in a gap of at least this many speed units...
DECODE_GAP = 1.0     # ...and decodes the next LOOKAHEAD recorded calls in one at least this long
LOOKAHEAD = 20
_RECORDING: dict | None = None  # while recording(): run key -> (its calls, its outcome)
_SHIPPED: dict | None = None    # replays.bin, read at first use: repr(run key) -> ShippedRun


def outcome(key: Hashable, parts, train: Callable[[], dict], rtol: float, atol: float) -> dict:
    """The outcome of the run `key` trained with `parts`: the shipped one when the submission's functions
    answer every recorded call like the reference's, else `train()`'s."""
    functions = {f.name: f for f in vars(parts).values() if isinstance(f, RemoteFunction)}
    if _RECORDING is not None:
        return _record(key, functions, train)
    if os.environ.get("AUTOGRADER_REPLAY") == "0":
        return train()
    shipped = shipped_runs().get(repr(key))
    if shipped is not None and functions:
        try:
            if _answers_match(shipped, functions, rtol, atol):
                return {**shipped.outcome, "replayed": shipped.n_calls}
        except (lzma.LZMAError, wire.WireError, EOFError):  # a damaged file only costs time
            pass
    return train()


def _answers_match(run: "ShippedRun", functions: dict[str, RemoteFunction], rtol: float, atol: float,
                   paced: bool = True) -> bool:
    """Send the recorded calls (`paced`: at the training's pace), fed as the training would; True when every
    answer is the reference's within the tolerances.

    Paced, the judge's own work (decoding the recorded calls, comparing the answers) is done in the gaps
    long enough to hide it, ahead of the calls that follow short ones (compute_gae comes 0.1 ms after
    shaped_rewards in a training): the shortest gaps are as short as the training's."""
    pacer, flow = replay_pace.Pacer(run.pace) if paced else None, Flow()
    calls, ahead = run.calls(), deque[dict]()
    unchecked: list[tuple[dict, Any, list]] = []  # answers given, not compared yet
    for i in range(run.n_calls):
        room = run.pace[i] if pacer is not None else DECODE_GAP  # unpaced: the work is all there is
        if room >= COMPARE_GAP:
            if not all(_answer_matches(*answer, rtol, atol) for answer in unchecked):
                return False
            unchecked = []
        wanted = LOOKAHEAD if room >= DECODE_GAP else 1
        ahead += itertools.islice(calls, max(0, wanted - len(ahead)))
        call = ahead.popleft()
        function, args = functions.get(call["fn"]), flow.arguments(call)
        if function is None or args is None:
            return False
        args = [a.requires_grad_(True) if j in call["grad"] else a for j, a in enumerate(args)]
        if pacer is not None:
            pacer.wait(i)
        try:
            value, grads = function.answer(*args, **call["kwargs"])
        except SubmissionError:
            return False  # the training decides: it calls with its own inputs
        if pacer is not None:
            pacer.answered()
        flow.answered(call, value)
        unchecked.append((call, value, grads))
    if not all(_answer_matches(*answer, rtol, atol) for answer in unchecked):
        return False
    if pacer is not None:
        pacer.wait(run.n_calls)  # the training's last update and its evaluation
    return True


def _answer_matches(call: dict, value, grads, rtol: float, atol: float) -> bool:
    where = config.current().contract[call["fn"]].mask_index  # per-token outputs: compared where the mask is 1
    mask = call["args"][where].bool() if where is not None else None
    return _close(value, call["value"], mask, rtol, atol) and _close(grads, call["grads"], None, rtol, atol, zeros=True)


def _close(got, expected, mask: torch.Tensor | None, rtol: float, atol: float, zeros: bool = False) -> bool:
    """Within the tolerances (where `mask` is 1); `zeros`: exactly 0 where `expected` is exactly 0."""
    if isinstance(expected, (list, tuple)):
        return len(got) == len(expected) and all(_close(g, e, mask, rtol, atol, zeros) for g, e in zip(got, expected))
    g, e = got.double(), expected.double()
    if mask is not None:
        g, e = torch.where(mask, g, 0.0), torch.where(mask, e, 0.0)
    if zeros and bool((g[e == 0] != 0).any()):
        return False
    return bool(torch.isfinite(g).all()) and torch.allclose(g, e, rtol=rtol, atol=atol)


class Flow:
    """What the training passes on from an answer to a later call of the same iteration (training.train_ppo):

        compute_gae's rewards           on_tokens(shaped_rewards' answer, mask)
        ppo_policy_loss's advantages    masked_whiten(on_tokens(compute_gae's advantages, mask), mask)[rows]
        ppo_value_loss's returns        on_tokens(compute_gae's returns, mask)[rows]

    A replay passes on the submission's own answers there, as its training would: else a submission
    could see that a changed answer (within the tolerances) comes back as the reference's. Each relation is
    first checked on the recorded call (the minibatch's rows found by it): where the recording does not
    show it, `arguments` is None and the run trains. An argument from an answer not recorded (a function
    of the reference, not under test) is passed as recorded.
    """

    def __init__(self):
        self.recorded: dict[str, Any] = {}  # function -> the reference's last recorded answer
        self.own: dict[str, Any] = {}       # function -> the submission's last answer
        self.whitened: tuple | None = None     # (recorded, own) advantages as the minibatches get them
        self.gae_mask: torch.Tensor | None = None  # compute_gae's mask: the whole batch's

    def arguments(self, call: dict) -> list | None:
        args, fn = list(call["args"]), call["fn"]
        if fn == "compute_gae" and "shaped_rewards" in self.own:
            mask = args[2]
            if not torch.equal(args[0], training.on_tokens(self.recorded["shaped_rewards"], mask)):
                return None
            args[0] = training.on_tokens(self.own["shaped_rewards"], mask)
        elif fn in ("ppo_policy_loss", "ppo_value_loss") and "compute_gae" in self.own:
            full_mask = self.gae_mask
            if fn == "ppo_policy_loss":
                if self.whitened is None:
                    self.whitened = tuple(training.masked_whiten(training.on_tokens(a[0], full_mask), full_mask)
                                          for a in (self.recorded["compute_gae"], self.own["compute_gae"]))
                recorded, own = self.whitened
            else:
                recorded, own = (training.on_tokens(a[1], full_mask)
                                 for a in (self.recorded["compute_gae"], self.own["compute_gae"]))
            rows = _rows(args[2], recorded)
            if rows is None:
                return None
            args[2] = own[rows]
        return args

    def answered(self, call: dict, value) -> None:
        self.recorded[call["fn"]], self.own[call["fn"]] = call["value"], value
        if call["fn"] == "compute_gae":
            self.gae_mask, self.whitened = call["args"][2], None


def _rows(part: torch.Tensor, full: torch.Tensor) -> torch.Tensor | None:
    """The rows of `full` that `part` holds, in order (the first of equal rows), or None if one is missing."""
    if part.dim() != 2 or full.dim() != 2 or part.shape[1] != full.shape[1]:
        return None
    equal = (part[:, None, :] == full[None, :, :]).all(-1)
    if not bool(equal.any(1).all()):
        return None
    return equal.int().argmax(1)


# ---------------------------------------------------------------- recording and the shipped file
def _record(key: Hashable, functions: dict[str, RemoteFunction], train: Callable[[], dict]) -> dict:
    calls: list[dict] = []
    for function in functions.values():
        function.tape = calls
    recorder = replay_pace.Recorder(functions.values())
    try:
        result = train()
    finally:
        pace = recorder.stop()
        for function in functions.values():
            function.tape = None
    assert _RECORDING is not None
    _RECORDING[repr(key)] = (calls, result, pace)
    return result


@contextmanager
def recording() -> Iterator[dict]:
    """Record the runs `outcome` trains (none is replayed meanwhile): repr(key) -> (calls, outcome, pace)."""
    global _RECORDING
    _RECORDING = {}
    try:
        yield _RECORDING
    finally:
        _RECORDING = None


def fingerprint() -> str:
    """What the recorded runs depend on: torch, the given world, the shipped baseline, the e2e settings and
    the code of the reference and of the e2e tests (docstrings and comments aside)."""
    h = hashlib.sha256((torch.__version__ + repr(config.load().e2e)).encode())
    for path in [*(ASSIGNMENT / name for name in WORLD_FILES), DATA_FILE]:
        h.update(path.name.encode() + path.read_bytes())
    for path in [REFERENCE, ENGINE / "e2e.py", Path(__file__).with_name("e2e_tests.py")]:
        h.update(path.name.encode() + code_of(path).encode())
    return h.hexdigest()


@dataclass(frozen=True)
class ShippedRun:
    """One recorded run of the reference: its outcome, its calls and its pace."""

    outcome: dict
    n_calls: int
    blob: bytes        # its calls: one wire frame each, lzma-compressed
    pace: list[float]  # n_calls + 1 gaps, in replay_pace speed units: before each call, after the last

    def calls(self) -> Iterator[dict]:
        """The recorded calls in order, decoded one at a time (a replay that stops early decodes no more)."""
        frames = wire.FrameReader.of_bytes(lzma.decompress(self.blob))
        for _ in range(self.n_calls):
            yield frames.read()


def write(runs: dict, path: Path = REPLAYS) -> None:
    """Write recorded runs (from `recording()`): an index frame (fingerprint, each run's outcome, size and
    pace), then each run's calls, compressed on their own, so a grade decompresses only the runs it replays."""
    blobs = [lzma.compress(b"".join(wire.encode(call) for call in calls)) for calls, _, _ in runs.values()]
    index = [{"key": key, "outcome": result, "calls": len(calls), "bytes": len(blob),
              "pace": torch.tensor(pace, dtype=torch.float32)}
             for (key, (calls, result, pace)), blob in zip(runs.items(), blobs)]
    path.write_bytes(wire.encode({"fingerprint": fingerprint(), "runs": index}) + b"".join(blobs))


def read(path: Path = REPLAYS) -> tuple[str, dict[str, ShippedRun]]:
    """(fingerprint, repr(run key) -> ShippedRun) of a replays file (our own file: plain wire frames)."""
    frames = wire.FrameReader.of_bytes(path.read_bytes())
    header = frames.read()
    runs, rest = {}, bytes(frames.buffer)
    for run in header["runs"]:
        pace = run["pace"].tolist()
        if len(pace) != run["calls"] + 1:
            raise KeyError("pace")
        runs[run["key"]] = ShippedRun(run["outcome"], run["calls"], rest[:run["bytes"]], pace)
        rest = rest[run["bytes"]:]
    return header["fingerprint"], runs


def is_current(path: Path = REPLAYS) -> bool:
    """The shipped runs match this world, baseline, reference and e2e settings (`python -m autograder refresh`)."""
    try:
        return read(path)[0] == fingerprint()
    except (OSError, wire.WireError, EOFError, KeyError, TypeError, AttributeError):
        return False


def shipped_runs() -> dict[str, ShippedRun]:
    """The shipped runs when the file is current ({} when it is absent, unreadable or stale)."""
    global _SHIPPED
    if _SHIPPED is None:
        try:
            stamp, runs = read()
            _SHIPPED = runs if stamp == fingerprint() else {}
        except (OSError, wire.WireError, EOFError, KeyError, TypeError, AttributeError):  # a file of an older format
            _SHIPPED = {}
    return _SHIPPED


def record_reference() -> dict:
    """Grade the reference's e2e tests in one lane, recording every PPO run."""
    cfg = config.load()
    torch.set_num_threads(1)
    reference = load_reference()
    sub = RemoteSubmission(REFERENCE, cfg.limits)
    try:
        with recording() as runs:
            for name in cfg.e2e:
                finding = e2e.run(name, cfg, sub, reference)
                if finding.message or finding.kind:
                    raise SystemExit(f"the reference fails {name}: {finding.message}")
    finally:
        sub.close()
    return runs


def main() -> None:
    recorded = record_reference()
    write(recorded)
    print(f"wrote {REPLAYS.relative_to(LAB)}: {len(recorded)} runs, "
          f"{sum(len(c) for c, _, _ in recorded.values())} calls, {REPLAYS.stat().st_size >> 10} KiB", file=sys.stderr)
