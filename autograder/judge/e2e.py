"""The registry of end-to-end tests and how one runs in a grade (the lab's tests: grading/e2e_tests.py).

An end-to-end test trains with the submission's functions and judges the outcome with the given world.
The judge runs the lab's training code itself: the submission's functions for the parts under test are
called in the sandbox (`RemoteFunction`: plain tensors in, values and gradients out) and every other
part uses the reference, so one mistake never costs points twice. The trained models stay in the judge.

Each test is declared once, with `@e2e_test` on its measurement: its title, description, criteria, the
grading.yaml keys of its own, which test's runs it reuses, which history its calibration band shows and
which metrics its plot shows. `grade`, `calibrate`, the handout and the reports read REGISTRY;
`check_config` (and tests/test_config.py) check it against grading.yaml's `e2e` section.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from types import ModuleType
from typing import Any, Callable, Hashable, Iterable, Mapping

from autograder.judge.outcome import Finding
from autograder.lab import registry
from autograder.lab.config import Config, ConfigError
from autograder.sandbox import textsafe
from autograder.sandbox.remote import RemoteSubmission, SubmissionError


@dataclass(frozen=True)
class Criterion:
    metric: str
    bound: str | float   # a grading.yaml key of the test, or a number
    side: str            # ">=", "<=" or ">": where the metric must lie relative to the bound
    message: str         # the test's message when the metric is on the wrong side
    label: str = ""      # the metric's name in a sentence (default: `metric` with spaces)

    def fails(self, spec: Mapping, value: float) -> bool:
        """The value lies on the wrong side of the bound, or is not a number at all (nan, inf: a training that
        diverged measured nothing, and nan compares false with every bound)."""
        if not math.isfinite(value):
            return True
        m = margin(value, threshold(spec, self.bound), self.side)
        return m < 0 or (m == 0 and self.side == ">")

    @property
    def metric_words(self) -> str:
        """The metric's name in a sentence."""
        return self.label or self.metric.replace("_", " ")

    def against_threshold(self, spec: Mapping, value: float | None) -> str:
        """"rm gain 0.310 (needs >= 1: failed)": the measured value against the threshold (None: not measured)."""
        bound = textsafe.measure_words(threshold(spec, self.bound), threshold=True)
        if value is None:
            return f"{self.metric_words} not measured (needs {self.side} {bound})"
        verdict = "failed" if self.fails(spec, value) else "met"
        return f"{self.metric_words} {textsafe.measure_words(value)} (needs {self.side} {bound}: {verdict})"


# (cfg, spec, parts, memo) -> (metrics, details, histories); parts: the lab's function bundle. A measurement may leave
# out the metrics of later criteria once an earlier one fails (what it would train for them cannot change the verdict).
Measure = Callable[[Config, Mapping, Any, dict], tuple[dict, str, dict]]
Runs = Callable[[Mapping], dict[Hashable, float]]  # spec -> {run key: estimated CPU seconds}


def no_runs(spec: Mapping) -> dict[Hashable, float]:
    return {}


@dataclass(frozen=True)
class E2ETest:
    name: str
    title: str                   # one line, shown to students
    description: str             # what it trains and why it should pass (handout)
    criteria: tuple[Criterion, ...]
    settings: tuple[str, ...]    # the test's own grading.yaml keys, beside points/parts/seed/visibility
    measure: Measure             # (cfg, spec, parts, memo) -> (metrics, details, histories)
    shares: str | None = None    # measured in one process with this test, whose runs it reuses
    band: str | None = None      # the history (a key of `histories`) its calibration band shows
    plotted: tuple[str, ...] = ()  # per-iteration metrics its plot shows: those it judges
    runs: Runs = no_runs         # the trainings it measures, keyed as in its memo, with their cost (lanes.plan)

    def verdict(self, spec: Mapping, metrics: dict) -> str:
        """"" when the test passes; else the message of the first criterion the metrics fail, then every
        criterion's measured value against its threshold ("...: gold gain 0.137 (needs >= 0.34: failed), ...").
        A criterion whose metric is missing fails ("... not measured"): it never passes unmeasured."""
        for c in self.criteria:
            value = metrics.get(c.metric)
            if value is None or c.fails(spec, value):
                message = c.message if value is not None else f"{c.metric_words} was not measured"
                return f"{message}: " + ", ".join(k.against_threshold(spec, metrics.get(k.metric))
                                                  for k in self.criteria)
        return ""

    @property
    def thresholds(self) -> set[str]:
        return {c.bound for c in self.criteria if isinstance(c.bound, str)}


REGISTRY: dict[str, E2ETest] = {}


def e2e_test(name: str, title: str, description: str, criteria: list[Criterion], settings: tuple[str, ...],
             shares: str | None = None, band: str | None = None, plotted: tuple[str, ...] = (),
             runs: Runs = no_runs) -> Callable[[Measure], Measure]:
    """Register the decorated measurement as the end-to-end test `name` (grading.yaml `e2e.<name>`)."""
    def register(measure: Measure) -> Measure:
        if name in REGISTRY:
            raise ValueError(f"e2e test {name} is registered twice")
        REGISTRY[name] = E2ETest(name, title, description, tuple(criteria), settings, measure, shares, band, plotted,
                                 runs)
        return measure
    return register


class SharedRuns(dict):
    """A submission's trainings in one lane of a grade, key -> plain data (a test's `memo`).

    A key in `expected` is trained by the other lane: on a miss, `fetch(key)` waits for what that lane
    has sent ({key: run, ...}, without `key` if it gave up), so the run is trained once per grade.
    """

    def __init__(self, expected: Iterable[Hashable] = (), fetch: Callable[[Hashable], dict] | None = None):
        super().__init__()
        self.expected, self.fetch = set(expected), fetch

    def __contains__(self, key: object) -> bool:
        if not dict.__contains__(self, key) and key in self.expected and self.fetch is not None:
            self.expected.discard(key)
            self.update(self.fetch(key))
        return dict.__contains__(self, key)


def runs_to_json(runs: dict) -> str:
    """Runs (tuple keys, JSON-able values) as JSON text, to send from one judge lane to the other."""
    return json.dumps([[key, value] for key, value in runs.items()])


def runs_from_json(text: str) -> dict:
    def tupled(x):
        return tuple(tupled(v) for v in x) if isinstance(x, list) else x
    return {tupled(key): value for key, value in json.loads(text)}


def load_all() -> dict[str, E2ETest]:
    """Every registered test (the lab registers them when it is loaded)."""
    registry.lab()
    return REGISTRY


def check_config(cfg: Config) -> None:
    """grading.yaml's `e2e` section holds exactly the registered tests, each with exactly its own keys."""
    if set(cfg.e2e) != set(REGISTRY):
        extra, missing = sorted(set(cfg.e2e) - set(REGISTRY)), sorted(set(REGISTRY) - set(cfg.e2e))
        raise ConfigError(f"{cfg.where('e2e')}: e2e tests differ from the registered ones "
                          f"(unknown: {', '.join(extra) or '-'}; missing: {', '.join(missing) or '-'})")
    for name, spec in cfg.e2e.items():
        declared = set(REGISTRY[name].settings)
        for key in sorted(set(spec.settings) ^ declared):
            problem = "unknown key" if key in spec.settings else "missing key"
            raise ConfigError(f"{cfg.where(f'e2e.{name}.{key}')}: e2e.{name}.{key}: {problem} "
                              f"(the test's keys: {', '.join(sorted(declared))})")
        unknown_parts = set(spec.parts) - set(cfg.parts)
        if unknown_parts:
            raise ConfigError(f"{cfg.where(f'e2e.{name}.parts')}: e2e.{name}.parts: no such part "
                              f"{', '.join(sorted(unknown_parts))}")


def threshold(spec: Mapping, bound: str | float) -> float:
    return float(spec[bound]) if isinstance(bound, str) else float(bound)


def margin(value: float, bound: float, side: str) -> float:
    """How far `value` lies inside the passing side of `bound` (negative: it fails)."""
    return value - bound if side.startswith(">") else bound - value


# ---------------------------------------------------------------- running one test in a grade
def mixed_parts(cfg: Config, sub: RemoteSubmission, reference: ModuleType, graded: tuple[str, ...]) -> Any:
    """The reference's functions, with the submission's for the functions of the `graded` parts."""
    functions = {fn: getattr(reference, fn) for fn in cfg.contract}
    functions.update(sub.parts(tuple(fn for part in graded for fn in cfg.parts[part])))
    return registry.lab().make_parts(functions)


def run(name: str, cfg: Config, sub: RemoteSubmission, reference: ModuleType) -> Finding:
    """Train and judge the e2e test `name` with the submission's functions of its parts."""
    lab, test, spec = registry.lab(), REGISTRY[name], cfg.e2e[name]
    try:
        for function in (fn for part in spec.parts for fn in cfg.parts[part]):
            sub.call(function, *lab.probe_inputs()[function])  # fail fast before any training
        metrics, details, histories = test.measure(cfg, spec, mixed_parts(cfg, sub, reference, spec.parts), sub.memo)
    except SubmissionError as exc:
        return Finding.failed_call(str(exc), exc.kind, exc.detail, exc.private_inputs)
    except (RuntimeError, ValueError) as exc:  # e.g. nan probabilities while sampling
        # torch's text is about the answers the training got (it may quote their numbers): shown with the inputs
        return Finding(message=f"training diverged: the training code {textsafe.raised_words(type(exc).__name__)} "
                               "on your functions' answers", kind="diverged", got=textsafe.clean(str(exc), 200))
    plots = lab.plot(name, histories, test.plotted) if histories else []
    return Finding(message=test.verdict(spec, metrics), details=details, plots=plots, metrics=metrics)
