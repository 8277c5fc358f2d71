"""The shipped file of the reference's recorded runs, grading/data/replays.bin in the lab's folder.

    index frame   {"fingerprint": ..., "numerics": ..., "runs": [{"key", "outcome", "calls", "bytes"}, ...]}
    then per run  its calls, one wire frame each ({"fn", "args", "grad", "kwargs", "cotangent", "flow",
                  "value", "grads"}: autograder/replay/record.py), lzma-compressed on their own, so that a grade
                  decompresses only the runs it replays, and decodes a run's calls only as far as it replays

Wire frames (autograder/sandbox/child/wire.py), never pickle. The fingerprint covers what the runs depend on: torch,
the given world, the reference, the e2e settings, the e2e tests' code and the engine's (e2e.py), the files
the lab declares (registry.Replays.depends_on) and FORMAT, the version of what a recording holds (to change
with it: a slow test records the runs again and compares every call, link and outcome). A stale, missing or
unreadable file replays nothing: it only costs time (`python -m autograder refresh` rewrites it).
"""

from __future__ import annotations

import lzma
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from autograder.lab import fingerprints
from autograder.lab.paths import LAB_DATA
from autograder.sandbox.child import wire

DATA_FILE = LAB_DATA / "replays.bin"
FORMAT = "calls with flow links, the recording machine's numerics, unpaced, v6"
_SHIPPED: dict | None = None  # the file, read at first use: repr(run key) -> ShippedRun
UNREADABLE = (OSError, lzma.LZMAError, wire.WireError, EOFError, KeyError, TypeError, AttributeError)


@dataclass(frozen=True)
class ShippedRun:
    """One recorded run of the reference: its outcome and its calls."""

    outcome: dict
    n_calls: int
    blob: bytes   # its calls: one wire frame each, lzma-compressed

    def calls(self) -> Iterator[dict]:
        """The recorded calls in order, decoded one at a time (a replay that stops early decodes no more)."""
        frames = wire.FrameReader.of_bytes(lzma.decompress(self.blob))
        for _ in range(self.n_calls):
            yield frames.read()


def fingerprint() -> str:
    """What the recorded runs depend on (the module docstring), as a sha256."""
    return fingerprints.e2e_runs(FORMAT).hexdigest()


def write(runs: dict, path: Path = DATA_FILE) -> None:
    """Write recorded runs (repr(key) -> (calls, outcome)): the index frame, then each run's calls."""
    blobs = [lzma.compress(b"".join(wire.encode(call) for call in calls)) for calls, _ in runs.values()]
    index = [{"key": key, "outcome": result, "calls": len(calls), "bytes": len(blob)}
             for (key, (calls, result)), blob in zip(runs.items(), blobs)]
    path.parent.mkdir(parents=True, exist_ok=True)
    header = {"fingerprint": fingerprint(), "numerics": fingerprints.numerics(), "runs": index}
    path.write_bytes(wire.encode(header) + b"".join(blobs))


def read(path: Path = DATA_FILE) -> tuple[str, dict[str, ShippedRun]]:
    """(fingerprint, repr(run key) -> ShippedRun) of a replays file (our own file: plain wire frames)."""
    frames = wire.FrameReader.of_bytes(path.read_bytes())
    header = frames.read()
    runs, rest = {}, bytes(frames.buffer)
    for run in header["runs"]:
        runs[run["key"]] = ShippedRun(run["outcome"], run["calls"], rest[:run["bytes"]])
        rest = rest[run["bytes"]:]
    return header["fingerprint"], runs


def recorded_numerics(path: Path = DATA_FILE) -> str:
    """fingerprints.numerics() of the machine that recorded the file: where this machine's differs, a training
    here rounds differently from the recording (a replay still compares answers within the tolerances)."""
    return wire.FrameReader.of_bytes(path.read_bytes()).read()["numerics"]


def is_current(path: Path = DATA_FILE) -> bool:
    """The shipped runs match this world, reference, e2e code and settings (`python -m autograder refresh`)."""
    try:
        return read(path)[0] == fingerprint()
    except UNREADABLE:
        return False


def shipped_runs() -> dict[str, ShippedRun]:
    """The shipped runs when the file is current ({} when it is absent, unreadable or stale)."""
    global _SHIPPED
    if _SHIPPED is None:
        try:
            stamp, runs = read()
            _SHIPPED = runs if stamp == fingerprint() else {}
        except UNREADABLE:  # a file of an older format
            _SHIPPED = {}
    return _SHIPPED
