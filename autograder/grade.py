"""Grade one submission: run the selected tests through the sandbox and collect their results.

    result = grade(Path("rlhf.py"), only={"gae"})
    write_reports(result, Path("out"))      # results.json, report.md, report.html

Unit and property tests ("checks", see autograder/checks) run first, then the end-to-end tests.
Any failure of the submission is caught and becomes a failed test with a plain sentence; the grader
itself raises only when it cannot work at all (no submission file, broken configuration).
"""

from __future__ import annotations

import ctypes
import gc
import importlib.util
import multiprocessing
import sys
import time
import traceback
from concurrent.futures import ProcessPoolExecutor
from contextlib import nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType

import hypothesis.errors
import torch

from autograder import checks, config as config_mod
from autograder.checks import CheckFailed, Context
from autograder.paths import REFERENCE
from autograder.remote import RemoteSubmission, SubmissionError
from autograder.sandbox import isolation_report


@dataclass
class TestResult:
    id: str
    title: str
    tags: list[str]             # first: the part (or "e2e", then the parts it runs)
    max_score: float
    score: float
    visibility: str
    message: str = ""           # one plain sentence when it failed
    failure: CheckFailed | None = None
    diagnosis: str = ""         # a known mistake the answer matches, with a hint
    seconds: float = 0.0
    plots: list[tuple[str, bytes]] = field(default_factory=list)  # (title, PNG) for the HTML report
    details: str = ""           # extra lines for the report (e2e metrics)

    @property
    def passed(self) -> bool:
        return self.failure is None and not self.message


@dataclass
class GradeResult:
    submission: str
    tests: list[TestResult]
    partial: bool               # --only was given
    execution_time: float
    output: str                 # what the submission printed (capped)
    isolation: str = ""         # how the child was isolated on this machine (sandbox.isolation_report())

    @property
    def score(self) -> float:
        return sum(t.score for t in self.tests)

    @property
    def max_score(self) -> float:
        return sum(t.max_score for t in self.tests)


class GraderError(Exception):
    """The grader cannot work (missing file, bad configuration): exit non-zero with this message."""


def find_submission(path: Path) -> Path:
    """PATH is rlhf.py, a notebook, or a folder holding one; a notebook becomes a temporary rlhf.py."""
    path = Path(path)
    if path.is_dir():
        candidates = [path / "rlhf.py", *sorted(path.glob("*.py")), *sorted(path.glob("*.ipynb"))]
        path = next((c for c in candidates if c.is_file()), path / "rlhf.py")
    if not path.is_file():
        raise GraderError(f"no submission at {path}: give rlhf.py, a notebook, or a folder that contains one")
    if path.suffix == ".ipynb":
        from autograder.notebook import NotebookError, notebook_to_module_file
        try:
            return notebook_to_module_file(path)
        except NotebookError as exc:
            raise GraderError(str(exc)) from None
    return path


def load_reference() -> ModuleType | None:
    """The trusted reference, imported in the judge only; None where it is absent (student bundle)."""
    if not REFERENCE.is_file():
        return None
    spec = importlib.util.spec_from_file_location("lab12_reference", REFERENCE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def select(test_ids: list[str], only: set[str] | None) -> list[str]:
    if not only:
        return test_ids
    return [t for t in test_ids if t.split(".")[0] in only]


def grade(submission: Path, only: set[str] | None = None, cfg: config_mod.Config | None = None) -> GradeResult:
    """Grade `submission` (see module docstring). End-to-end tests of lane 1 (grading.yaml `e2e.*.lane`)
    run in a second judge process, in parallel with everything else, each lane with its own sandbox."""
    cfg = cfg or config_mod.load()
    path = find_submission(submission)
    registry = checks.load_all()
    reference = load_reference()
    runnable = [t for t in cfg.tests if t in registry or t.startswith("e2e.")]
    if reference is None:  # the student self-check: only tests that need no reference
        runnable = [t for t in runnable if t in registry and _is_public(registry[t])]
    else:
        unregistered = [t for t in select(list(cfg.tests), only) if t not in runnable]
        if unregistered:
            raise GraderError(f"grading.yaml lists tests that do not exist: {', '.join(unregistered)}")
    chosen = select(runnable, only)
    started = time.monotonic()
    lanes = [[t for t in chosen if _lane(cfg, t) == lane] for lane in (0, 1)]
    # The second lane is forked before any thread or child exists: it shares the judge's imported
    # modules (torch's ~150 MB) copy-on-write instead of importing them again. gc.freeze() keeps the
    # collector from touching (and so copying) every page of those objects in both processes.
    if lanes[1]:
        import torch._dynamo  # noqa: F401 - imported by torch.optim on first use: ~70 MB shared, not twice

        from autograder import e2e, plots  # noqa: F401
    gc.freeze()
    with ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("fork")) if lanes[1] else nullcontext() \
            as pool:
        future = pool.submit(run_lane, path, lanes[1], started) if lanes[1] else None
        results, output = run_lane(path, lanes[0], started, cfg)
        if future is not None:
            more, more_output = future.result()
            results, output = results + more, output + more_output
    order = {t: i for i, t in enumerate(chosen)}
    results.sort(key=lambda r: order[r.id])
    return GradeResult(str(path), results, partial=bool(only), execution_time=time.monotonic() - started,
                       output=output, isolation=isolation_report())


def trim_heap() -> None:
    """Give the heap's freed pages back to the system (glibc keeps them after a test's big tensors are
    freed), so that the lanes' peaks do not add up. A no-op where glibc is absent."""
    try:
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):
        pass


def _lane(cfg: config_mod.Config, test_id: str) -> int:
    return cfg.e2e[test_id[4:]].get("lane", 0) if test_id.startswith("e2e.") else 0


def run_lane(path: Path, test_ids: list[str], started: float,
             cfg: config_mod.Config | None = None) -> tuple[list[TestResult], str]:
    """Run tests in order with one sandboxed child; returns their results and what the submission printed.

    `started` is a time.monotonic() value (shared by every lane on this machine) for the grade's time limit.
    """
    # One thread per lane: the judge's tensors are tiny (waking OpenMP threads costs ~20 ms an op under
    # load), and the machine's other core runs the other lane.
    torch.set_num_threads(1)
    cfg = cfg or config_mod.load()
    registry = checks.load_all()
    reference = load_reference()
    sub = RemoteSubmission(path, cfg.limits, deadline=started + cfg.grade_seconds)
    results = []
    try:
        for test_id in test_ids:
            spec = cfg.tests[test_id]
            if time.monotonic() - started > cfg.grade_seconds:
                results.append(_result(test_id, registry, cfg, spec,
                                       message=f"not run: the grade's time limit ({cfg.grade_seconds:g} s) was reached"))
                continue
            t0 = time.monotonic()
            if test_id.startswith("e2e."):
                from autograder import e2e  # trains models: imported only when an e2e test runs
                try:
                    result = e2e.run(test_id, cfg, sub, reference)
                except Exception as exc:  # noqa: BLE001 - a grader bug costs this test, never the grade
                    traceback.print_exc(file=sys.stderr)
                    result = _result(test_id, registry, cfg, spec, message=f"internal grader error in this "
                                     f"test ({type(exc).__name__}); please report it")
                result.max_score, result.visibility = spec.points, spec.visibility
                result.score = spec.points if result.passed else 0.0
            else:
                result = run_check(registry[test_id], cfg, spec, sub, reference)
            result.seconds = time.monotonic() - t0
            results.append(result)
            trim_heap()
        return results, sub.output()
    finally:
        sub.close()


def _is_public(check: checks.Check) -> bool:
    return check.run.__module__.startswith("autograder.checks.public")


def _result(test_id: str, registry: dict, cfg: config_mod.Config, spec, message: str = "") -> TestResult:
    if test_id in registry:
        title, tags = registry[test_id].title, [registry[test_id].part]
    else:
        title, tags = test_id, ["e2e", *cfg.e2e[test_id.split(".", 1)[1]]["parts"]]
    return TestResult(test_id, title, tags, spec.points, 0.0, spec.visibility, message=message)


def run_check(check: checks.Check, cfg: config_mod.Config, spec, sub: RemoteSubmission,
              reference: ModuleType | None) -> TestResult:
    result = TestResult(check.id, check.title, [check.part], spec.points, 0.0, spec.visibility)
    try:
        check.run(Context(sub=sub, ref=reference, hypothesis=cfg.hypothesis))
    except CheckFailed as failure:
        result.failure, result.message = failure, failure.message
        result.diagnosis = diagnose(check.part, failure, reference, ask=_asker(sub, failure.function))
    except SubmissionError as exc:
        result.message = str(exc)
    except hypothesis.errors.Flaky:
        result.message = ("your function gave different answers to the same input "
                          "(does it use randomness or global state?)")
    except Exception as exc:  # noqa: BLE001 - a grader bug costs this test, never the whole grade
        result.message = f"internal grader error in this test ({type(exc).__name__}); please report it"
        traceback.print_exc(file=sys.stderr)
    else:
        result.score = spec.points
    return result


def diagnose(part: str, failure: CheckFailed, reference: ModuleType | None, ask=None) -> str:
    """Name the known mistake whose answers equal the submission's (or ""); see autograder/diagnosis.py."""
    try:
        from autograder import diagnosis
    except ImportError:  # the student bundle ships no mistake bank
        return ""
    return diagnosis.diagnose(part, failure, reference, ask)


def _asker(sub: RemoteSubmission, function: str):
    """ask(args, kwargs) -> the submission's answer to another call of `function`, None if it fails."""
    def ask(args: tuple, kwargs: dict):
        try:
            return sub.call(function, *args, **kwargs)[0]
        except SubmissionError:
            return None
    return ask
