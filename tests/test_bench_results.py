"""README.md's speed figures are benchmarks/results.json's, as benchmarks/grade_bench.py renders them, and that
file measured every case of every benchmark (grade_bench.py's, container_bench.py's and grade_all_bench.py's rows)
with the replays as they are now (their file format), each run with the whole tree's CPU, its peak memory and the
load it ran under."""

from __future__ import annotations

import importlib.util
import json
import sys

from autograder.lab.paths import ROOT
from autograder.replay.shipped import FORMAT


def bench():
    """benchmarks/grade_bench.py as a module (benchmarks/ is no package)."""
    spec = importlib.util.spec_from_file_location("grade_bench", ROOT / "benchmarks" / "grade_bench.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("grade_bench", module)
    spec.loader.exec_module(module)
    return module


def test_the_readme_quotes_the_benchmarks_last_results():
    grade_bench = bench()
    results = json.loads(grade_bench.RESULTS.read_text())
    text = (ROOT / "README.md").read_text()
    start, end = text.index(grade_bench.BEGIN), text.index(grade_bench.END) + len(grade_bench.END)
    assert text[start:end] == grade_bench.render(results), \
        "stale: run `python benchmarks/grade_bench.py --readme` (`--render`: only rewrite the block)"


def test_the_results_cover_every_case_with_todays_replays():
    grade_bench = bench()
    results = json.loads(grade_bench.RESULTS.read_text())
    assert set(results["cases"]) >= set(grade_bench.CASES) | set(grade_bench.OTHER_CASES)
    for name, case in results["cases"].items():
        assert case["replay_format"] == FORMAT, f"{name} was measured with replays of another format"
        assert case["runs"] and all(run["cpu"] > 0 and run["wall"] > 0 and run["peak_mb"] > 0
                                    and "load_before" in run and "load_after" in run for run in case["runs"]), name
    assert results["cases"]["grade-all-full"]["runs"][-1]["per_minute"] > 0
