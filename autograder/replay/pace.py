"""The pace of a replay: the recorded calls reach the submission as far apart as in its own training.

    clock = GapClock()                  # while the reference's run is recorded
    clock.called(); ...answer...; clock.answered()
    gaps = clock.stop()                 # before each call, and after the last: judge CPU, in speed units
    pacer = Pacer(gaps)                 # in a grade's replay of that run
    pacer.wait(i); ...answer call i...; pacer.answered()
    pacer.wait(len(gaps) - 1)           # the training's last step and evaluation

A child can time the gaps between the calls it answers with its own clock, and compare them with its own
speed: sent back to back (0.7-2 ms apart, against 8-29 ms in a training), a replay would tell a
submission that its answers are not being trained on. So a recording keeps, before each call, the CPU
time the judge spent since the previous answer (sampling, forward and backward passes, the optimiser),
in units of a piece of that training (the lab's "long" piece, registry.Replays: e.g. a forward and backward
pass of its policy over one batch, ~5-8 ms), measured in the same process as a replay measures it: hot (after
an untimed run: a training's judge computes without pause, and just after a pause the same piece costs up
to twice its CPU), the median of the last KEPT measurements, again every REMEASURE units. A replay measures
that piece and the "short" one on this machine, in CPU and wall time, as contended as a training would be now
(again every REMEASURE units of training, inside a gap), and waits each gap as long as that much CPU takes
here (Pacer.seconds), times a random factor (JITTER, log-normal, mean 1). Waiting costs no CPU: a replayed
run takes about as long as its training, for a fraction of its CPU (docs/calibration.md).

The pieces are the lab's own because only a piece of a training is sure to track that training's speed on
any machine (vector units, caches, the interpreter's overhead weigh on each workload differently).
"""

from __future__ import annotations

import functools
import math
import random
import statistics
import time
from collections.abc import Callable, Mapping

import torch

from autograder import machine, registry

JITTER = 0.15        # the standard deviation of a gap's log (two trainings of one run differ by ~0.1-0.25)
REMEASURE = 200      # speed units of recorded gaps (~1.6 s of training) between two measurements of the speed
KEPT = 3             # a replay uses the median of each piece's last KEPT measurements
PIECES = ("short", "long")


@functools.lru_cache(maxsize=1)
def _pieces() -> Mapping[str, Callable[[], object]]:
    facts = registry.lab().replays
    assert facts is not None, "the lab declares no replays (registry.Lab.replays)"
    return facts.pace_pieces()


def speed(piece: str, reps: int) -> tuple[float, float]:
    """(thread CPU, wall) seconds of one piece of training ("short" or "long"), median of `reps` runs after an
    untimed one: as fast as within a training, whose judge computes without pause (just after a pause, the
    caches and the core's clock cost a piece up to twice its CPU)."""
    work = _pieces()[piece]
    times = []
    with torch.enable_grad():  # a recording measures within the training, maybe where it computes without grad
        work()
        for _ in range(reps):
            cpu, wall = time.thread_time(), time.perf_counter()
            work()
            times.append((time.thread_time() - cpu, time.perf_counter() - wall))
    return statistics.median(t[0] for t in times), statistics.median(t[1] for t in times)


class GapClock:
    """Times a recorded training: the judge's CPU before each call and after the last, in speed units.

    The unit is measured as a replay measures it (the median of the long piece's last KEPT measurements,
    again every REMEASURE units, after an answer, its own CPU left out of the gaps), so that the machine's
    speed drifting during a recording (other processes, a VM's neighbours) does not enter the pace."""

    def __init__(self) -> None:
        self.units = [speed("long", 1)[0] for _ in range(KEPT)]
        self.unit = statistics.median(self.units)
        self.gaps: list[float] = []  # in units
        self.since = 0.0
        self.last = time.thread_time()

    def called(self) -> None:
        self.gaps.append((time.thread_time() - self.last) / self.unit)
        self.since += self.gaps[-1]

    def answered(self) -> None:
        if self.since >= REMEASURE:
            self.units = [*self.units, speed("long", 1)[0]][-KEPT:]
            self.unit, self.since = statistics.median(self.units), 0.0
        self.last = time.thread_time()

    def stop(self) -> list[float]:
        """The gaps (the last one: from the last answer to the end of the training), in speed units."""
        return [*self.gaps, (time.thread_time() - self.last) / self.unit]


class Pacer:
    """Waits before each replayed call as long as the recorded training computed before it, at this
    machine's speed now, with jitter (randomness the child cannot predict).

    A gap of c seconds of CPU here takes c x the stretch contention gives a burst of that length: both
    pieces are timed just after the judge wakes (at the start of a gap), as a training's gaps begin, so
    that a short gap stays short on a busy machine (a woken process runs a short burst before it is
    preempted) and a long one stretches as the long piece does; between and beyond the two pieces the
    stretch is interpolated in log CPU, and held."""

    def __init__(self, gaps: list[float]) -> None:
        self.gaps, self.random = gaps, random.SystemRandom()
        # a CPU quota below one CPU throttles a training's sustained compute by 1 / quota, which a burst of a
        # few ms, run within one quota period, does not show
        self.least_stretch = 1 / min(1.0, machine.usable_cpus())
        self.times = {piece: [speed(piece, KEPT)] for piece in PIECES}
        self.pieces = {piece: self._median(piece) for piece in PIECES}
        self.since, self.next_piece = 0.0, "short"
        self.last = time.perf_counter()

    def wait(self, i: int) -> None:
        """Return when gap `i` has passed since the last answer (measuring the speed again within it, due)."""
        self.since += self.gaps[i]
        if self.since >= REMEASURE and self.gaps[i] >= 2:  # a measurement fits in this gap
            piece = self.next_piece
            self.times[piece] = [*self.times[piece], speed(piece, 1)][-KEPT:]
            self.pieces[piece] = self._median(piece)
            self.since, self.next_piece = 0.0, "long" if piece == "short" else "short"
        left = self.last + self.seconds(self.gaps[i]) * self.random.lognormvariate(-JITTER ** 2 / 2, JITTER)
        left -= time.perf_counter()
        if left > 0 and math.isfinite(left):
            time.sleep(left)

    def seconds(self, gap: float) -> float:
        """The wall time a gap of `gap` units takes here now (before jitter)."""
        (short_cpu, short_stretch), (long_cpu, long_stretch) = self.pieces["short"], self.pieces["long"]
        cpu = gap * long_cpu
        if cpu <= short_cpu or long_cpu <= short_cpu:
            return cpu * short_stretch
        if cpu >= long_cpu:
            return cpu * long_stretch
        share = math.log(cpu / short_cpu) / math.log(long_cpu / short_cpu)
        return cpu * math.exp((1 - share) * math.log(short_stretch) + share * math.log(long_stretch))

    def _median(self, piece: str) -> tuple[float, float]:
        """(CPU, wall / CPU) of a piece, each the median of its last measurements."""
        cpu = statistics.median(t[0] for t in self.times[piece])
        return cpu, max(self.least_stretch, statistics.median(t[1] / max(t[0], 1e-6) for t in self.times[piece]))

    def answered(self) -> None:
        self.last = time.perf_counter()
