"""The grade's CPU budget and a call's CPU limit: load on the machine stretches the wall clock only."""

from __future__ import annotations

import dataclasses
import os
import subprocess
import sys
import time

import pytest

from autograder.checks import CheckFailed
from autograder.checks.tools import ShrinkBudget
from autograder.lab import config
from autograder.lab.paths import REFERENCE
from autograder.sandbox.budget import Budget, CallClock
from autograder.sandbox.remote import RemoteSubmission, SubmissionError


class Fake:
    """A settable clock or CPU counter."""

    def __init__(self, value: float = 0.0):
        self.value = value

    def __call__(self) -> float:
        return self.value


def test_a_loaded_machine_spends_wall_time_not_the_budget():
    wall, own, reaped = Fake(), Fake(5.0), Fake(1.0)   # 6 s spent before the grade: not its own
    budget = Budget(cpu_seconds=300, wall_seconds=540, clock=wall, own_cpu=own, reaped_cpu=reaped)
    wall.value, own.value = 400.0, 5.0 + 100.0          # a busy machine: 400 s of wall, 100 s of CPU
    assert budget.spent() == pytest.approx(100.0)
    assert budget.left() == pytest.approx(140.0) and not budget.over()   # the wall backstop is nearer
    wall.value = 541.0
    assert budget.over() and "wall-clock backstop (540 s)" in budget.reason()


def test_cpu_is_counted_for_the_judge_its_reaped_children_and_its_live_child():
    wall, own, reaped, live = Fake(), Fake(), Fake(), Fake()
    budget = Budget(cpu_seconds=10, wall_seconds=540, clock=wall, own_cpu=own, reaped_cpu=reaped)
    budget.watch(live)
    own.value, reaped.value, live.value = 3.0, 2.0, 4.0
    assert budget.spent() == pytest.approx(9.0) and not budget.over()
    live.value, wall.value = 6.0, 1.0                   # re-read once FRESH_SECONDS have passed
    assert budget.over() and "CPU budget (10 s of CPU time)" in budget.reason()


def test_both_lanes_draw_on_one_budget():
    """The forked second lane counts in its own slot from zero; the first lane sees its spending."""
    budget = Budget(cpu_seconds=300, wall_seconds=540)
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the second lane: burn ~0.3 s of CPU, record it
        end = time.process_time() + 0.3
        while time.process_time() < end:
            pass
        os.write(write, repr(budget.spent()).encode())
        os._exit(0)
    os.waitpid(pid, 0)
    in_child = float(os.read(read, 100))
    os.close(read)
    os.close(write)
    assert in_child >= 0.3 and budget.spent() >= in_child  # this lane's own CPU plus the other's slot


def test_a_call_clock_counts_wall_time_only_until_its_first_reading():
    wall, cpu = Fake(), Fake(50.0)
    clock = CallClock(cpu, clock=wall)
    wall.value = 0.2
    assert clock.spent() == pytest.approx(0.2)          # before the first reading: wall time, at most
    wall.value, cpu.value = 30.0, 51.0                  # a loaded machine: 30 s of wall, 1 s of CPU
    assert clock.spent() == pytest.approx(1.2)


def test_shrinking_stops_at_its_budget():
    cpu = Fake()
    shrink = ShrinkBudget(examples=3, seconds=10, cpu=cpu)
    assert not shrink.spent()                          # no failure yet: no shrinking to count
    first = CheckFailed("differs")
    shrink.failed(first)
    assert [shrink.spent() for _ in range(4)] == [False, False, False, True]
    shrink = ShrinkBudget(examples=100, seconds=10, cpu=cpu)
    shrink.failed(first)
    cpu.value = 11.0
    assert shrink.spent() and shrink.failure is first


def test_for_all_stops_calling_the_body_once_shrinking_is_spent():
    """A failure on every input would shrink for long; past shrink_examples the body is not called again, and
    the failure reported is a real one (the last the body raised)."""
    from hypothesis import strategies as st

    from autograder.checks import Context
    from autograder.checks.tools import for_all
    settings = {**dict(config.load().hypothesis), "shrink_examples": 5, "shrink_seconds": 60}
    calls = []

    def body(example):
        calls.append(example)
        raise CheckFailed(f"fails on {example}")
    ctx = Context(sub=None, ref=None, hypothesis=settings)
    with pytest.raises(CheckFailed) as failure:
        for_all(ctx, st.lists(st.integers(0, 10 ** 6), min_size=20, max_size=40), body)
    assert len(calls) <= 1 + 5
    assert str(failure.value) == f"fails on {calls[-1]}"


def _submission(tmp_path, body: str):
    source = REFERENCE.read_text() + "\n\n" + body
    path = tmp_path / "rlhf.py"
    path.write_text(source)
    return path


@pytest.fixture
def hog():
    """Another process keeping every core busy: the machine's load, as another grader's would be."""
    procs = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(os.cpu_count() or 2)]
    yield
    for proc in procs:
        proc.kill()
        proc.wait()


@pytest.mark.slow
def test_a_call_is_limited_by_its_cpu_not_by_the_machines_load(tmp_path, hog):
    """A call that needs ~1 s of CPU under a 1.5 s CPU limit passes however long the busy machine takes;
    one that needs more CPU fails with the CPU limit's sentence."""
    path = _submission(tmp_path, """
import time as _time
def kl_estimate(logp, ref_logp, kind="k1"):
    end = _time.process_time() + (1.0 if kind == "k1" else 3.0)
    while _time.process_time() < end:
        pass
    return logp - ref_logp
""")
    import torch
    limits = dataclasses.replace(config.load().limits, call_seconds=1.5, wall_per_cpu=20)
    sub = RemoteSubmission(path, limits)
    try:
        x = torch.zeros(2, 3)
        value, _ = sub.call("kl_estimate", x, x, kind="k1")
        assert value.shape == (2, 3)
        with pytest.raises(SubmissionError, match="did not finish within 1.5 s of CPU time"):
            sub.call("kl_estimate", x, x, kind="k2")
    finally:
        sub.close()


def test_a_call_that_sleeps_meets_the_wall_backstop(tmp_path):
    path = _submission(tmp_path, """
import time as _time
def kl_estimate(logp, ref_logp, kind="k1"):
    _time.sleep(300)
    return logp - ref_logp
""")
    import torch
    limits = dataclasses.replace(config.load().limits, call_seconds=0.5, wall_per_cpu=2)
    sub = RemoteSubmission(path, limits)
    try:
        x = torch.zeros(2, 3)
        started = time.monotonic()
        with pytest.raises(SubmissionError, match="did not finish within 1 s of wall-clock time while using less"):
            sub.call("kl_estimate", x, x)
        assert time.monotonic() - started < 120  # cut by the 1 s backstop, not the 300 s sleep (a busy machine)
    finally:
        sub.close()


def test_an_exhausted_budget_fails_later_calls_at_once(tmp_path):
    import torch
    budget = Budget(cpu_seconds=0.0, wall_seconds=540)
    sub = RemoteSubmission(REFERENCE, config.load().limits, budget)
    try:
        with pytest.raises(SubmissionError, match="not run: the grade's CPU budget"):
            sub.call("kl_estimate", torch.zeros(2), torch.zeros(2))
    finally:
        sub.close()


def test_progress_gets_the_grade_so_far_after_each_test(tmp_path):
    """What a platform that kills the grade finds: every test already run, the others marked as stopped."""
    from autograder.judge.grade import STOPPED, grade
    from autograder.judge.results import write_results
    snapshots = []

    def progress(so_far):
        snapshots.append([t.finding.message for t in so_far.tests])
        write_results(so_far, tmp_path / "results.json")
    result = grade(REFERENCE, only={"gae"}, mode="self_check", progress=progress)
    assert len(snapshots) == len(result.tests) >= 1
    assert snapshots[0].count(STOPPED.message) == len(result.tests) - 1
    assert snapshots[-1] == [t.finding.message for t in result.tests]
    assert (tmp_path / "results.json").is_file() and not list(tmp_path.glob(".*.tmp"))
