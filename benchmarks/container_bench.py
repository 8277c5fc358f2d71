"""Benchmark of the Gradescope bundle in a Gradescope-like container: CPU quota, hard memory limit, no CAP_SYS_ADMIN.

    sudo python benchmarks/container_bench.py                        # 0.5, 1 and 2 CPUs at 768 MB, median of 3
    python benchmarks/container_bench.py --conditions 0.5:768,2:512 --repeat 1 --bundle out/autograder.zip
    python benchmarks/container_bench.py --lab labs/lab13 --conditions 0.5:768 --repeat 1   # another lab's bundle
    sudo python benchmarks/container_bench.py --conditions 0.5:768 --repeat 3 --record   # README's row (results.json)

It builds the lab's bundle (`python -m autograder --lab DIR release`; default: the repository's lab) unless given
one, unpacks it into a private /autograder layout (source/, submission/ with the lab's reference as the upload,
results/, run_autograder), runs setup.sh's last step there as the image's build does (the secrets search every
grade reuses; untimed: setup.sh's package installs are not run, the venv is this project's) and runs
/autograder/run_autograder as Gradescope does: as root at the Docker level of
tests/docker_level.py (CAP_SYS_ADMIN dropped, Docker's seccomp rules against namespaces: the grader
picks its container sandbox), the repository hidden, this project's .venv as /autograder/venv.
The run sits in cgroup v1 groups of its own, nested in this process's: cpu (cpu.cfs_quota_us),
cpuacct (CPU time) and memory (memory.limit_in_bytes, swap included). Printed per condition:
wall time, CPU time (cpuacct.usage: every process of the run), peak memory (memory.max_usage_in_bytes),
OOM kills (memory.oom_control), processes left in the group after run_autograder returned, the score,
the isolation level the grade reported, and the load average before and after (what else the machine ran).
`--record` writes the first condition's runs to benchmarks/results.json as the case "lab12-reference-docker"
(README.md quotes it: benchmarks/grade_bench.py --render). Needs root and writable cgroup v1 cpu, cpuacct and memory.

`--control` also runs, under each condition's quota, the bare e2e compute of benchmarks/floor_bench.py (no
sandbox, no grader): on a virtual machine a CPU quota can itself inflate CPU time (throttled vCPUs come
back to cold caches), and this shows by how much at that moment.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "tests"), str(ROOT / "benchmarks")]
import docker_level  # noqa: E402 - the Docker level the sandbox tests use: no CAP_SYS_ADMIN, Docker's seccomp
import results_file  # noqa: E402
from cgroup_v1 import Groups  # noqa: E402


@dataclass
class Outcome:
    wall: float
    cpu: float           # seconds, every process of the run
    peak_mb: float       # memory.max_usage_in_bytes (page cache of the run included, as in Docker)
    oom_kills: int
    survivors: int       # processes still in the cgroup once run_autograder returned
    score: str
    isolation: str
    load_before: float = 0.0  # the 1-minute load average before the run and after it
    load_after: float = 0.0

    def row(self) -> dict:
        """The run as results.json holds it (benchmarks/results_file.py)."""
        score = float(self.score) if self.score.replace(".", "", 1).isdigit() else self.score
        return {"wall": round(self.wall, 2), "cpu": round(self.cpu, 2), "peak_mb": round(self.peak_mb),
                "oom_kills": self.oom_kills, "load_before": self.load_before, "load_after": self.load_after,
                "score": score, "survivors": self.survivors, "isolation": self.isolation}

def build_bundle(out: Path, lab: Path) -> Path:
    run = subprocess.run([sys.executable, "-m", "autograder", "--lab", str(lab), "release", "--out", str(out)],
                         cwd=ROOT, capture_output=True, text=True)
    if run.returncode != 0:
        sys.exit(f"release failed:\n{run.stdout}{run.stderr}")
    return out / "autograder.zip"


def gradescope_layout(bundle: Path, submission: Path, home: Path) -> Path:
    """/autograder as Gradescope makes it (tests/docker_level.py), with the upload's metadata and a venv folder."""
    docker_level.gradescope_layout(bundle, home, submission.name, submission.read_bytes())
    (home / "submission_metadata.json").write_text("{}")
    (home / "venv").mkdir()
    return home


def build_image(home: Path, venv: Path) -> None:
    """What the bundle's setup.sh does once its packages are installed, when Gradescope builds the image (untimed):
    its statement setting AUTOGRADER_IMAGE_BUILD, the search for copies of the secrets every grade of the image
    reuses (autograder/sandbox/secret_files.py)."""
    text = (home / "source" / "setup.sh").read_text().replace("\\\n", " ")
    step = next(line for line in text.splitlines() if "AUTOGRADER_IMAGE_BUILD=1" in line and not line.startswith("#"))
    argv, fd = docker_level.command(["bash", "-c", step], hide=["/work"],
                                    binds={str(home): "/autograder", str(venv): "/autograder/venv"})
    subprocess.run(argv, pass_fds=(fd,), cwd="/", stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                   env={k: v for k, v in os.environ.items() if not k.startswith("AUTOGRADER_")})
    os.close(fd)


def run_once(bundle: Path, submission: Path, venv: Path, cpus: float, memory_mb: int, log: Path,
             trained: bool = False) -> Outcome:
    """One run of the bundle in a fresh layout from the built image; `trained`: every recorded run trains
    (AUTOGRADER_REPLAY=0), none is replayed."""
    with tempfile.TemporaryDirectory(prefix="container-bench-") as tmp:
        home = gradescope_layout(bundle, submission, Path(tmp) / "autograder")
        build_image(home, venv)
        groups = Groups(f"container-bench-{os.getpid()}-{time.monotonic_ns()}", cpus, memory_mb)
        try:
            argv, fd = docker_level.command(["/autograder/run_autograder"], hide=["/work"],
                                            binds={str(home): "/autograder", str(venv): "/autograder/venv"})
            load = results_file.loads()
            started = time.monotonic()
            with open(log, "w") as out:
                subprocess.run(argv, stdout=out, stderr=subprocess.STDOUT, pass_fds=(fd,), preexec_fn=groups.enter,
                               cwd="/", env={**{k: v for k, v in os.environ.items() if not k.startswith("AUTOGRADER_")},
                                             **({"AUTOGRADER_REPLAY": "0"} if trained else {})})
            wall = time.monotonic() - started
            os.close(fd)
            survivors = len(groups.pids())
            cpu, peak, oom = groups.read()
        finally:
            groups.remove()
        score, isolation = read_results(home / "results" / "results.json", log)
        if (home / "results" / "results.json").exists():  # per-test times, for the record
            shutil.copy(home / "results" / "results.json", log.with_suffix(".results.json"))
    return Outcome(wall, cpu, peak, oom, survivors, score, isolation, load, results_file.loads())


def control_cpu(cpus: float, memory_mb: int) -> float:
    """CPU seconds of floor_bench's bare e2e compute run in a fresh group with this quota."""
    from floor_bench import BARE
    groups = Groups(f"container-control-{os.getpid()}-{time.monotonic_ns()}", cpus, memory_mb)
    try:
        subprocess.run([sys.executable, "-c", BARE], cwd=ROOT, check=True, stdout=subprocess.DEVNULL,
                       preexec_fn=groups.enter)
        return groups.read()[0]
    finally:
        groups.remove()


def read_results(path: Path, log: Path) -> tuple[str, str]:
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return "no results.json", ""
    text = log.read_text() + str(data.get("output", ""))
    isolation = next((line.split("sandbox:", 1)[1].strip() for line in text.splitlines() if "sandbox:" in line), "")
    return str(data.get("score", "?")), isolation


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--conditions", default="0.5:768,1:768,2:768", help="CPUS:MEMORY_MB,... to measure")
    parser.add_argument("--repeat", type=int, default=3, help="runs per condition (the median is printed)")
    parser.add_argument("--lab", type=Path, default=ROOT, help="the lab folder whose bundle runs (default: the "
                        "repository's lab)")
    parser.add_argument("--bundle", type=Path, help="a built autograder.zip (default: build the lab's now)")
    parser.add_argument("--submission", type=Path, help="the upload (default: the lab's reference)")
    parser.add_argument("--trained", action="store_true",
                        help="train every run (AUTOGRADER_REPLAY=0), as for a submission whose answers differ from the "
                             "reference's")
    parser.add_argument("--venv", type=Path, default=ROOT / ".venv", help="mounted as /autograder/venv")
    parser.add_argument("--logs", type=Path, help="where each run's log goes (default: a folder per lab in /tmp)")
    parser.add_argument("--control", action="store_true", help="also the bare e2e compute under each quota")
    parser.add_argument("--record", action="store_true", help="write the first condition's runs to results.json "
                        "(the repository's lab, its reference, replayed)")
    args = parser.parse_args()
    missing = docker_level.available()
    if missing:
        sys.exit(f"cannot build the container: {missing}")
    args.lab = args.lab.resolve()
    lab = yaml.safe_load((args.lab / "grading.yaml").read_text())
    submission = args.submission or args.lab / "solutions" / lab["submission"]
    logs = args.logs or Path(tempfile.gettempdir()) / f"{lab['lab']}-container-bench"
    logs.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="container-bench-release-") as tmp:
        bundle = args.bundle or build_bundle(Path(tmp) / "release", args.lab)
        print(f"{lab['lab']}: bundle {bundle}, upload {submission.name}; load average {os.getloadavg()[0]:.1f} at "
              f"start; logs in {logs}")
        print(f"{'CPUs':>5} {'MB':>5} {'run':>4} {'wall s':>7} {'CPU s':>7} {'peak MB':>8} {'OOM':>4} "
              f"{'left':>4}  score  isolation")
        for n, condition in enumerate(args.conditions.split(",")):
            cpus, memory_mb = float(condition.split(":")[0]), int(condition.split(":")[1])
            runs = []
            for i in range(args.repeat):
                log = logs / f"{cpus:g}cpu-{memory_mb}mb-{i}.log"
                o = run_once(bundle, submission, args.venv, cpus, memory_mb, log, args.trained)
                runs.append(o)
                print(f"{cpus:5g} {memory_mb:5d} {i + 1:4d} {o.wall:7.1f} {o.cpu:7.1f} {o.peak_mb:8.0f} "
                      f"{o.oom_kills:4d} {o.survivors:4d}  {o.score:5}  {o.isolation}", flush=True)
            print(f"{cpus:5g} {memory_mb:5d} {'med':>4} {statistics.median(r.wall for r in runs):7.1f} "
                  f"{statistics.median(r.cpu for r in runs):7.1f} {statistics.median(r.peak_mb for r in runs):8.0f} "
                  f"{sum(r.oom_kills for r in runs):4d} {sum(r.survivors for r in runs):4d}  "
                  f"(median of {len(runs)}; load average {os.getloadavg()[0]:.1f})", flush=True)
            if args.record and n == 0 and args.lab == ROOT and not args.trained and not args.submission:
                results_file.record("lab12-reference-docker", f"Lab 12 Gradescope bundle, Docker level, {cpus:g} CPU / "
                                    f"{memory_mb} MB", [r.row() for r in runs])
                print("recorded in benchmarks/results.json")
            if args.control:
                print(f"{cpus:5g} {memory_mb:5d} bare e2e compute (no grader) under this quota: "
                      f"{control_cpu(cpus, memory_mb):.1f} s CPU", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
