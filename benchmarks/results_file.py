"""benchmarks/results.json: every benchmark's last runs, one case each, which README.md quotes.

    record("lab12-reference-docker", "Lab 12 reference, ...", [run, ...])   # merge one case in, dated
    load()                                                                   # the file as a dict

A run is {"wall", "cpu" (the whole process tree's, from a cgroup: benchmarks/cgroup_v1.py), "peak_mb",
"oom_kills", "load_before", "load_after" (os.getloadavg's 1-minute figure), "score"}, and may add "per_minute"
(grades a minute: grade-all), "phases" (grade_bench.py). Each case keeps the replay format it measured
(autograder/replay/shipped.py): a case of another format is dropped when the file is next written.
"""

from __future__ import annotations

import datetime
import json
import os
from pathlib import Path

RESULTS = Path(__file__).resolve().parent / "results.json"


def machine() -> str:
    cpus = os.cpu_count()
    model = next((line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
                  if line.startswith("model name")), "unknown CPU")
    return f"{cpus} cores, {model}"


def load(path: Path = RESULTS) -> dict:
    return json.loads(path.read_text()) if path.exists() else {"cases": {}}


def record(name: str, title: str, runs: list[dict], path: Path = RESULTS) -> dict:
    """Merge the case `name` (its runs, measured now) into the file; cases of another replay format go."""
    from autograder.replay.shipped import FORMAT
    results = load(path)
    results.update(machine=machine(), replay_format=FORMAT)
    results["cases"] = {k: v for k, v in results["cases"].items() if v.get("replay_format") == FORMAT}
    when = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    results["cases"][name] = {"title": title, "date": when, "replay_format": FORMAT, "runs": runs}
    path.write_text(json.dumps(results, indent=1) + "\n")
    return results


def loads() -> float:
    """The 1-minute load average now (what else the machine runs, this benchmark included)."""
    return round(os.getloadavg()[0], 2)
