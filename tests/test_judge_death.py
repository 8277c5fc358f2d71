"""Nothing outlives a killed judge: its second lane and every sandboxed child die with it, however it dies
(SIGKILL, or the OOM killer under a hard cgroup memory limit, as in Gradescope's container)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from autograder.lab.paths import REFERENCE, ROOT
from autograder.sandbox.isolation import alive  # live and not a zombie

slow = pytest.mark.slow
MEMORY_V1 = Path("/sys/fs/cgroup/memory")


def descendants(pid: int) -> set[int]:
    """Every live process below `pid` (through /proc/PID/task/TID/children)."""
    found, todo = set(), [pid]
    while todo:
        p = todo.pop()
        try:
            for tid in os.listdir(f"/proc/{p}/task"):
                with open(f"/proc/{p}/task/{tid}/children") as f:
                    kids = [int(c) for c in f.read().split()]
                found.update(kids)
                todo += kids
        except OSError:
            continue
    return found


def start_grade(tmp_path: Path, preexec=None) -> subprocess.Popen:
    """A full grade of the reference that trains its runs (AUTOGRADER_REPLAY=0): long, and growing in memory."""
    command = [sys.executable, "-m", "autograder", "grade", str(REFERENCE), "--out", str(tmp_path / "out")]
    return subprocess.Popen(command, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True, preexec_fn=preexec, env={**os.environ, "AUTOGRADER_REPLAY": "0"})


def wait_for_children(judge: subprocess.Popen, at_least: int, seconds: float = 240) -> set[int]:
    """The judge's tree once it holds `at_least` processes (a lane and sandboxed children)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline and judge.poll() is None:
        tree = descendants(judge.pid)
        if len(tree) >= at_least:
            return tree
        time.sleep(0.2)
    pytest.fail(f"the grade never had {at_least} processes below the judge")


def assert_all_gone(pids: set[int], seconds: float = 10) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline and any(alive(p) for p in pids):
        time.sleep(0.1)
    left = sorted(p for p in pids if alive(p))
    assert not left, f"{len(left)} processes outlived the judge: {left}"


@slow
def test_sigkill_of_the_judge_mid_grade_leaves_no_process(tmp_path):
    judge = start_grade(tmp_path)
    try:
        tree = wait_for_children(judge, at_least=2)
        time.sleep(3)  # into the tests: children importing and answering
        tree |= descendants(judge.pid)
        judge.kill()
        judge.wait(timeout=10)
        assert_all_gone(tree)
    finally:
        if judge.poll() is None:
            judge.kill()


# 64 MB written page by page (bytes * n touches every page), by a process the OOM killer never picks
BALLOON = ("open('/proc/self/oom_score_adj', 'w').write('-1000')\n"
           "import time; block = b'x' * (64 << 20); time.sleep(0.5)")


@slow
@pytest.mark.skipif(os.geteuid() != 0 or not (MEMORY_V1 / "cgroup.procs").exists(), reason="needs cgroup v1 as root")
def test_oom_kill_of_the_judge_leaves_no_process(tmp_path):
    """The judge runs under a hard memory limit; mid-grade the limit drops to just above what it holds and a
    balloon in the same group (never the OOM killer's choice) takes the rest, so the group meets the OOM killer,
    told to prefer the judge: its lane and children must go too. (The grade's own growth once did it; a grade that
    draws no matplotlib plot no longer grows enough.)"""
    group = MEMORY_V1 / f"autograder-oom-{uuid.uuid4().hex[:8]}"
    group.mkdir()
    (group / "memory.limit_in_bytes").write_text(str(768 << 20))
    procs = os.open(group / "cgroup.procs", os.O_WRONLY)
    judge = start_grade(tmp_path, preexec=lambda: os.write(procs, b"0"))
    try:
        tree = wait_for_children(judge, at_least=3)
        deadline = time.monotonic() + 240  # into the tests (the first written result): past the grade's own
        while not (tmp_path / "out" / "results.json").exists() and time.monotonic() < deadline:  # memory check
            time.sleep(0.2)
        tree |= descendants(judge.pid)
        Path(f"/proc/{judge.pid}/oom_score_adj").write_text("1000")  # its children keep 0
        usage = int((group / "memory.usage_in_bytes").read_text())
        (group / "memory.limit_in_bytes").write_text(str(usage + (16 << 20)))
        balloon = subprocess.Popen([sys.executable, "-c", BALLOON], preexec_fn=lambda: os.write(procs, b"0"))
        code = judge.wait(timeout=120)
        balloon.wait(timeout=60)
        assert code == -signal.SIGKILL, f"the judge was not OOM-killed (exit {code})"
        tree |= {int(p) for p in (group / "cgroup.procs").read_text().split()}
        assert_all_gone(tree)
    finally:
        if judge.poll() is None:
            judge.kill()
        os.close(procs)
        for _ in range(50):
            try:
                group.rmdir()
                break
            except OSError:
                time.sleep(0.1)
