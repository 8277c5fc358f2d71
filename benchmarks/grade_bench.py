"""Benchmark of single grades (issue 3's targets): wall time, CPU time, peak memory of the process tree.

    python benchmarks/grade_bench.py            # reference in full, property tests only, blank starter
    python benchmarks/grade_bench.py --repeat 3
    python benchmarks/grade_bench.py --case "reference, trained (AUTOGRADER_REPLAY=0)"

Each case runs `python -m autograder grade` as a subprocess. CPU time is user + system of it and of
every descendant it waited for (sandbox children, the second judge lane). Peak memory is the largest
sum, over the process tree, of each process's proportional set size (PSS: shared pages such as torch's
libraries are split between the processes that map them), sampled every 50 ms.
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TRAINED = {"AUTOGRADER_REPLAY": "0"}  # every run trains: the cost of answers unlike the reference's
CASES = {  # name -> (submission, --only, extra environment, targets: wall s, cpu s, peak MB)
    "reference, full grade": ("solutions/rlhf.py", "", {}, (20, 30, 768)),  # issue 14: idle 2 cores
    "reference, trained (AUTOGRADER_REPLAY=0)": ("solutions/rlhf.py", "", TRAINED, (20, 30, 768)),
    "reference, property tests only": ("solutions/rlhf.py", "rm_loss,gae,ppo_clip,kl", {}, (10, None, 768)),
    "blank starter, full grade": ("assignment/rlhf.py", "", {}, (10, None, 768)),
}


def descendants(pid: int) -> list[int]:
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    ppid = int(f.read().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(ppid, []).append(int(entry))
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        todo += children.get(p, [])
    return out


def pss_mb(pids: list[int]) -> float:
    total = 0
    for p in pids:
        try:
            with open(f"/proc/{p}/smaps_rollup") as f:
                total += next(int(line.split()[1]) for line in f if line.startswith("Pss:"))
        except (OSError, StopIteration):
            pass
    return total / 1024


def measure(submission: str, only: str, env: dict) -> tuple[float, float, float]:
    out = tempfile.mkdtemp(prefix="grade-bench-")
    cmd = [sys.executable, "-m", "autograder", "grade", submission, "--out", out, "--quiet"]
    if only:
        cmd += ["--only", only]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=ROOT, env=env)
    peak = 0.0
    stop = threading.Event()

    def sample():
        nonlocal peak
        while not stop.is_set():
            peak = max(peak, pss_mb(descendants(proc.pid)))
            time.sleep(0.05)

    sampler = threading.Thread(target=sample)
    sampler.start()
    code = proc.wait()
    wall = time.perf_counter() - t0
    stop.set()
    sampler.join()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if code != 0:
        raise SystemExit(f"grade failed with exit code {code}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, peak


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--case", choices=list(CASES), action="append", help="run only these cases")
    args = parser.parse_args()
    print(f"{'case':34s} {'wall s':>7s} {'cpu s':>7s} {'peak MB':>8s}   targets (wall, cpu, MB)")
    ok = True
    for name in args.case or CASES:
        submission, only, extra, (t_wall, t_cpu, t_mem) = CASES[name]
        for _ in range(args.repeat):
            wall, cpu, peak = measure(submission, only, {**os.environ, **extra})
            within = wall <= t_wall and (t_cpu is None or cpu <= t_cpu) and peak <= t_mem
            ok &= within
            print(f"{name:34s} {wall:7.1f} {cpu:7.1f} {peak:8.0f}   ({t_wall}, {t_cpu or '-'}, {t_mem})"
                  f"{'' if within else '  OVER'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
