"""Benchmark of `grade-all`: throughput with 1 and 2 workers, a rerun with nothing changed, worker memory.

    python benchmarks/grade_all_bench.py                      # 20 mixed submissions, 100 for the rerun
    python benchmarks/grade_all_bench.py --students 0 --rerun-students 100  # only the rerun
    python benchmarks/grade_all_bench.py --students 0 --rerun-students 0 --full 10  # 10 full grades, 2 workers
    sudo python benchmarks/grade_all_bench.py --students 0 --rerun-students 0 --full 20 --record  # README's row

A mixed class cycles through: correct (the reference), blank (the starter), partly done (the
reference with one function raising NotImplementedError), a mistake (the reference with the GAE
recursion run forwards), broken (a syntax error), adversarial (exits at import), and a notebook.
Each submission gets a distinct comment line, so every one is graded. The throughput batches use
`--only` (property tests, default gae,kl): a full grade with the end-to-end tests takes minutes per
submission. Printed: seconds and submissions per minute per worker count, their ratio, the rerun's
seconds and whether it imported torch, and the peak resident memory of a worker (the judge) and of
the largest sandboxed child, from the records the workers send back. The full grades run in cgroup v1 groups of
their own when this runs as root (benchmarks/cgroup_v1.py: the CPU of the whole process tree, sandboxed
children included, and its peak memory; else the CPU of the workers rusage sees), with the load average before
and after; `--record` writes them to benchmarks/results.json as the case "grade-all-full" (README.md quotes it).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))
import results_file  # noqa: E402
from cgroup_v1 import Groups, available  # noqa: E402

REFERENCE, STARTER = ROOT / "solutions" / "rlhf.py", ROOT / "assignment" / "rlhf.py"
FUNCTIONS = ("bradley_terry_loss", "ranking_loss", "compute_gae", "ppo_policy_loss", "ppo_value_loss",
             "kl_estimate", "shaped_rewards")


def partly_done(source: str, function: str) -> str:
    start = source.index("### BEGIN SOLUTION", source.index(f"def {function}("))
    end = source.index("### END SOLUTION", start) + len("### END SOLUTION")
    return source[:start] + "raise NotImplementedError" + source[end:]


def notebook(source: str) -> str:
    cell = {"cell_type": "code", "metadata": {}, "execution_count": None, "outputs": [], "source": [source]}
    return json.dumps({"cells": [cell], "metadata": {}, "nbformat": 4, "nbformat_minor": 5})


def make_class(folder: Path, n: int) -> None:
    """`n` mixed submissions, one folder per student."""
    reference, starter = REFERENCE.read_text(), STARTER.read_text()
    forwards = reference.replace("reversed(range(", "(range(", 1)
    kinds = [("rlhf.py", lambda i: reference), ("rlhf.py", lambda i: starter),
             ("rlhf.py", lambda i: partly_done(reference, FUNCTIONS[(i // 7) % len(FUNCTIONS)])),
             ("rlhf.py", lambda i: forwards),
             ("rlhf.py", lambda i: reference.replace("def compute_gae(", "def compute_gae((", 1)),
             ("rlhf.py", lambda i: "import os\nos._exit(3)\n"),
             ("lab12.ipynb", lambda i: reference)]
    for i in range(n):
        name, make = kinds[i % len(kinds)]
        text = make(i) + f"\n# student {i}\n"
        path = folder / f"student{i:03d}" / name
        path.parent.mkdir(parents=True)
        path.write_text(notebook(text) if name.endswith(".ipynb") else text)


def grade_all(submissions: Path, out: Path, *args: str, groups: Groups | None = None) -> float:
    """Wall seconds of one `grade-all` run (its CPU time goes to RUSAGE_CHILDREN, and to `groups`)."""
    started = time.monotonic()
    run = subprocess.run([sys.executable, "-m", "autograder", "grade-all", str(submissions), "--out", str(out), *args],
                         cwd=ROOT, capture_output=True, text=True, preexec_fn=groups.enter if groups else None)
    if run.returncode != 0:
        sys.exit(f"grade-all failed:\n{run.stderr}")
    return time.monotonic() - started


def records(out: Path) -> list[dict]:
    return [json.loads(p.read_text()) for p in sorted(out.glob("*/grade.json"))]


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--students", type=int, default=20, help="size of the throughput batch (0: skip)")
    parser.add_argument("--only", default="gae,kl", help="tests of the throughput batch (first tags)")
    parser.add_argument("--rerun-students", type=int, default=100, help="size of the rerun class (0: skip)")
    parser.add_argument("--rerun-only", default="gae", help="tests used to grade the rerun class once")
    parser.add_argument("--full", type=int, default=0,
                        help="also grade this many copies of the reference in full with 2 workers (issue 30: 20)")
    parser.add_argument("--record", action="store_true", help="write the full grades' figures to results.json")
    args = parser.parse_args()
    print(f"machine: {os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f} at start")
    with tempfile.TemporaryDirectory(prefix="lab12-bench-") as tmp:
        tmp = Path(tmp)
        if args.students:
            throughput(tmp, args.students, args.only)
        if args.rerun_students:
            rerun(tmp, args.rerun_students, args.rerun_only)
        if args.full:
            full(tmp, args.full, args.record)
    print(f"load average {os.getloadavg()[0]:.1f} at the end")
    return 0


def throughput(tmp: Path, students: int, only: str) -> None:
    """The same mixed class graded from scratch with 1 and with 2 workers."""
    make_class(tmp / "class", students)
    rates = {}
    for workers in (1, 2):
        cpu = children_cpu()
        seconds = grade_all(tmp / "class", tmp / f"out{workers}", "--only", only, "--workers", str(workers))
        cpu = children_cpu() - cpu
        done = records(tmp / f"out{workers}")
        rates[workers] = len(done) / seconds * 60
        statuses = {s: sum(r["status"] == s for r in done) for s in ("graded", "failed")}
        print(f"{workers} worker(s): {students} submissions (--only {only}) in {seconds:.1f} s = "
              f"{rates[workers]:.1f}/min; CPU {cpu:.0f} s; {statuses}; load average {os.getloadavg()[0]:.1f}")
    print(f"throughput ratio 2 workers / 1 worker: {rates[2] / rates[1]:.2f}x (target >= 1.8)")
    peak = [r for r in records(tmp / "out1") + records(tmp / "out2") if "worker_peak_mb" in r]
    print(f"peak RSS of a worker (judge): {max(r['worker_peak_mb'] for r in peak):.0f} MB (target <= 768); "
          f"largest sandboxed child: {max(r['child_peak_mb'] for r in peak):.0f} MB")


def full(tmp: Path, students: int, record: bool = False) -> None:
    """Full grades (the e2e tests included) of copies of the reference, 2 workers (one judge lane each)."""
    for i in range(students):
        path = tmp / "full" / f"student{i:03d}" / "rlhf.py"
        path.parent.mkdir(parents=True)
        path.write_text(REFERENCE.read_text() + f"\n# student {i}\n")
    groups = None if available() else Groups(f"grade-all-bench-{os.getpid()}-{time.monotonic_ns()}")
    load, cpu, peak, oom = results_file.loads(), children_cpu(), 0.0, 0
    try:
        seconds = grade_all(tmp / "full", tmp / "outfull", "--workers", "2", groups=groups)
        cpu = children_cpu() - cpu
        if groups is not None:
            cpu, peak, oom = groups.read()
    finally:
        if groups is not None:
            groups.remove()
    done = records(tmp / "outfull")
    scores = sorted({r.get("score") for r in done}, key=str)
    rate = len(done) / seconds * 60
    print(f"2 workers: {students} full grades in {seconds:.1f} s = {rate:.1f} grades/min (target >= 15); "
          f"CPU {cpu:.0f} s ({cpu / students:.1f} s a grade, {'the whole tree' if groups else 'rusage'}); "
          f"peak {peak:.0f} MB; scores {scores}; load {load:.1f}-{results_file.loads():.1f}")
    if record and groups is not None:
        results_file.record("grade-all-full", f"`grade-all`, {students} replayed full grades of Lab 12's reference, "
                            "2 workers", [{"wall": round(seconds, 2), "cpu": round(cpu, 2), "peak_mb": round(peak),
                                           "oom_kills": oom, "load_before": load, "load_after": results_file.loads(),
                                           "score": scores[0] if len(scores) == 1 else str(scores),
                                           "per_minute": round(rate, 2)}])
        print("recorded in benchmarks/results.json")


def rerun(tmp: Path, students: int, only: str) -> None:
    """Grade a class once, then time the same command again with nothing changed."""
    make_class(tmp / "big", students)
    seconds = grade_all(tmp / "big", tmp / "outbig", "--only", only)
    print(f"graded {students} submissions (--only {only}) in {seconds:.1f} s")
    probe = ("import sys, time; t = time.monotonic(); from autograder.__main__ import main; "
             f"main(['grade-all', {str(tmp / 'big')!r}, '--out', {str(tmp / 'outbig')!r}, '--only', {only!r}]); "
             "print('torch' in sys.modules, time.monotonic() - t)")
    started = time.monotonic()
    run = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True)
    wall = time.monotonic() - started
    torch_loaded, inner = run.stdout.split()[-2:]
    print(f"rerun with nothing changed, {students} graded submissions: {wall:.2f} s wall (interpreter start "
          f"included; {float(inner):.2f} s in grade-all), torch imported: {torch_loaded} (target < 5 s); "
          f"{run.stderr.splitlines()[0]}")


if __name__ == "__main__":
    sys.exit(main())
