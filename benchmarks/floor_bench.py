"""Benchmark of a grade's CPU against its floor: the bare e2e compute of the same runs (issue 14).

    python benchmarks/floor_bench.py              # median of 3 of each measurement
    python benchmarks/floor_bench.py --repeat 1

Measured, each in a fresh process:
- bare e2e: the four e2e tests of the reference measured in-process (no sandbox, no remote calls, the
  trainings ptx shares with kl_penalty done once, as in a grade), CPU time after the imports;
- torch import: CPU time of `import torch`;
- grade: `python -m autograder grade`, CPU of the whole process tree (user + system of it and every
  descendant it waited for), on one CPU (`taskset -c 0`: one judge lane) and on two, of the reference
  trained (AUTOGRADER_REPLAY=0: every run trains, as for a submission whose answers differ from the reference's)
  and of the reference as graded (its runs replayed, grading/replay.py).
The target: grade CPU <= 1.15 x bare e2e + one torch import per process that imports it (the judge, and one
sandboxed child per lane; the second lane is forked from the judge and imports nothing).
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

BARE = """
import time, torch
torch.set_num_threads(1)
from autograder.judge import e2e
from autograder.lab import config
from autograder.lab.reference import load_reference
from autograder.lab.paths import use_world
use_world()
import training
cfg = config.load()
tests = e2e.load_all()
parts = training.Parts.from_module(load_reference())
from lab12.baseline import reference_rm, rm_key, sft_evaluation
reference_rm(*rm_key(cfg.e2e))  # shipped: what a grade reads too
started, memo = time.process_time(), {}
for name in cfg.e2e:
    tests[name].measure(cfg, cfg.e2e[name], parts, memo)
print(time.process_time() - started)
"""
TORCH = "import time; t = time.process_time(); import torch; print(time.process_time() - t)"


def cpu_of(cmd: list[str], env: dict | None = None) -> float:
    """CPU seconds of `cmd` and its waited-for descendants."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(cmd, cwd=ROOT, check=True, stdout=subprocess.DEVNULL, env=env)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def printed(code: str) -> float:
    return float(subprocess.run([sys.executable, "-c", code], cwd=ROOT, check=True, capture_output=True,
                                text=True).stdout.split()[-1])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    med = statistics.median
    bare = med(printed(BARE) for _ in range(args.repeat))
    torch_import = med(printed(TORCH) for _ in range(args.repeat))
    out = tempfile.mkdtemp(prefix="floor-bench-")
    print(f"bare e2e compute {bare:.1f} s CPU; torch import {torch_import:.2f} s CPU "
          f"(load average {os.getloadavg()[0]:.1f})")
    print(f"{'grade':44s} {'CPU s':>6s} {'bound s':>8s} {'ratio to bare':>14s}")
    ok = True
    grade = [sys.executable, "-m", "autograder", "grade", "solutions/rlhf.py", "--out", out, "--quiet"]
    for who, env in (("trained (AUTOGRADER_REPLAY=0)", {**os.environ, "AUTOGRADER_REPLAY": "0"}), ("replayed", None)):
        for label, prefix, processes in (("one CPU, 1 lane", ["taskset", "-c", "0"], 2), ("two CPUs, 2 lanes", [], 3)):
            cpu = med(cpu_of(prefix + grade, env) for _ in range(args.repeat))
            bound = 1.15 * bare + processes * torch_import
            ok &= cpu <= bound
            print(f"{who + ', ' + label:44s} {cpu:6.1f} {bound:8.1f} {cpu / bare:14.2f}"
                  f"{'' if cpu <= bound else '  OVER'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
