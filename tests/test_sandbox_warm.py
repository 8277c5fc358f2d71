"""Warm children (autograder/sandbox/zygote.py): nothing crosses between two children forked by one zygote, a child
cannot
reach the zygote, and the zygote dies with the grade.

Run where the judge is root and Landlock works (the Docker level's layers: no bubblewrap + own uid + Landlock +
seccomp), with the machine's bubblewrap left out of the isolation the children get; skipped elsewhere. The
channel, sandbox and adversarial suites cover the rest at the Docker level (tests/docker_level.py), where every
child is warm.
"""

from __future__ import annotations

import json
import multiprocessing
import os
import signal
import subprocess
import sys
import textwrap
import time
from dataclasses import replace
from pathlib import Path

import pytest

from autograder.lab import config
from autograder.sandbox import isolation, sandbox, zygote

ROOT = Path(__file__).resolve().parent.parent

PLANTER = textwrap.dedent('''
    import json, os, random, sys, tempfile, torch

    def listed(folder):
        try:
            return os.listdir(folder)
        except OSError:
            return []

    def look(arg):
        """What this child finds of an earlier one: memory, modules, environment, files, its confinement."""
        found = {
            "torch attribute": hasattr(torch, "_planted"),
            "default dtype": str(torch.get_default_dtype()),
            "module": "planted_module" in sys.modules,
            "environment": "PLANTED" in os.environ,
            "worker patched": getattr(sys.modules.get("__main__"), "planted", False),
            "main": [sys.modules["__main__"].__name__, hasattr(sys.modules["__main__"], "call"),
                     "worker" in sys.modules, "zygote" in sys.modules, "probe" in sys.modules,
                     os.path.dirname(sys.modules["__main__"].__file__) == os.getcwd(), os.getcwd() in sys.path],
            "confine patched": getattr(sys.modules.get("confine"), "planted", False),
            "file in tmp": any("planted" in n for n in os.listdir(tempfile.gettempdir())),
            "file in /dev/shm": any("planted" in n for n in listed("/dev/shm")),
            "uid": os.getuid(), "ppid": os.getppid(), "pid": os.getpid(), "cwd": os.getcwd(),
            "random": random.getrandbits(64),
            "fds": sorted(int(fd) for fd in os.listdir("/proc/self/fd")),
        }
        print("FOUND " + json.dumps(found), flush=True)
        return torch.zeros(1)

    def plant(arg):
        torch._planted = True
        torch.set_default_dtype(torch.float64)
        sys.modules["planted_module"] = sys
        os.environ["PLANTED"] = "1"
        sys.modules["__main__"].planted = True
        confine = sys.modules["confine"]
        confine.planted = True
        confine.confine = lambda setup: None      # a later child would run unconfined, were this shared
        confine.landlock = lambda *a, **k: None
        for folder in (tempfile.gettempdir(), "/dev/shm"):
            try:
                with open(os.path.join(folder, "planted-%d" % os.getpid()), "w") as f:
                    f.write("x")
            except OSError:
                pass
        print("PLANTED {}", flush=True)
        return torch.zeros(1)

    def reach(arg):
        """What this child can do to its parent (the zygote): signal it, trace it, read its memory and files."""
        ppid, tried = os.getppid(), {}
        zygote_folder = os.path.dirname(sys.modules["__main__"].call.__code__.co_filename)  # the worker's source
        for name, attempt in [("signal 0", lambda: os.kill(ppid, 0)), ("SIGKILL", lambda: os.kill(ppid, 9)),
                              ("SIGSTOP", lambda: os.kill(ppid, 19)),
                              ("read mem", lambda: open("/proc/%d/mem" % ppid, "rb").read(1)),
                              ("read environ", lambda: open("/proc/%d/environ" % ppid, "rb").read(1)),
                              ("list fds", lambda: os.listdir("/proc/%d/fd" % ppid)),
                              ("list its folder", lambda: os.listdir(zygote_folder))]:
            try:
                attempt()
                tried[name] = "done"
            except BaseException as exc:
                tried[name] = type(exc).__name__
        try:
            import ctypes
            tried["ptrace attach"] = ctypes.CDLL(None, use_errno=True).ptrace(16, ppid, 0, 0)
        except BaseException as exc:
            tried["ptrace attach"] = type(exc).__name__
        print("REACH " + json.dumps(tried), flush=True)
        return torch.zeros(1)
''')


def warm_level() -> isolation.Isolation:
    iso = isolation.detect()
    if os.geteuid() != 0 or not iso.landlock or not iso.seccomp:
        pytest.skip("warm children need a root judge with Landlock and seccomp (the Docker level's layers)")
    return replace(iso, bwrap=None, notes=())


@pytest.fixture
def submission(tmp_path):
    tmp_path.chmod(0o755)
    path = tmp_path / config.current().submission
    path.write_text(PLANTER)
    yield path
    sandbox.discard_early()  # the grade's end: the zygote stops


def ask(child: sandbox.Child, fn: str, word: str) -> dict:
    """Call `fn` in the child; the JSON it printed after `word`."""
    said = child.output.text().count(f"{word} ")
    reply = child.request({"op": "call", "fn": fn, "args": [0], "kwargs": {}, "grad": []}, timeout=60)
    assert reply.get("ok"), reply
    deadline = time.monotonic() + 30
    while (text := child.output.text()).count(f"{word} ") <= said:
        assert time.monotonic() < deadline, text
        time.sleep(0.02)
    return json.loads(text.rsplit(f"{word} ", 1)[1].splitlines()[0])


def test_the_docker_level_is_warm_and_bubblewrap_is_not():
    iso = isolation.detect()
    assert zygote.serves(replace(iso, bwrap=None, own_uid=True)) == (os.geteuid() == 0 and sys.platform == "linux")
    assert not zygote.serves(replace(iso, bwrap="/usr/bin/bwrap"))   # each child keeps its own namespaces
    assert not zygote.serves(replace(iso, bwrap=None, own_uid=False))  # same uid: it could signal the zygote


def test_nothing_crosses_between_two_warm_children(submission):
    iso, limits = warm_level(), config.current().limits
    first = sandbox.Child(submission, limits, iso)
    try:
        assert isinstance(first.proc, zygote.Forked)
        before = ask(first, "look", "FOUND")
        ask(first, "plant", "PLANTED")
        planted = ask(first, "look", "FOUND")
        assert planted["torch attribute"] and planted["confine patched"] and planted["default dtype"] == "torch.float64"
    finally:
        first.kill()
    second = sandbox.Child(submission, limits, iso)
    try:
        after = ask(second, "look", "FOUND")
    finally:
        second.kill()
    assert after["ppid"] == before["ppid"]  # one zygote forked both
    assert after["uid"] != before["uid"] and after["uid"] == second.uid  # its own uid: confine ran, unpatched
    own = ("uid", "pid", "cwd", "random")
    assert {k: after[k] for k in after if k not in own} == {k: before[k] for k in before if k not in own}
    assert after["random"] != before["random"]  # drawn afresh in each child, as a fresh interpreter does
    assert after["cwd"] == str(second.home) and before["cwd"] == str(first.home)
    assert after["fds"][:5] == [0, 1, 2, 3, 4]


def test_a_warm_child_looks_like_a_fresh_one(submission, monkeypatch):
    iso, limits = warm_level(), config.current().limits
    found = {}
    for warm in ("1", "0"):
        monkeypatch.setenv("AUTOGRADER_WARM", warm)
        child = sandbox.Child(submission, limits, iso)
        try:
            assert isinstance(child.proc, zygote.Forked) == (warm == "1")
            found[warm] = ask(child, "look", "FOUND")
        finally:
            child.kill()
    assert len(found["1"]["fds"]) == len(found["0"]["fds"])  # stdin/out/err, its channel, Landlock's /proc rule
    assert found["1"]["main"] == found["0"]["main"] == ["__main__", True, False, False, False, True, True]


def test_a_warm_child_cannot_reach_the_zygote(submission):
    iso, limits = warm_level(), config.current().limits
    child = sandbox.Child(submission, limits, iso)
    try:
        tried = ask(child, "reach", "REACH")
        zygote_pid = ask(child, "look", "FOUND")["ppid"]
    finally:
        child.kill()
    assert all(v not in ("done", 0) for v in tried.values()), tried
    assert zygote._ZYGOTE is not None and zygote._ZYGOTE.proc.pid == zygote_pid and zygote._ZYGOTE.alive()
    again = sandbox.Child(submission, limits, iso)  # the zygote still forks
    try:
        assert ask(again, "look", "FOUND")["ppid"] == zygote_pid
    finally:
        again.kill()


def _child_in_forked_lane(path: str, queue) -> None:
    iso = replace(isolation.detect(), bwrap=None, notes=())
    child = sandbox.Child(Path(path), config.current().limits, iso)
    try:
        queue.put((isinstance(child.proc, zygote.Forked), ask(child, "look", "FOUND")["ppid"]))
    finally:
        child.kill()


def test_the_second_lane_forks_from_the_same_zygote(submission):
    iso, limits = warm_level(), config.current().limits
    first = sandbox.Child(submission, limits, iso)
    try:
        zygote_pid = ask(first, "look", "FOUND")["ppid"]
    finally:
        first.kill()
    context = multiprocessing.get_context("fork")
    queue = context.Queue()
    lane = context.Process(target=_child_in_forked_lane, args=(str(submission), queue))
    lane.start()
    lane.join(120)
    assert queue.get(timeout=5) == (True, zygote_pid)


JUDGE = '''
import sys, time
from dataclasses import replace
from pathlib import Path
from autograder.lab import config
from autograder.sandbox import isolation, sandbox, zygote
child = sandbox.Child(Path(sys.argv[1]), config.current().limits, replace(isolation.detect(), bwrap=None, notes=()))
print(zygote._ZYGOTE.proc.pid, child.proc.pid, flush=True)
time.sleep(600)
'''


def test_the_zygote_dies_with_the_grade(submission):
    z_pid = _zygote_of_a_child(submission)
    sandbox.discard_early()  # as grade() does at its end
    assert zygote._ZYGOTE is None and not isolation.alive(z_pid)
    judge = subprocess.Popen([sys.executable, "-c", JUDGE, str(submission)], cwd=ROOT, stdout=subprocess.PIPE,
                             text=True)
    try:
        z_pid, c_pid = map(int, judge.stdout.readline().split())
        assert isolation.alive(z_pid) and isolation.alive(c_pid)
        judge.send_signal(signal.SIGKILL)  # however the judge dies
        judge.wait()
        deadline = time.monotonic() + 10
        while isolation.alive(z_pid) or isolation.alive(c_pid):
            assert time.monotonic() < deadline, "the zygote or its child outlived the judge"
            time.sleep(0.05)
    finally:
        judge.kill()


def _zygote_of_a_child(submission: Path) -> int:
    child = sandbox.Child(submission, config.current().limits, warm_level())
    child.kill()
    assert zygote._ZYGOTE is not None and zygote._ZYGOTE.alive()
    return zygote._ZYGOTE.proc.pid



# ---------------------------------------------------------------------------------- early start (every level)
@pytest.fixture
def fresh(monkeypatch):
    monkeypatch.setenv("AUTOGRADER_WARM", "0")  # the early start of fresh children (bubblewrap's, or forced)
    yield
    sandbox.discard_early()


def test_an_early_child_is_handed_over_and_runs_nothing_before(submission, fresh):
    limits = config.current().limits
    sandbox.start_early(submission, limits)
    (early,) = sandbox._EARLY.values()
    assert early.hello == {} and early._drainer.ident is None  # waiting for its set-up: no thread, no import
    child = sandbox.started(submission, limits)
    try:
        assert child is early and child.hello == {"ok": True} and not sandbox._EARLY
        assert ask(child, "look", "FOUND")["uid"] == (child.uid if child.uid is not None else os.getuid())
    finally:
        child.kill()


def test_an_early_child_never_handed_over_is_killed_with_its_folder(submission, fresh):
    sandbox.start_early(submission, config.current().limits)
    (early,) = sandbox._EARLY.values()
    pid, home = early.proc.pid, early.home
    sandbox.discard_early()
    assert not sandbox._EARLY and not isolation.alive(pid) and not home.exists()


def _early_children_seen(queue) -> None:
    queue.put(len(sandbox._EARLY))


def test_a_forked_judge_does_not_take_its_parents_early_child(submission, fresh):
    limits = config.current().limits
    sandbox.start_early(submission, limits)
    context = multiprocessing.get_context("fork")
    queue = context.Queue()
    lane = context.Process(target=_early_children_seen, args=(queue,))
    lane.start()
    lane.join(60)
    assert queue.get(timeout=5) == 0 and len(sandbox._EARLY) == 1  # still the parent's, handed over there
    child = sandbox.started(submission, limits)
    try:
        assert child.hello == {"ok": True}
    finally:
        child.kill()


def test_a_warm_childs_cpu_counts_in_the_grades_budget_once_it_ended(submission):
    """The zygote reaps its children, not the judge: their CPU reaches the budget as a reaped child's would."""
    from autograder.sandbox import budget
    iso, limits = warm_level(), config.current().limits
    spin = submission.with_name("spin.py")
    spin.write_text("import time\ndef f(x):\n    end = time.process_time() + 1.0\n"
                    "    while time.process_time() < end:\n        pass\n    return x\n")
    before = budget.children_cpu()
    child = sandbox.Child(spin, limits, iso)
    try:
        import torch
        assert child.request({"op": "call", "fn": "f", "args": [torch.zeros(1)], "kwargs": {}, "grad": []},
                             timeout=60).get("ok")
    finally:
        child.kill()
    assert isinstance(child.proc, zygote.Forked) and child.proc.returncode is not None
    assert budget.children_cpu() - before >= 0.9


def test_a_kept_zygote_serves_the_next_grade_with_nothing_of_the_last(submission, monkeypatch):
    """zygote.keep() (validate's and grade-all's workers): a grade's end kills and reaps every child the zygote
    forked, even one its judge lost, and the next grade's children come from the same zygote, which holds nothing
    of the last grade's."""
    iso, limits = warm_level(), config.current().limits
    monkeypatch.setattr(zygote, "_KEEP", True)
    lost = sandbox.Child(submission, limits, iso)
    first = ask(lost, "look", "FOUND")
    ask(lost, "plant", "PLANTED")
    assert zygote._ZYGOTE is not None
    timeouts = [sock.gettimeout() for sock in zygote._ZYGOTE.sockets[1:]]
    sandbox.discard_early()  # the grade's end, its judge never killing `lost`
    assert not isolation.alive(first["pid"]) and isolation.alive(first["ppid"])
    assert [sock.gettimeout() for sock in zygote._ZYGOTE.sockets[1:]] == timeouts  # the spare lane's drained, as it was
    lost.kill()  # its folder (its process is gone)
    second = sandbox.Child(submission, limits, iso)
    try:
        found = ask(second, "look", "FOUND")
    finally:
        second.kill()
    assert found["ppid"] == first["ppid"]
    assert not any(found[key] for key in ("torch attribute", "module", "environment", "worker patched",
                                         "confine patched", "file in tmp", "file in /dev/shm"))
    assert found["default dtype"] == "torch.float32" and found["uid"] != first["uid"]
    monkeypatch.setattr(zygote, "_KEEP", False)  # the fixture's grade end stops it
