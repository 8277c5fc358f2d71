"""How many judge processes ("lanes") a grade uses, which tests each runs, and how the second one starts.

    n = lane_count()                           # from the CPUs and memory this process may really use
    lanes = split(test_ids, n)                 # [[checks, e2e...], [the largest group of e2e tests]]
    with second_lane() as pool: ...            # a forked judge that dies with this one

Decided from the machine (autograder/machine.py), never from grading.yaml: one lane where at most one CPU
is usable (a second buys nothing there and costs ~200 MB), two where two CPUs and the memory allow.
"""

from __future__ import annotations

import ctypes
import gc
import multiprocessing
import signal
from concurrent.futures import ProcessPoolExecutor
from contextlib import contextmanager
from typing import Iterator

from autograder import machine

LANE_MB = 420          # peak of one lane (judge + its sandboxed child) in a full grade, measured
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


def split(test_ids: list[str], lanes: int, groups: list[tuple[str, ...]]) -> list[list[str]]:
    """With two lanes, the second runs the largest group of e2e tests that must share a process."""
    if lanes < 2 or not groups:
        return [test_ids]
    largest: tuple[str, ...] = max(groups, key=len)
    second = set(largest)
    return [[t for t in test_ids if t not in second], [t for t in test_ids if t in second]]


def _die_with_parent() -> None:
    """In the forked lane: the kernel kills it when the judge dies, however the judge dies."""
    try:
        ctypes.CDLL(None).prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    except (OSError, AttributeError):
        pass  # not Linux: the executor's own shutdown is all there is


@contextmanager
def second_lane() -> Iterator[ProcessPoolExecutor]:
    """A forked judge process. Forked before any thread or child exists, it shares the imported modules
    (torch's ~150 MB) copy-on-write; gc.freeze() keeps the collector from copying those pages."""
    import torch._dynamo  # noqa: F401  imported by torch.optim on first use: ~70 MB shared, not twice

    from autograder import registry
    registry.lab()  # the lab's modules (training code, plots), imported once and shared
    gc.freeze()
    with ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("fork"), initializer=_die_with_parent) as pool:
        yield pool


def trim_heap() -> None:
    """Give the heap's freed pages back to the system (glibc keeps them after a test's big tensors are
    freed), so that the lanes' peaks do not add up. A no-op where glibc is absent."""
    try:
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):
        pass
