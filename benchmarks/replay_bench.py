"""Benchmark of the replays alone (issue 30): the reference answering every shipped run's recorded calls, batched
(as a grade sends them) and one call per round trip (remote.BATCH_ASKS = 1, as before batches), interleaved.

    .venv/bin/python benchmarks/replay_bench.py                       # Lab 12, 3 repeats of each
    AUTOGRADER_LAB=labs/lab13 .venv/bin/python benchmarks/replay_bench.py --repeat 5

Printed per run: the calls replayed, the round trips (requests the judge sent the child: a batch is one), wall
seconds, the judge's CPU (this process) and the child's (its whole tree, from /proc), in seconds. One child serves
every repeat (started and warmed before the first), so the numbers are the replay's own.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from autograder.lab import config, registry  # noqa: E402
from autograder.lab.paths import REFERENCE  # noqa: E402
from autograder.replay import runs, shipped  # noqa: E402
from autograder.sandbox import remote  # noqa: E402
from autograder.sandbox.remote import RemoteSubmission  # noqa: E402
from autograder.sandbox.sandbox import Child  # noqa: E402


def replay_all(sub: RemoteSubmission, cfg: config.Config) -> tuple[int, int, float, float, float]:
    """(calls, round trips, wall s, judge CPU s, child CPU s) of replaying every shipped run."""
    trips = [0]
    send, request = Child.send, Child.request

    def counted(method):
        def wrapper(self, *args, **kwargs):
            trips[0] += 1
            return method(self, *args, **kwargs)
        return wrapper
    Child.send, Child.request = counted(send), counted(request)  # type: ignore[method-assign]
    try:
        sub.begin_test()
        child = sub._ensure_child()
        cpu, wall, judge = child.cpu_seconds(), time.perf_counter(), time.process_time()
        calls = 0
        for run in shipped.shipped_runs().values():
            assert runs.answers_match(run, sub.parts(), cfg.calibration.replay_rtol, cfg.calibration.replay_atol)
            calls += run.n_calls
        return (calls, trips[0], time.perf_counter() - wall, time.process_time() - judge,
                child.cpu_seconds() - cpu)
    finally:
        Child.send, Child.request = send, request  # type: ignore[method-assign]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    torch.set_num_threads(1)
    os.chdir(ROOT)
    cfg = config.load()
    registry.lab()
    sub = RemoteSubmission(REFERENCE, cfg.limits)
    batch = remote.BATCH_ASKS
    try:
        replay_all(sub, cfg)  # starts the child, warms both sides
        for _ in range(args.repeat):
            for name, asks in (("batched", batch), ("one by one", 1)):
                remote.BATCH_ASKS = asks
                calls, trips, wall, judge, child = replay_all(sub, cfg)
                print(f"{name:10s}  calls {calls}  round trips {trips:5d}  wall {wall:6.2f} s  "
                      f"judge CPU {judge:5.2f} s  child CPU {child:5.2f} s  both {judge + child:5.2f} s", flush=True)
    finally:
        sub.close()


if __name__ == "__main__":
    main()
