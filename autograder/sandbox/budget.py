"""A grade's budget in CPU seconds, shared by its judge lanes, with a wall-clock backstop; and a call's CPU clock.

    budget = Budget(cpu_seconds=300, wall_seconds=540)  # at the grade's start, before a second lane is forked
    budget.watch(child_cpu)          # this lane's live sandboxed child: () -> its CPU seconds so far
    budget.left()                    # seconds left: the CPU budget's, or the wall backstop's if fewer
    budget.spent()                   # CPU seconds spent by every lane and its children since the start

    clock = CallClock(child_cpu)     # one call: the child's CPU since the call began (polled while waiting)

A loaded machine or a CPU quota stretches the wall clock, not the CPU a computation needs: counting CPU, a
grade measures the code, never the machine's load. The wall backstop (below the platform's own limit:
Gradescope kills a grade at 10 minutes by default, writing nothing) ends only a grade the machine cannot
run at all. A lane's CPU is the judge process's own (time.process_time: all its threads), its reaped
children's (getrusage), and its live child's (`watch`). Each lane writes what it spent into its slot of a
shared array (inherited by the fork, so the forked second lane writes slot 1), so both draw on one budget.
"""

from __future__ import annotations

import multiprocessing
import os
import resource
import time
from typing import Callable

from autograder.sandbox import zygote

LANES = 2              # slots of the shared array: one per judge lane
FRESH_SECONDS = 0.25   # a lane re-reads its live child's CPU at most this often (a /proc walk of its tree)


def children_cpu() -> float:
    """CPU seconds of this process's reaped children (and theirs), user and system; with those its zygote forked
    and reaped for it (autograder/sandbox/zygote.py: warm children are not the judge's to reap)."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime + zygote.reaped_cpu()


class Budget:
    def __init__(self, cpu_seconds: float, wall_seconds: float, clock: Callable[[], float] = time.monotonic,
                 own_cpu: Callable[[], float] = time.process_time, reaped_cpu: Callable[[], float] = children_cpu):
        """`clock`, `own_cpu` and `reaped_cpu` are the wall clock and the two CPU counters (tests pass fakes)."""
        self.cpu_seconds, self.wall_seconds = cpu_seconds, wall_seconds
        self.clock, self.own_cpu, self.reaped_cpu = clock, own_cpu, reaped_cpu
        self.started = clock()
        self._slots = multiprocessing.RawArray("d", LANES)
        self._pid, self._slot = os.getpid(), 0
        self._base = own_cpu() + reaped_cpu()   # what this process spent before the grade
        self._live: Callable[[], float] | None = None
        self._read_at, self._live_seconds = -1.0, 0.0

    def watch(self, live_cpu: Callable[[], float] | None) -> None:
        """Count the CPU of this lane's live child (None: no child now)."""
        self._live, self._read_at, self._live_seconds = live_cpu, -1.0, 0.0

    def wall_left(self) -> float:
        return self.wall_seconds - (self.clock() - self.started)

    def spent(self) -> float:
        """CPU seconds of every lane (this one measured now, the others as they last wrote)."""
        lane = self._lane()  # first: a fork starts counting afresh before it counts
        self._slots[lane] = self._lane_cpu()
        return sum(self._slots)

    def left(self) -> float:
        """Seconds left: of CPU, or of the wall backstop when that is less (<= 0: the grade is over)."""
        return min(self.cpu_seconds - self.spent(), self.wall_left())

    def over(self) -> bool:
        return self.left() <= 0

    def reason(self) -> str:
        """Which limit ended the grade, in the words of a test's message."""
        if self.wall_left() <= 0:
            return (f"the grade's wall-clock backstop ({self.wall_seconds:g} s) was reached: the machine is too "
                    "busy to run it")
        return f"the grade's CPU budget ({self.cpu_seconds:g} s of CPU time) was spent"

    def _lane(self) -> int:
        """This process's slot; a fork (the second lane) starts counting afresh in slot 1."""
        if os.getpid() != self._pid:
            self._pid, self._slot, self._base = os.getpid(), 1, 0.0
            self._live, self._read_at = None, -1.0
        return self._slot

    def _lane_cpu(self) -> float:
        if self._live is not None and self.clock() - self._read_at >= FRESH_SECONDS:
            self._live_seconds, self._read_at = self._live(), self.clock()
        live = self._live_seconds if self._live is not None else 0.0
        return self.own_cpu() + self.reaped_cpu() - self._base + live


class CallClock:
    """The CPU a child spends on one call, read only while the judge waits for it.

    The first reading comes at the first poll (a call that answers before it costs no read at all): what the
    child spent before it is counted as the wall time elapsed until then (at most what one thread can use).
    """

    def __init__(self, child_cpu: Callable[[], float], clock: Callable[[], float] = time.monotonic):
        self.child_cpu, self.clock = child_cpu, clock
        self.started = clock()
        self._first: tuple[float, float] | None = None   # (wall seconds elapsed, child CPU) at the first reading

    def spent(self) -> float:
        cpu = self.child_cpu()
        if self._first is None:
            self._first = (self.clock() - self.started, cpu)
        return self._first[0] + cpu - self._first[1]

    def wall(self) -> float:
        return self.clock() - self.started
