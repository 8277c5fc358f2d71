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
in units of a small piece of that training measured in the same process (`speed`: a forward and backward
pass of the SFT policy over one sampled batch, ~9 ms). A replay measures the same piece on this machine
in wall time, as contended as a training would be now (again every REMEASURE calls, inside a gap), and
waits each gap times that, times a random factor (JITTER, log-normal, mean 1). Waiting costs no CPU:
a replayed run takes about as long as its training, for a fraction of its CPU (docs/calibration.md).
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
KEPT = 3             # a replay waits by the median of the last KEPT measurements


@functools.lru_cache(maxsize=1)
def _workload() -> tuple[torch.nn.Module, dict]:
    policy = tinylm.load_sft()
    prompts, _ = tinylm.make_batch(32, random.Random(0))
    return policy, tinylm.sample(policy, prompts, temperature=1.0)


def speed(reps: int) -> tuple[float, float]:
    """(thread CPU, wall) seconds of the unit piece of training, median of `reps` runs."""
    policy, batch = _workload()
    times = []
    for _ in range(reps):
        cpu, wall = time.thread_time(), time.perf_counter()
        tinylm.sequence_logprobs(policy, batch).sum().backward()
        times.append((time.thread_time() - cpu, time.perf_counter() - wall))
    policy.zero_grad(set_to_none=True)
    return statistics.median(t[0] for t in times), statistics.median(t[1] for t in times)


class Recorder:
    """Times a recorded training: the judge's CPU before each call of `functions` (RemoteFunctions) and
    after the last, in units of `speed` (measured once per process: its CPU, median of 11)."""

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
    return speed(11)[0]


class Pacer:
    """Waits before each replayed call as long as the recorded training computed before it, at this
    machine's speed now, with jitter (randomness the child cannot predict)."""

    def __init__(self, gaps: list[float]):
        self.gaps, self.random = gaps, random.SystemRandom()
        self.units = [speed(KEPT)[1]]
        self.unit = self.units[0]
        self.last = time.perf_counter()
        self.since = 0  # calls since the last measurement

    def wait(self, i: int) -> None:
        """Return when gap `i` has passed since the last answer (measuring the speed again within it, due)."""
        scale = self.random.lognormvariate(-JITTER ** 2 / 2, JITTER)
        self.since += 1
        if self.since >= REMEASURE and self.gaps[i] >= 2:  # the measurement fits in this gap
            self.units = [*self.units, speed(1)[1]][-KEPT:]
            self.unit, self.since = statistics.median(self.units), 0
        left = self.last + self.gaps[i] * self.unit * scale - time.perf_counter()
        if left > 0 and math.isfinite(left):
            time.sleep(left)

    def answered(self) -> None:
        self.last = time.perf_counter()
