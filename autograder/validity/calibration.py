"""Calibrate the end-to-end tests: their measured quantities for the reference over many seeds
(and for bank mistakes), the margins to grading.yaml's thresholds, and the reference band for plots.

    tasks = tasks_for(["kl_penalty", "ptx"], seeds=50)            # + tasks_for(..., entry="gae.no_mask")
    runs = run_all(e2e, tasks, workers=2)                          # e2e: grading.yaml's `e2e` section
    rows = summarise(runs, e2e, min_margin_std=3, min_margin=0.05)  # one Row per (test, criterion)
    band = reference_band(runs)                  # {test: {metric: {"lo": [...], "hi": [...]}}}

Seed i of a test is its grading.yaml seed + i (i = 0 is the graded seed). The reference runs in
process (it is trusted); worker processes use one torch thread each.
"""

from __future__ import annotations

import copy
import dataclasses
import json
import math
import multiprocessing
import statistics
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Callable

if TYPE_CHECKING:
    from autograder.judge.e2e import E2ETest

import yaml


def band_metrics(test) -> tuple[str, ...]:
    """The per-iteration metrics whose band a test's calibration records: the lab's band metrics and all it plots."""
    from autograder.lab import registry
    return tuple(dict.fromkeys((*registry.lab().band_metrics, *test.plotted)))


@dataclass(frozen=True)
class Task:
    tests: tuple[str, ...]      # measured in one process with one memo
    index: int                  # seed index: seed = grading.yaml seed + index
    entry: str | None = None    # bank mistake id, None for the reference


@dataclass
class Run:
    test: str
    index: int
    entry: str | None
    metrics: dict | None        # None: training diverged
    message: str                # the verdict: "" when the test passes
    band: dict                  # {metric: [value per iteration]} (reference runs only)


def apply_overrides(e2e: dict, overrides: list[str]) -> dict:
    """A copy of grading.yaml's `e2e` section with `test.key[.sub]=value` overrides (values as YAML)."""
    e2e = {name: copy.deepcopy(dict(spec)) for name, spec in e2e.items()}
    for item in overrides:
        path, _, value = item.partition("=")
        *parents, leaf = path.strip().split(".")
        node = e2e
        for key in parents:
            node = node[key]
        if leaf not in node:
            raise KeyError(f"--set {item}: {path} is not a key of grading.yaml's e2e section")
        node[leaf] = _number_or_yaml(value)
    return e2e


def _number_or_yaml(text: str):
    """`4e-4` is a string to YAML 1.1 (it wants `4.0e-4`): read numbers first."""
    try:
        return int(text)
    except ValueError:
        pass
    try:
        return float(text)
    except ValueError:
        return yaml.safe_load(text)


def seeded(spec: dict, index: int) -> dict:
    return {**spec, "seed": spec["seed"] + index}


def unbounded(test: "E2ETest", spec: dict) -> dict:
    """`spec` with each threshold of `test`'s criteria where no finite value fails it. Calibration measures every
    metric with it: a grade's measurement may stop once a criterion fails (ptx does not train its run with ptx when
    its baseline fails), while a threshold never changes what is measured; the verdict uses the real `spec`."""
    out = dict(spec)
    for c in test.criteria:
        if isinstance(c.bound, str):
            out[c.bound] = -math.inf if c.side.startswith(">") else math.inf
    return out


def tasks_for(tests: list[str], seeds: int, entry: str | None = None) -> list[Task]:
    """One task per seed and group of tests that share a memo; the costliest groups first (their trainings'
    estimated CPU seconds, E2ETest.runs)."""
    from autograder.judge.e2e import load_all
    from autograder.lab import config
    REGISTRY, e2e = load_all(), config.current().e2e

    def cost(group: tuple[str, ...]) -> float:
        return sum({key: s for t in group for key, s in REGISTRY[t].runs(e2e[t]).items()}.values())
    groups = [(REGISTRY[t].shares, t) for t in tests if REGISTRY[t].shares in tests]
    groups += [(t,) for t in tests if not any(t in g for g in groups)]
    groups.sort(key=lambda g: (len(g), cost(g)), reverse=True)
    return [Task(g, i, entry) for i in range(seeds) for g in groups]


def run_task(task: Task, e2e: dict) -> list[Run]:
    """Measure the task's tests (in this process) for the reference, or with one bank mistake."""
    import torch

    from autograder.judge import e2e as e2e_mod
    from autograder.lab import bank, config, registry
    from autograder.lab.entries import contract_with
    from autograder.lab.paths import use_world
    from autograder.lab.reference import load_reference

    torch.set_num_threads(1)
    cfg = dataclasses.replace(config.load(), e2e=e2e)
    reference = load_reference()
    use_world()
    e2e_mod.load_all()
    functions = {fn: getattr(reference, fn) for fn in cfg.contract}
    if task.entry is not None:
        functions = contract_with(next(e for e in bank.load_all() if e.id == task.entry), reference)
    parts = registry.lab().make_parts(functions)
    memo: dict = {}
    runs = []
    for test in task.tests:
        spec = seeded(e2e[test], task.index)
        try:
            measured = e2e_mod.REGISTRY[test]
            metrics, _, histories = measured.measure(cfg, unbounded(measured, spec), parts, memo)
            message = measured.verdict(spec, metrics)
        except (RuntimeError, ValueError) as exc:  # e.g. nan probabilities while sampling
            metrics, message, histories = None, f"training diverged: {str(exc)[:120]}", {}
        history = histories.get(e2e_mod.REGISTRY[test].band, []) if task.entry is None else []
        banded = [m for m in band_metrics(e2e_mod.REGISTRY[test]) if history and m in history[0]]
        band = {m: [h[m] for h in history] for m in banded}
        runs.append(Run(test, task.index, task.entry, metrics, message, band))
    return runs


def _init_worker() -> None:
    import torch
    torch.set_num_threads(1)


def run_all(e2e: dict, tasks: list[Task], workers: int = 2,
            progress: Callable[[int, int, list[Run]], None] | None = None) -> list[Run]:
    """Run the tasks on `workers` processes (1: in this process); `progress(done, total, runs)` after each."""
    runs: list[Run] = []
    if workers <= 1:
        for i, task in enumerate(tasks):
            new = run_task(task, e2e)
            runs += new
            if progress:
                progress(i + 1, len(tasks), new)
        return runs
    with multiprocessing.get_context("spawn").Pool(workers, initializer=_init_worker) as pool:
        results = pool.imap_unordered(_run_task_star, [(t, e2e) for t in tasks])
        for i, new in enumerate(results):
            runs += new
            if progress:
                progress(i + 1, len(tasks), new)
    return sorted(runs, key=lambda r: (r.test, r.entry or "", r.index))


def _run_task_star(args: tuple[Task, dict]) -> list[Run]:
    return run_task(*args)


def append_raw(path: Path, runs: list[Run], e2e: dict) -> None:
    """Append runs to a JSON-lines file, each with the settings of its test (to resume safely)."""
    with open(path, "a") as f:
        for r in runs:
            f.write(json.dumps({**dataclasses.asdict(r), "settings": e2e[r.test]}) + "\n")


def load_raw(path: Path, e2e: dict) -> list[Run]:
    """The runs of a JSON-lines file made with the same measured settings (others are ignored), so
    thresholds can be changed and the margins recomputed without training again."""
    from autograder.judge.e2e import load_all
    REGISTRY = load_all()
    if not path.is_file():
        return []
    runs = []
    for line in path.read_text().splitlines():
        item = json.loads(line)
        if item["test"] in e2e and measured(item.pop("settings")) == measured(e2e[item["test"]]):
            run = Run(**item)
            if run.metrics is not None:  # judged again: the thresholds may have changed
                run.message = REGISTRY[run.test].verdict(e2e[run.test], run.metrics)
            runs.append(run)
    return unique(runs)


def measured(spec: dict) -> dict:
    """The settings a run's measurements depend on: not its points, visibility or thresholds."""
    from autograder.judge.e2e import load_all
    REGISTRY = load_all()
    thresholds = {bound for test in REGISTRY.values() for bound in test.thresholds}
    ignored = thresholds | {"points", "visibility", "inputs_visibility", "lane"}
    return {k: (list(v) if isinstance(v, tuple) else v) for k, v in spec.items() if k not in ignored}


def unique(runs: list[Run]) -> list[Run]:
    """The first run of each (test, seed, mistake): a task that shares a run (ptx reuses kl_penalty's) measures it
    again when only the other test was left to resume, and the two are the same run."""
    first: dict[tuple, Run] = {}
    for run in runs:
        first.setdefault((run.test, run.index, run.entry), run)
    return list(first.values())


def task_done(task: Task, runs: list[Run]) -> bool:
    done = {(r.test, r.index, r.entry) for r in runs}
    return all((t, task.index, task.entry) in done for t in task.tests)


# ---------------------------------------------------------------- summaries
@dataclass
class Row:
    """One criterion of one test: the reference's distribution over seeds and its margin."""

    test: str
    metric: str
    side: str                  # ">=", "<=" or ">": where the metric must lie relative to the threshold
    threshold: float
    values: list[float]
    failures: int              # reference seeds that fail this criterion (a diverged run fails)
    min_margin_std: float
    min_margin: float

    @property
    def worst_margin(self) -> float:
        """Distance from the worst seed to the threshold (positive: inside the passing side)."""
        from autograder.judge.e2e import margin
        return min((margin(v, self.threshold, self.side) for v in self.values), default=float("-inf"))

    @property
    def std(self) -> float:
        return statistics.pstdev(self.values) if len(self.values) > 1 else 0.0

    @property
    def margin_in_std(self) -> float:
        return self.worst_margin / self.std if self.std > 0 else float("inf")

    @property
    def thin(self) -> bool:
        return self.worst_margin < self.min_margin or self.margin_in_std < self.min_margin_std

    @property
    def ok(self) -> bool:
        return self.failures == 0 and not self.thin


def quantile(values: list[float], q: float) -> float:
    """Linear-interpolated quantile (as numpy's default)."""
    xs = sorted(values)
    if not xs:
        return float("nan")
    pos = q * (len(xs) - 1)
    lo = int(pos)
    hi = min(lo + 1, len(xs) - 1)
    return xs[lo] + (xs[hi] - xs[lo]) * (pos - lo)


def summarise(runs: list[Run], e2e: dict, min_margin_std: float, min_margin: float) -> list[Row]:
    """Rows for the reference's runs (entry None), one per criterion of each measured test."""
    from autograder.judge.e2e import load_all, threshold
    REGISTRY = load_all()
    rows = []
    for test in dict.fromkeys(r.test for r in runs if r.entry is None):
        mine = [r for r in runs if r.test == test and r.entry is None]
        for metric, bound, side in ((c.metric, c.bound, c.side) for c in REGISTRY[test].criteria):
            values = [r.metrics[metric] for r in mine if r.metrics is not None and metric in r.metrics]
            failures = sum(1 for r in mine if r.metrics is None or metric not in r.metrics  # not measured: failed
                           or _fails(test, e2e[test], r, metric))
            rows.append(Row(test, metric, side, threshold(e2e[test], bound), values, failures,
                            min_margin_std, min_margin))
    return rows


def _fails(test: str, spec: dict, run: Run, metric: str) -> bool:
    from autograder.judge.e2e import load_all
    return any(c.fails(spec, run.metrics[metric]) for c in load_all()[test].criteria if c.metric == metric)


def reference_band(runs: list[Run], low: float = 0.1, high: float = 0.9) -> dict:
    """{test: {metric: {"lo": [...], "hi": [...]}}}: the 10th-90th percentile per PPO iteration."""
    band: dict = {}
    for run in runs:
        if run.entry is None and run.band:
            band.setdefault(run.test, []).append(run.band)
    out = {}
    for test, histories in band.items():
        n = min(len(series) for h in histories for series in h.values())
        metrics = [m for m in histories[0] if all(m in h for h in histories)]
        out[test] = {m: {"lo": [round(quantile([h[m][i] for h in histories], low), 5) for i in range(n)],
                         "hi": [round(quantile([h[m][i] for h in histories], high), 5) for i in range(n)]}
                     for m in metrics}
    return out


def mistake_outcomes(runs: list[Run]) -> dict[str, dict[str, float]]:
    """{mistake id: {test: fraction of its seeds that fail the test}}."""
    out: dict[str, dict[str, list[bool]]] = {}
    for run in runs:
        if run.entry is not None:
            out.setdefault(run.entry, {}).setdefault(run.test, []).append(bool(run.message))
    return {e: {t: sum(v) / len(v) for t, v in tests.items()} for e, tests in out.items()}
