"""Benchmark of one judge <-> sandboxed-child round trip (issue 14): wall and CPU time per call.

    .venv/bin/python benchmarks/round_trip_bench.py                 # 2000 calls
    taskset -c 0 .venv/bin/python benchmarks/round_trip_bench.py    # one CPU, as on a small container
    .venv/bin/python benchmarks/round_trip_bench.py --calls 5000 --repeat 3

It starts the reference submission in the sandbox as a grade does (RemoteSubmission, grading.yaml's
limits) and calls ppo_policy_loss on (16, 4) tensors with a gradient request, the call PPO e2e runs
make most. Printed per repeat: wall ms per call, the judge's CPU ms per call (this process's user +
system) and the child's CPU ms per call (user + system, from /proc/PID/stat, of every process of the
child's tree). On one CPU the wall time is about the sum of the two CPU times; on a shared machine
prefer the CPU numbers.
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

from autograder.lab import config  # noqa: E402
from autograder.sandbox.remote import RemoteSubmission  # noqa: E402


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of one process, in seconds."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def measure(sub: RemoteSubmission, calls: int) -> tuple[float, float, float]:
    """(wall, judge CPU, child CPU) in ms per call of ppo_policy_loss with a gradient."""
    x, m = torch.zeros(16, 4), torch.ones(16, 4)
    sub.call("ppo_policy_loss", x, x, x, m)  # starts the child and imports the submission
    tree = sub._child._tree()
    before = [cpu_seconds(p) for p in tree]
    wall, judge = time.perf_counter(), time.process_time()
    for _ in range(calls):
        sub.call("ppo_policy_loss", x, x, x, m, grad=(0,))
    after = [cpu_seconds(p) for p in tree]
    return ((time.perf_counter() - wall) / calls * 1e3, (time.process_time() - judge) / calls * 1e3,
            sum(b - a for a, b in zip(before, after)) / calls * 1e3)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--repeat", type=int, default=1)
    args = parser.parse_args()
    torch.set_num_threads(1)
    os.chdir(ROOT)
    sub = RemoteSubmission(Path("solutions/rlhf.py"), config.load().limits)
    try:
        for _ in range(args.repeat):
            wall, judge, child = measure(sub, args.calls)
            print(f"wall {wall:.3f} ms/call   judge CPU {judge:.3f} ms/call   child CPU {child:.3f} ms/call")
    finally:
        sub.close()


if __name__ == "__main__":
    main()
