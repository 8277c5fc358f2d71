"""Grade one submission: run the selected tests through the sandbox and score what they find.

    result = grade(Path("upload"), only={"gae"})             # the full grade (needs the reference)
    result = grade(Path("upload"), mode="self_check")        # the visible, reference-free checks only
    write_reports(result, Path("out"))                       # autograder/judge/report.py

Unit and property tests ("checks", autograder/checks) run first, then the end-to-end tests
(autograder/judge/e2e.py), on one or two judge processes (autograder/judge/lanes.py). Every test returns a Finding;
`outcome.scored` gives it its grading.yaml points and visibility. Any failure of the submission becomes a
failed test with a plain sentence; the grader raises GraderError only when it cannot work at all.
"""

from __future__ import annotations

import gc
import os
import pickle
import sys
import time
import traceback
from collections.abc import Callable, Iterable
from contextlib import nullcontext
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Literal

import hypothesis.errors
import torch

from autograder import checks
from autograder.checks import CheckFailed, Context
from autograder.judge import early, lanes
from autograder.judge.discovery import Contract, Submission, SubmissionNotFound, find_submission, is_empty, unwritten
from autograder.judge.outcome import Finding, GradeResult, TestResult, grade_status, scored
from autograder.lab import arithmetic, registry
from autograder.lab import config as config_mod
from autograder.lab.reference import NoReference, load_reference
from autograder.sandbox import budget as budget_mod
from autograder.sandbox import preflight, sandbox, textsafe
from autograder.sandbox.isolation import IsolationError
from autograder.sandbox.remote import RemoteSubmission, SubmissionError
from autograder.sandbox.sandbox import SandboxError, isolation_report

Mode = Literal["full", "self_check"]
Progress = Callable[[GradeResult], None]
STOPPED = Finding(message="not run: the grade was stopped before this test ended (the platform's time limit?)",
                  kind="time")  # a test not finished yet, in a progress snapshot
_BUDGET: budget_mod.Budget | None = None  # the running grade's, inherited by the forked second lane


class GraderError(Exception):
    """The grader cannot work (missing file, bad configuration, no room): exit non-zero with this message."""


def select(test_ids: list[str], only: set[str] | None) -> list[str]:
    """The tests whose first tag (the part, or "e2e") or whose id is in `only` (all when `only` is empty)."""
    return [t for t in test_ids if not only or t.split(".")[0] in only or t in only]


def runnable_tests(cfg: config_mod.Config, mode: Mode) -> list[str]:
    """grading.yaml's tests that run in `mode`; a full grade checks that every one is registered."""
    registry = checks.load_all()
    if mode == "self_check":
        return [t for t in cfg.tests if t in registry and _is_public(registry[t])]
    from autograder.judge import e2e  # end-to-end tests: not in the student bundle
    e2e.load_all()
    e2e.check_config(cfg)
    unregistered = [t for t in cfg.tests if t not in registry and t[4:] not in e2e.REGISTRY]
    if unregistered:
        raise GraderError(f"grading.yaml lists tests that do not exist: {', '.join(unregistered)}")
    return list(cfg.tests)


def grade(submission: Path | Submission, only: set[str] | None = None, cfg: config_mod.Config | None = None,
          mode: Mode = "full", lane_count: int | None = None, secrets: Iterable[Path] = (),
          progress: Progress | None = None, wall_seconds: float | None = None, plots: bool = True) -> GradeResult:
    """Grade `submission` (see the module docstring): a path, or what discovery.find_submission found there.

    `lane_count` caps the judge lanes (None: what the machine allows). A full grade first proves that the
    submission could read none of the grader's secrets, nor `secrets` (the output folder, other students'
    submissions), and refuses to grade otherwise. `progress`, when given, gets the grade so far after each
    test (the tests not ended yet as STOPPED): a platform that kills the grade still finds those results.
    The grade spends at most limits.grade_seconds of CPU (both lanes and their children) and `wall_seconds` of
    wall-clock time (default limits.grade_wall_seconds, below Gradescope's limit; autograder/sandbox/budget.py).
    `plots`: the e2e tests' plots, made only for the tests whose outcome students see now (report.html shows
    no other); False where no report is written (validation).
    """
    try:
        return _grade(submission, only, cfg, mode, lane_count, secrets, progress, wall_seconds, plots)
    finally:
        sandbox.discard_early()


def _grade(submission: Path | Submission, only: set[str] | None, cfg: config_mod.Config | None, mode: Mode,
           lane_count: int | None, secrets: Iterable[Path], progress: Progress | None, wall_seconds: float | None,
           plots: bool) -> GradeResult:
    cfg = cfg or config_mod.load()
    try:
        found = submission if isinstance(submission, Submission) else find_submission(submission, Contract.of(cfg))
        early.start(found, cfg, mode)  # (the grade command started them before importing torch: a no-op)
        if mode == "full":
            load_reference()  # loaded once, before a second lane is forked
            preflight.ensure_secrets_hidden(cfg.limits, extra=list(secrets))
            if (why := arithmetic.unpinned()) is not None:  # staff's note: the grade goes on
                print(f"autograder: {why}", file=sys.stderr)
        n_lanes = lanes.lane_count(lane_count)
    except (SubmissionNotFound, NoReference, lanes.NoRoom, IsolationError, SandboxError) as exc:
        raise GraderError(str(exc)) from None
    chosen = select(runnable_tests(cfg, mode), only)
    started = time.monotonic()
    if found.problem:  # a notebook that could not be converted: nothing can be imported
        return _not_run(found.name, chosen, cfg, started, bool(only), Finding(message=found.problem, kind="import"),
                        "not_importable", found.problem)
    if is_empty(found.path):
        finding = Finding(message=f"{found.path.name} holds no code (it is empty or only comments): nothing to grade",
                          kind="empty")
        return _not_run(found.name, chosen, cfg, started, bool(only), finding, "empty", "the file is empty")
    if unwritten(found.path, Contract.of(cfg).functions):  # a notebook's: its code cells, converted
        n_lanes = 1  # the blank starter: a second lane's child would only hear NotImplementedError (scores alike)
    work, trained = lanes.plan(chosen, n_lanes, e2e_runs(chosen, cfg))

    def result_of(results: list[TestResult], output: str) -> GradeResult:
        order = {t: i for i, t in enumerate(chosen)}
        results = sorted(results, key=lambda r: order[r.id])
        status, detail = grade_status([r.finding for r in results])
        return GradeResult(found.name, results, partial=bool(only), execution_time=time.monotonic() - started,
                           output=output, isolation=isolation_report(), status=status, status_detail=detail,
                           notice=checks.SHOWN_INPUTS_ONLY if mode == "self_check" else "")

    stopped: dict[str, TestResult] = {}  # each test as not ended yet, made once (not once per test that ends)

    def snapshot(done: list[TestResult]) -> None:
        if progress is not None:
            if not stopped:
                stopped.update({t: scored(cfg.tests[t], _title(t), _tags(t, cfg), STOPPED) for t in chosen})
            ended = {r.id for r in done}
            progress(result_of(done + [stopped[t] for t in chosen if t not in ended], ""))

    global _BUDGET
    _BUDGET = budget_mod.Budget(cfg.limits.grade_seconds, wall_seconds or cfg.limits.grade_wall_seconds)
    try:
        results, output = _run_lanes(found, work, trained, cfg, mode, snapshot, plots)
    except SandboxError as exc:
        raise GraderError(f"the grader could not sandbox the submission on this machine: {exc}") from None
    finally:
        _BUDGET = None
    return result_of(results, output)


class _Inbox:
    """What the second lane sends the first: the runs it trained (the first lane's memo waits for them) and
    each test's result as it ends (for progress snapshots; all of them come back at the end anyway)."""

    def __init__(self, connection):
        self.connection, self.runs, self.results = connection, {}, []

    def read(self, timeout: float = 0.0) -> bool:
        """Read one message if one comes within `timeout` seconds; False when none did."""
        if not self.connection.poll(timeout):
            return False
        kind, _, body = self.connection.recv_bytes().partition(b"\n")
        if kind == b"runs":
            from autograder.judge import e2e
            self.runs.update(e2e.runs_from_json(body.decode()))
        else:
            self.results.append(pickle.loads(body))  # our own forked judge's TestResult
        return True


def _run_lanes(found: Submission, work: list[list[str]], trained: set, cfg: config_mod.Config, mode: Mode,
               snapshot: Callable[[list[TestResult]], None], plots: bool) -> tuple[list[TestResult], str]:
    """Run the lanes' tests; the second lane sends each run it trains, the first waits for those it reuses."""
    assert _BUDGET is not None
    if len(work) == 2 and work[1]:
        with lanes.second_lane(both_train=_lanes_training(work, trained, cfg) == 2) as (pool, connection):
            future = pool.submit(_second_lane, found, work[1], cfg, mode, plots)  # forked: it inherits _BUDGET
            inbox = _Inbox(connection)
            runs = _runs_from(inbox, future.done, trained)
            results, output = run_lane(found, work[0], _BUDGET, cfg, mode, runs,
                                       ended=lambda done: _snapshot_both(inbox, done, snapshot), plots=plots)
            while not future.done():  # what the first lane did not wait for: the pipe must not fill up
                if inbox.read(0.1):
                    snapshot(results + inbox.results)
            more, more_output = future.result()
        return results + more, output + more_output
    gc.freeze()
    return run_lane(found, work[0], _BUDGET, cfg, mode, ended=snapshot, plots=plots)


def _lanes_training(work: list[list[str]], trained: set, cfg: config_mod.Config) -> int:
    """How many lanes will train a run whatever the submission answers (a run the lab's shipped replays do not
    hold, or every run under AUTOGRADER_REPLAY=0): `trained` are the second lane's runs, the first trains the
    rest of its e2e tests' runs."""
    from autograder.judge import e2e
    from autograder.replay import shipped
    replayable = set() if os.environ.get("AUTOGRADER_REPLAY") == "0" else set(shipped.shipped_runs())
    tests = e2e.load_all() if any(t.startswith("e2e.") for t in work[0]) else {}
    first = {k for t in work[0] if t.startswith("e2e.") for k in tests[t[4:]].runs(cfg.e2e[t[4:]]) if k not in trained}
    return sum(any(repr(k) not in replayable for k in keys) for keys in (first, trained))


def _snapshot_both(inbox: _Inbox, done: list[TestResult], snapshot: Callable[[list[TestResult]], None]) -> None:
    while inbox.read(0):
        pass
    snapshot(done + inbox.results)


def _second_lane(found: Submission, test_ids: list[str], cfg: config_mod.Config,
                 mode: Mode, plots: bool) -> tuple[list[TestResult], str]:
    """run_lane in the forked second lane, on the grade's budget (inherited with the fork, never pickled); its
    child's interpreter starts at once, while the lane prepares its first test."""
    assert _BUDGET is not None
    sandbox.start_early(found.path, cfg.limits)
    try:
        return run_lane(found, test_ids, _BUDGET, cfg, mode,
                        ended=lambda done: lanes.send(b"result\n" + pickle.dumps(done[-1])), plots=plots)
    finally:
        sandbox.discard_early()


def e2e_runs(chosen: list[str], cfg: config_mod.Config) -> dict[str, dict]:
    """e2e test id -> {run key: estimated CPU seconds}: the trainings each chosen e2e test measures."""
    if not any(t.startswith("e2e.") for t in chosen):
        return {}
    from autograder.judge import e2e
    registry = e2e.load_all()
    return {t: registry[t[4:]].runs(cfg.e2e[t[4:]]) for t in chosen if t.startswith("e2e.")}


def _runs_from(inbox: _Inbox, lane_done, trained: set):
    """The first lane's memo: a run the second lane trains is read from its pipe (or, if that lane ends
    without it, trained here after all)."""
    from autograder.judge import e2e

    def fetch(key) -> dict:
        while key not in inbox.runs and not (lane_done() and not inbox.connection.poll(0)):
            inbox.read(0.1)
        return dict(inbox.runs)
    return e2e.SharedRuns(trained, fetch)


def _is_public(check: checks.Check) -> bool:
    """A reference-free check of checks/public/, shipped with the student self-check."""
    return checks.is_public(check)


def _not_run(name: str, chosen: list[str], cfg: config_mod.Config, started: float, partial: bool, finding: Finding,
             status: str, detail: str) -> GradeResult:
    """A grade where no test could run: every test gets `finding`."""
    results = [scored(cfg.tests[t], _title(t), _tags(t, cfg), finding) for t in chosen]
    return GradeResult(name, results, partial, time.monotonic() - started, status=status,
                       status_detail=detail, isolation=isolation_report())


def run_lane(found: Submission, test_ids: list[str], budget: budget_mod.Budget, cfg: config_mod.Config,
             mode: Mode, runs: dict | None = None, ended: Callable[[list[TestResult]], None] | None = None,
             plots: bool = True) -> tuple[list[TestResult], str]:
    """Run tests in order with one sandboxed child; returns their results and what the submission printed.

    `budget` is the grade's (shared by every lane). `runs` is the e2e tests' memo (default: a new one); each
    run trained here is also `lanes.send` on. `ended(results so far)` is called after each test. `plots`: as in
    grade().
    """
    # One thread per lane: the judge's tensors are tiny (waking OpenMP threads costs ~20 ms an op under
    # load), and the machine's other core runs the other lane.
    torch.set_num_threads(1)
    reference = load_reference() if mode == "full" else None
    sent: set = set()
    sub = RemoteSubmission(found.path, cfg.limits, budget,
                           name=Path(found.name).name if found.cells is not None else "", cells=found.cells)
    if runs is not None:
        sub.memo = runs
    results = []
    try:
        shown = _shown_first(test_ids, cfg, sub, budget) if mode == "full" else {}
        for test_id in test_ids:
            t0 = time.monotonic()
            if budget.over():
                finding = Finding(message=f"not run: {budget.reason()}", kind="time")
            else:
                spec = cfg.tests[test_id]  # the self-check sends only the inputs it shows
                sub.begin_test(spec.inputs_visibility if mode == "self_check" else _withheld(spec))
                finding = run_test(test_id, cfg, sub, reference, shown.get(test_id),
                                   plots=plots and cfg.tests[test_id].visibility == "visible")
            result = scored(cfg.tests[test_id], _title(test_id), _tags(test_id, cfg), finding)
            result.seconds = time.monotonic() - t0
            results.append(result)
            _send_new_runs(sub.memo, sent)
            if ended is not None:
                ended(results)
            lanes.trim_heap()
        return results, sub.output()
    finally:
        sub.close()


def _send_new_runs(memo: dict, sent: set) -> None:
    """Pass the runs trained since the last test to the other lane (a no-op in the first lane)."""
    new = {k: v for k, v in memo.items() if k not in sent}
    if new:
        from autograder.judge import e2e
        lanes.send(b"runs\n" + e2e.runs_to_json(new).encode())
        sent.update(new)


def _withheld(spec: config_mod.TestSpec) -> str:
    """The release of the inputs a test sends (its inputs, and others drawn afresh): what its child then holds."""
    return config_mod.least_visible(spec.inputs_visibility, spec.private_inputs_visibility)


@dataclass
class Shown:
    """What a public check found on its shown inputs, run before anything withheld reached the child."""

    made: list                           # the calls it made (their fresh twins run later)
    failure: Exception | None = None     # CheckFailed or SubmissionError: it failed there
    heard: str = "visible"               # RemoteSubmission.heard while it ran


def _shown_first(test_ids: list[str], cfg: config_mod.Config, sub: RemoteSubmission,
                 budget: budget_mod.Budget) -> dict[str, Shown]:
    """Run the public checks of `test_ids` on their shown inputs first, while the child has received no withheld
    input, so what it says there is the student's to see at once (a child may keep a hidden input and say it in a
    later answer: remote.py's taint would hold such text back). Their fresh twins, and any diagnosis (its
    confirmation inputs are withheld), run later in the test's own turn."""
    found: dict[str, Shown] = {}
    registry = checks.load_all()
    for test_id in test_ids:
        check = registry.get(test_id)
        if check is None or not hasattr(check.run, "shown") or budget.over():
            continue
        sub.begin_test(cfg.tests[test_id].inputs_visibility)
        ctx = Context(sub=sub, ref=None, hypothesis=cfg.hypothesis)
        try:
            found[test_id] = Shown(check.run.shown(ctx))
        except SandboxError:
            raise
        except (CheckFailed, SubmissionError) as failure:
            found[test_id] = Shown([], failure)
        except Exception:  # noqa: BLE001 - a grader bug: the test's own turn runs it whole and reports it
            traceback.print_exc(file=sys.stderr)
            continue
        found[test_id].heard = sub.heard
    return found


def run_test(test_id: str, cfg: config_mod.Config, sub: RemoteSubmission, reference: ModuleType | None,
             shown: Shown | None = None, plots: bool = True) -> Finding:
    """What one test finds (`shown`: what its public check found on its shown inputs, run first); a grader bug
    costs this test, never the grade. The finding carries what the child had received (Finding.child_saw)."""
    finding = _run_test(test_id, cfg, sub, reference, shown, plots)
    if shown is not None and shown.failure is not None:  # its text was said on the shown inputs; the diagnosis
        finding.child_saw = shown.heard                  # since (withheld inputs) adds a hint of the grader's only
    else:
        finding.child_saw = config_mod.least_visible(sub.heard, shown.heard if shown is not None else "visible")
    return finding


def _run_test(test_id: str, cfg: config_mod.Config, sub: RemoteSubmission, reference: ModuleType | None,
              shown: Shown | None, plots: bool) -> Finding:
    try:
        if test_id.startswith("e2e."):
            from autograder.judge import e2e
            assert reference is not None, "e2e tests run only in a full grade"
            with nullcontext() if plots else registry.without_plots():
                return e2e.run(test_id[4:], cfg, sub, reference)
        return run_check(checks.load_all()[test_id], cfg, sub, reference, shown)
    except SandboxError:
        raise  # the machine cannot sandbox: the whole grade fails as the grader's, not the submission's
    except Exception as exc:  # noqa: BLE001 - reported to staff on stderr, to students as one sentence
        traceback.print_exc(file=sys.stderr)
        return Finding(message=f"internal grader error in this test ({textsafe.exception_words(type(exc).__name__)})"
                               "; please report it", kind="grader")


def _title(test_id: str) -> str:
    if test_id.startswith("e2e."):
        from autograder.judge import e2e
        return e2e.REGISTRY[test_id[4:]].title
    return checks.load_all()[test_id].title


def _tags(test_id: str, cfg: config_mod.Config) -> list[str]:
    if test_id.startswith("e2e."):
        return ["e2e", *cfg.e2e[test_id[4:]].parts]
    return [checks.load_all()[test_id].part]


def run_check(check: checks.Check, cfg: config_mod.Config, sub: RemoteSubmission,
              reference: ModuleType | None, shown: Shown | None = None) -> Finding:
    """What `check` finds; with `shown` (its shown inputs already run), only the fresh twins of its calls run."""
    ctx = Context(sub=sub, ref=reference, hypothesis=cfg.hypothesis)
    try:
        if shown is None:
            check.run(ctx)
        elif shown.failure is not None:
            raise shown.failure
        elif reference is not None:
            check.run.fresh_twins(ctx, shown.made)  # type: ignore[attr-defined]
    except CheckFailed as failure:
        return Finding(message=failure.message, inputs=failure.inputs, expected=failure.expected, got=failure.got,
                       compared=failure.compared, submission_text=failure.submission_text,
                       private_inputs=failure.private_inputs,
                       hint=diagnose(check.part, failure, reference, ask=_asker(sub, failure.function)))
    except SubmissionError as exc:
        return Finding.failed_call(str(exc), exc.kind, exc.detail, exc.private_inputs)
    except hypothesis.errors.Flaky:
        return Finding(message="your function gave different answers to the same input "
                               "(does it use randomness or global state?)", kind="flaky")
    return Finding()


def diagnose(part: str, failure: CheckFailed, reference: ModuleType | None, ask=None) -> str:
    """Name the known mistake whose answers equal the submission's (or ""): the lab's diagnosis."""
    if reference is None:  # the self-check: no mistake bank, no reference
        return ""
    from autograder.lab import registry
    return registry.lab().diagnose(part, failure, reference, ask)


def _asker(sub: RemoteSubmission, function: str):
    """ask(args, kwargs) -> the submission's answer to another call of `function`, None if it fails.
    valid=False: a confirmation call may be one the contract rejects (an unknown kind), and a diagnosis
    never decides that a function is unwritten."""
    def ask(args: tuple, kwargs: dict):
        try:
            return sub.call(function, *args, valid=False, **kwargs)[0]
        except SubmissionError:
            return None
    return ask
