"""Benchmark of single full grades: wall time, CPU of the whole process tree, peak memory, phase by phase.

    sudo python benchmarks/grade_bench.py                    # every case once; writes benchmarks/results.json
    python benchmarks/grade_bench.py --repeat 3 --case lab12-reference --case lab13-reference
    python benchmarks/grade_bench.py --readme                # also rewrite README.md's block from results.json
    python benchmarks/grade_bench.py --render                # only rewrite README.md's block (no run)
    python benchmarks/grade_bench.py --root /tmp/old-checkout --no-write   # another checkout (before/after)

Each run is `python -m autograder grade SUBMISSION --out DIR` (through benchmarks/phases.py, which times each
phase of the grade) in cgroup v1 groups of its own (benchmarks/cgroup_v1.py): the CPU is cpuacct.usage, every
process of the grade (the judge, its second lane, the sandboxed children and the secrets probe, reaped or not;
rusage misses the children a judge never waits for), the peak memory.max_usage_in_bytes (page cache the run
reads included). The "container" case adds a CPU quota of 0.5 CPU and a 768 MB memory limit, as Gradescope's
default container (without the Docker level of benchmarks/container_bench.py). The machine's load average is
recorded before and after each run: these figures are only as idle as the machine was.

results.json holds, per case, its runs (the phases of each) and when they ran; a run of some cases keeps the
others'. README.md quotes it between the markers below (tests/test_bench_results.py checks the quote against
the file, and the file against the replay format it measured).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))
import phases  # noqa: E402
import results_file  # noqa: E402
from cgroup_v1 import Groups, available  # noqa: E402
from results_file import RESULTS, loads  # noqa: E402

README = ROOT / "README.md"
BEGIN, END = "<!-- grade_bench.py results: begin -->", "<!-- grade_bench.py results: end -->"
PHASE_ORDER = ("judge imports", "preflight (probe, secrets search)", "secrets search", "probe start",
               "second lane start (imports, fork)", "child start", "unit checks", "e2e tests", "replays", "plots",
               "reports", "whole command")


@dataclass(frozen=True)
class Case:
    title: str
    lab: str                       # the lab folder, relative to the checkout
    submission: str                # "solutions", "assignment" (the lab's reference, its blank starter) or
                                   # "bank:ID": the reference with the bank mistake ID (its submission_source)
    cpus: float | None = None      # a CPU quota (cgroup v1 cpu.cfs_quota_us)
    memory_mb: int | None = None   # a memory limit (memory.limit_in_bytes)
    env: dict = field(default_factory=dict)


CASES = {
    "lab12-reference": Case("Lab 12 reference, full grade", ".", "solutions"),
    "lab13-reference": Case("Lab 13 reference, full grade", "labs/lab13", "solutions"),
    "lab12-starter": Case("Lab 12 blank starter, full grade", ".", "assignment"),
    "lab12-reference-container": Case("Lab 12 reference, 0.5 CPU / 768 MB", ".", "solutions", 0.5, 768),
    "lab12-mistake-container": Case("Lab 12 bank mistake gae.forward_recursion (trained), 0.5 CPU / 768 MB", ".",
                                    "bank:gae.forward_recursion", 0.5, 768),
}
EXTRA = {  # run only when named with --case
    "lab12-trained-container": Case("Lab 12 reference trained (AUTOGRADER_REPLAY=0), 0.5 CPU / 768 MB", ".",
                                    "solutions", 0.5, 768, {"AUTOGRADER_REPLAY": "0"}),
}
# cases the other benchmarks record in results.json (README.md quotes them too)
OTHER_CASES = {"lab12-reference-docker": "container_bench.py --conditions 0.5:768 --repeat 3 --record",
               "grade-all-full": "grade_all_bench.py --students 0 --rerun-students 0 --full N --record"}


def run_once(name: str, case: Case, root: Path) -> dict:
    """One grade of `case` in the checkout `root`, in groups of its own: its numbers and its phases."""
    lab = (root / case.lab).resolve()
    filename = yaml.safe_load((lab / "grading.yaml").read_text())["submission"]
    env = {k: v for k, v in os.environ.items() if not k.startswith("AUTOGRADER_")}
    env.update(case.env)
    if lab != root.resolve():
        env["AUTOGRADER_LAB"] = str(lab)
    with tempfile.TemporaryDirectory(prefix="grade-bench-") as tmp:
        log, out = Path(tmp) / "phases.jsonl", Path(tmp) / "out"
        submission = lab / case.submission / filename
        if case.submission.startswith("bank:"):
            submission = Path(tmp) / "upload" / filename
            submission.parent.mkdir()
            submission.write_text(bank_source(root, env, case.submission[5:]))
        command = [sys.executable, str(root / "benchmarks" / "phases.py"), str(log), "grade", str(submission),
                   "--out", str(out), "--quiet"]
        groups = Groups(f"grade-bench-{os.getpid()}-{time.monotonic_ns()}", case.cpus, case.memory_mb)
        load = loads()
        try:
            started = time.monotonic()
            done = subprocess.run(command, cwd=root, env=env, preexec_fn=groups.enter, capture_output=True, text=True)
            wall = time.monotonic() - started
            cpu, peak, oom = groups.read()
        finally:
            groups.remove()
        if done.returncode not in (0, 1) or not (out / "results.json").exists():  # 1: failures found (the starter)
            raise SystemExit(f"{name}: exit {done.returncode}\n{done.stdout[-2000:]}{done.stderr[-2000:]}")
        score = json.loads((out / "results.json").read_text())["score"]
        return {"wall": round(wall, 2), "cpu": round(cpu, 2), "peak_mb": round(peak), "oom_kills": oom,
                "load_before": load, "load_after": loads(), "score": score,
                "phases": {k: {m: round(v, 3) for m, v in row.items()} for k, row in phases.summarise(log).items()}}


def bank_source(root: Path, env: dict, entry: str) -> str:
    """The submission of the bank entry `entry` of the checkout `root`'s lab (autograder/lab/bank.py)."""
    code = ("import sys; from autograder.lab import bank; "
            f"sys.stdout.write(bank.submission_source(next(e for e in bank.load_all() if e.id == {entry!r})))")
    return subprocess.run([sys.executable, "-c", code], cwd=root, env=env, capture_output=True, text=True,
                          check=True).stdout


def render(results: dict) -> str:
    """README.md's block: the cases' medians and ranges, then the phases of Lab 12's reference grade."""
    lines = [BEGIN, "",
             f"`sudo python benchmarks/grade_bench.py` ({results['machine']}; median of each case's runs, range in "
             "brackets; CPU: cpuacct of the grade's whole process tree, sandboxed children "
             "included; peak: the tree's memory cgroup, page cache included; load: the 1-minute load average "
             "before and after the runs, other work on the machine included). The rows "
             + ", ".join(f"`{k}`" for k in OTHER_CASES) + " come from `sudo python benchmarks/"
             + "`, `sudo python benchmarks/".join(OTHER_CASES.values()) + "`:", "",
             "| case | measured | runs | wall | CPU (tree) | peak memory | load | score |",
             "|---|---|---|---|---|---|---|---|"]
    for case in results["cases"].values():
        runs = case["runs"]
        loads = [r[k] for r in runs for k in ("load_before", "load_after")]
        lines.append(f"| {case['title']} | {case['date']} | {len(runs)} | {_spread(runs, 'wall')} | "
                     f"{_spread(runs, 'cpu')} | {max(r['peak_mb'] for r in runs)} MB | "
                     f"{min(loads):.1f}-{max(loads):.1f} | {_score(runs)} |")
    reference = results["cases"].get("lab12-reference")
    if reference:
        lines += ["", "Where Lab 12's reference grade goes (its last run; judge CPU: the judge process's own, without "
                  "its sandboxed child's; a phase inside another counts in both; lane 2 is the forked second judge):",
                  "", "| phase | wall, lane 1 | judge CPU, lane 1 | wall, lane 2 | judge CPU, lane 2 |",
                  "|---|---|---|---|---|"]
        found = reference["runs"][-1]["phases"]
        for phase in [p for p in PHASE_ORDER if p in found] + sorted(set(found) - set(PHASE_ORDER)):
            row = found[phase]
            lines.append(f"| {phase} | {row['wall']:.2f} s | {row['cpu']:.2f} s | {row['wall 2']:.2f} s | "
                         f"{row['cpu 2']:.2f} s |")
    return "\n".join([*lines, "", END])


def _score(runs: list[dict]) -> str:
    """The last run's score, and for grade-all its rate (grades a minute)."""
    run = runs[-1]
    return f"{run['score']}" + (f"; {run['per_minute']:.1f} grades/min" if "per_minute" in run else "")


def _spread(runs: list[dict], key: str) -> str:
    """The median of the runs' `key`, in seconds, with its range when there are several."""
    values = [r[key] for r in runs]
    middle = statistics.median(values)
    return f"{middle:.1f} s" + (f" [{min(values):.1f}-{max(values):.1f}]" if len(values) > 1 else "")


def write_readme(results: dict, readme: Path = README) -> None:
    text = readme.read_text()
    start, end = text.index(BEGIN), text.index(END) + len(END)
    readme.write_text(text[:start] + render(results) + text[end:])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--case", choices=[*CASES, *EXTRA], action="append", help="run only these cases")
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--root", type=Path, default=ROOT, help="the checkout whose grader runs (default: this one)")
    parser.add_argument("--no-write", action="store_true", help="print only; leave results.json alone")
    parser.add_argument("--readme", action="store_true", help="rewrite README.md's block from results.json")
    parser.add_argument("--render", action="store_true", help="only rewrite README.md's block from results.json")
    args = parser.parse_args()
    if args.render:
        write_readme(json.loads(RESULTS.read_text()))
        return 0
    problem = available()
    if problem:
        sys.exit(f"cannot measure the process tree: {problem} (root and writable cgroup v1 cpu, cpuacct, memory)")
    print(f"{'case':28s} {'run':>3s} {'wall s':>7s} {'CPU s':>7s} {'peak MB':>8s} {'load':>9s}  score")
    for name in args.case or CASES:
        case = {**CASES, **EXTRA}[name]
        runs = []
        for i in range(args.repeat):
            run = run_once(name, case, args.root.resolve())
            runs.append(run)
            print(f"{name:28s} {i + 1:3d} {run['wall']:7.1f} {run['cpu']:7.1f} {run['peak_mb']:8.0f} "
                  f"{run['load_before']:4.1f}-{run['load_after']:<4.1f}  {run['score']}", flush=True)
        if not args.no_write:  # each case as it ends: an interrupted run keeps the cases it measured
            results_file.record(name, case.title, runs)
        for phase in [p for p in PHASE_ORDER if p in runs[-1]["phases"]]:
            row = runs[-1]["phases"][phase]
            print(f"    {phase:36s} wall {row['wall']:6.2f} s, judge CPU {row['cpu']:6.2f} s"
                  f"   (lane 2: {row['wall 2']:.2f} s, {row['cpu 2']:.2f} s)")
    if not args.no_write:
        print(f"wrote {RESULTS.relative_to(ROOT)}")
        if args.readme:
            write_readme(results_file.load())
            print("rewrote README.md's block")
    return 0


if __name__ == "__main__":
    sys.exit(main())
