"""How many judge processes ("lanes") a grade uses, which tests each runs, and how the second one starts.

    n = lane_count()                           # from the CPUs and memory this process may really use
    work, trained = plan(test_ids, n, runs)    # [[checks, e2e...], [e2e...]], the runs the second lane trains
    with second_lane() as (pool, inbox): ...   # a forked judge that dies with this one, and its pipe back

Decided from the machine (autograder/judge/machine.py), never from grading.yaml: one lane where at most one CPU
is usable (a second buys nothing there and costs ~200 MB), two where two CPUs and the memory allow.
"""

from __future__ import annotations

import ctypes
import gc
import itertools
import multiprocessing
import signal
from concurrent.futures import ProcessPoolExecutor
from contextlib import contextmanager
from multiprocessing.connection import Connection
from typing import Hashable, Iterator

from autograder.judge import machine

LANE_MB = 420          # peak of one lane (judge + its sandboxed child) in a full grade, measured
CHECK_SECONDS = 0.05   # CPU of one unit or property check of the reference, on shipped examples (measured)
MIN_CPUS_FOR_TWO = 1.9  # usable CPUs from which a second lane pays for itself
PR_SET_PDEATHSIG = 1


class NoRoom(Exception):
    """The memory this process may use cannot hold one lane of a grade."""


def lane_count(wanted: int | None = None) -> int:
    """1 or 2 lanes (`wanted` caps it); raises NoRoom when not even one fits the memory limit."""
    limit = machine.memory_limit_bytes()
    if limit is not None and limit < LANE_MB << 20:
        raise NoRoom(f"this process may use {limit >> 20} MB of memory, and one grade needs about {LANE_MB} MB: "
                     "give the container more memory")
    two = machine.usable_cpus() >= MIN_CPUS_FOR_TWO and (limit is None or limit >= 2 * LANE_MB << 20)
    return min(wanted or 2, 2 if two else 1)


def plan(test_ids: list[str], lanes: int, runs: dict[str, dict[Hashable, float]],
         check_seconds: float = CHECK_SECONDS) -> tuple[list[list[str]], set[Hashable]]:
    """Which tests each lane runs, and the run keys the second lane trains (the first waits for those).

    `runs`: e2e test id -> {run key: estimated CPU seconds} (its registration's `runs`). The second lane
    trains every run of its tests; the first the others of its tests and every check. Of all ways to
    put e2e tests in the second lane, the one whose busier lane has the least work wins (ties: the
    fewest tests there, then the earliest in test order): only the first lane ever waits, so no cycle.
    """
    e2e = [t for t in test_ids if t in runs]
    if lanes < 2 or not e2e:
        return [test_ids], set()
    checks = check_seconds * sum(t not in runs for t in test_ids)
    best: tuple = ()
    for size in range(1, len(e2e) + 1):
        for second in itertools.combinations(e2e, size):
            trained = {k: c for t in second for k, c in runs[t].items()}
            first = {k: c for t in e2e if t not in second for k, c in runs[t].items() if k not in trained}
            load = max(checks + sum(first.values()), sum(trained.values()))
            if not best or load < best[0] - 1e-9:
                best = (load, set(second), set(trained))
    _, chosen, keys = best
    return [[t for t in test_ids if t not in chosen], [t for t in test_ids if t in chosen]], keys


def _start_second_lane() -> None:
    """In the forked lane: mark it as the second, and have the kernel kill it when the judge dies,
    however the judge dies."""
    global _IS_SECOND
    _IS_SECOND = True
    try:
        ctypes.CDLL(None).prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    except (OSError, AttributeError):
        pass  # not Linux: the executor's own shutdown is all there is


_OUTBOX: Connection | None = None  # the pipe's end the second lane sends on (inherited by the fork)
_IS_SECOND = False                  # True in the second lane only


@contextmanager
def second_lane(both_train: bool = False) -> Iterator[tuple[ProcessPoolExecutor, Connection]]:
    """A forked judge process, and the end of a pipe on which it `send`s (plain bytes: the runs it trained).

    Forked before any thread or child exists, it shares the imported modules (torch's ~150 MB)
    copy-on-write; gc.freeze() keeps the collector from copying those pages. `both_train`: each lane will
    train a run, so torch._dynamo (imported by a torch.optim optimiser's constructor: ~1.3 s of CPU, ~70 MB) is
    imported once here and shared; otherwise only a lane that trains imports it, while the other works."""
    global _OUTBOX
    if both_train:
        import_dynamo()

    from autograder.lab import registry
    registry.lab()  # the lab's modules (training code, plots), imported once and shared
    gc.freeze()
    inbox, _OUTBOX = multiprocessing.Pipe(duplex=False)
    try:
        with ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("fork"),
                                 initializer=_start_second_lane) as pool:
            yield pool, inbox
    finally:
        _OUTBOX.close()
        inbox.close()
        _OUTBOX = None


def import_dynamo() -> None:
    """Import torch._dynamo now, in a process whose forks will train: a torch.optim optimiser imports it at its
    first use (~1.3-2 s of CPU, ~70 MB), and each fork would otherwise import it for itself (second_lane; the
    workers of validate and grade-all, which grade one submission after another)."""
    import torch._dynamo  # noqa: F401


def send(data: bytes) -> None:
    """In the second lane: pass `data` to the first (a no-op in the first lane)."""
    if _IS_SECOND and _OUTBOX is not None:
        _OUTBOX.send_bytes(data)


def trim_heap() -> None:
    """Give the heap's freed pages back to the system (glibc keeps them after a test's big tensors are
    freed), so that the lanes' peaks do not add up. A no-op where glibc is absent."""
    try:
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):
        pass
