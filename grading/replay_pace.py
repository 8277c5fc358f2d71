"""The pace of a replay: the recorded calls reach the submission as far apart as in its own training.

    recorder = Recorder(functions)      # while the reference's run is recorded
    gaps = recorder.stop()              # before each call, and after the last: judge CPU, in speed units
    pacer = Pacer(gaps)                 # in a grade's replay of that run
    pacer.wait(i); ...answer call i...; pacer.answered()
    pacer.wait(len(gaps) - 1)           # the training's last step and evaluation

A child can time the gaps between the calls it answers with its own clock, and compare them with its own
speed: sent back to back (0.7-2 ms apart, against 8-29 ms in a training), a replay would tell a
submission that its answers are not being trained on. So a recording keeps, before each call, the CPU
time the judge spent since the previous answer (sampling, forward and backward passes, the optimiser),
in units of a piece of that training measured in the same process (`speed("long")`: a forward and
backward pass of the SFT policy over one sampled batch, ~8 ms). A replay measures that piece and a short
one on this machine, in CPU and wall time, as contended as a training would be now (again every REMEASURE
calls, inside a gap), and waits each gap as long as that much CPU takes here (Pacer.seconds), times a
random factor (JITTER, log-normal, mean 1). Waiting costs no CPU: a replayed run takes about as long as
its training, for a fraction of its CPU (docs/calibration.md).
"""

from __future__ import annotations

import functools
import math
import random
import statistics
import time
from collections.abc import Iterable

import torch

from autograder.paths import use_world

use_world()
import tinylm  # noqa: E402

JITTER = 0.15        # the standard deviation of a gap's log (two trainings of one run differ by ~0.1-0.25)
REMEASURE = 180      # calls (10 PPO iterations) between two measurements of this machine's speed
KEPT = 3             # a replay uses the median of each piece's last KEPT measurements
ROWS = {"short": 1, "long": 32}  # the pieces: a forward pass over 1 row (~1.4 ms), forward + backward over 32 (~8 ms)


@functools.lru_cache(maxsize=1)
def _workload() -> tuple[torch.nn.Module, dict]:
    policy = tinylm.load_sft()
    return policy, {piece: tinylm.sample(policy, tinylm.make_batch(rows, random.Random(0))[0], temperature=1.0)
                    for piece, rows in ROWS.items()}


def speed(piece: str, reps: int) -> tuple[float, float]:
    """(thread CPU, wall) seconds of one piece of training ("short" or "long"), median of `reps` runs."""
    policy, batches = _workload()
    times = []
    for _ in range(reps):
        cpu, wall = time.thread_time(), time.perf_counter()
        if piece == "long":
            tinylm.sequence_logprobs(policy, batches[piece]).sum().backward()
        else:
            with torch.no_grad():
                tinylm.sequence_logprobs(policy, batches[piece])
        times.append((time.thread_time() - cpu, time.perf_counter() - wall))
    policy.zero_grad(set_to_none=True)
    return statistics.median(t[0] for t in times), statistics.median(t[1] for t in times)


class Recorder:
    """Times a recorded training: the judge's CPU before each call of `functions` (RemoteFunctions) and
    after the last, in units of the long piece's CPU (measured once per process, median of 11)."""

    def __init__(self, functions: Iterable):
        self.unit = _recording_unit()
        self.gaps: list[float] = []
        self.functions = list(functions)
        self.last = time.thread_time()
        for function in self.functions:
            function.answer = self._timed(function.answer)

    def _timed(self, answer):
        def timed(*args, **kwargs):
            self.gaps.append(time.thread_time() - self.last)
            try:
                return answer(*args, **kwargs)
            finally:
                self.last = time.thread_time()
        return timed

    def stop(self) -> list[float]:
        """The gaps (the last one: from the last answer to the end of the training), in speed units."""
        tail = time.thread_time() - self.last
        for function in self.functions:
            del function.answer  # the instance's wrapper: the class's method again
        return [gap / self.unit for gap in [*self.gaps, tail]]


@functools.lru_cache(maxsize=1)
def _recording_unit() -> float:
    return speed("long", 11)[0]


class Pacer:
    """Waits before each replayed call as long as the recorded training computed before it, at this
    machine's speed now, with jitter (randomness the child cannot predict).

    A gap of c seconds of CPU here takes c x the stretch contention gives a burst of that length: both
    pieces are timed just after the judge wakes (at the start of a gap), as a training's gaps begin, so
    that a short gap stays short on a busy machine (a woken process runs a short burst before it is
    preempted) and a long one stretches as the long piece does; between and beyond the two pieces the
    stretch is interpolated in log CPU, and held."""

    def __init__(self, gaps: list[float]):
        self.gaps, self.random = gaps, random.SystemRandom()
        self.times = {piece: [speed(piece, KEPT)] for piece in ROWS}
        self.pieces = {piece: self._median(piece) for piece in ROWS}
        self.since, self.next_piece = 0, "short"
        self.last = time.perf_counter()

    def wait(self, i: int) -> None:
        """Return when gap `i` has passed since the last answer (measuring the speed again within it, due)."""
        self.since += 1
        if self.since >= REMEASURE and self.gaps[i] >= 2:  # a measurement fits in this gap
            piece = self.next_piece
            self.times[piece] = [*self.times[piece], speed(piece, 1)][-KEPT:]
            self.pieces[piece] = self._median(piece)
            self.since, self.next_piece = 0, "long" if piece == "short" else "short"
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
        return cpu, max(1.0, statistics.median(t[1] / max(t[0], 1e-6) for t in self.times[piece]))

    def answered(self) -> None:
        self.last = time.perf_counter()
