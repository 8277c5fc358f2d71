"""Warm children (autograder/sandbox/zygote.py): nothing crosses between two children forked by one zygote, a child
cannot reach the zygote, and the zygote dies with the grade; at both levels a root judge has: the Docker level's
(no bubblewrap + own uid + Landlock + seccomp, the machine's bubblewrap left out of the isolation the children get)
and bubblewrap's (each warm child in its own bubblewrap sandbox's namespaces: autograder/sandbox/holder.py).

Skipped where the judge is not root or Landlock does not work. The channel, sandbox and adversarial suites cover
the rest at both levels: here (bubblewrap) and at the Docker level (tests/docker_level.py), every child warm.
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
    import json, os, random, socket, sys, tempfile, torch

    def listed(folder):
        try:
            return os.listdir(folder)
        except OSError:
            return []

    def interfaces():
        try:
            return [name for _, name in socket.if_nameindex()]
        except OSError as exc:  # no socket at the Docker level (seccomp)
            return type(exc).__name__

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
            "view": [sorted(listed("/")), socket.gethostname(), interfaces()],
            "others": sorted(int(p) for p in listed("/proc") if p.isdigit() and int(p) != os.getpid()),
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
        """What this child can do to the zygote (pid `arg`, as the judge sees it; its parent at the Docker level):
        signal it, trace it, read its memory and files."""
        ppid, tried = int(arg), {}
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


LEVELS = ("docker", "bwrap")


def warm_level(name: str = "docker") -> isolation.Isolation:
    """The isolation of a level with warm children: the Docker level's, or bubblewrap's."""
    iso = isolation.detect()
    if os.geteuid() != 0 or not iso.landlock or not iso.seccomp:
        pytest.skip("warm children need a root judge with Landlock and seccomp (the Docker level's layers)")
    if name == "bwrap" and not iso.bwrap:
        pytest.skip("no working bubblewrap here")
    return iso if name == "bwrap" else replace(iso, bwrap=None, notes=())


@pytest.fixture(params=LEVELS)
def level(request) -> isolation.Isolation:
    return warm_level(request.param)


def parent_of(pid: int) -> int:
    """A process's parent, as the judge sees pids (/proc/PID/stat)."""
    with open(f"/proc/{pid}/stat", "rb") as f:
        return int(f.read().rsplit(b")", 1)[1].split()[1])


def zygote_of(child: sandbox.Child) -> int:
    """The process that forked a warm child, as the judge sees pids: its parent, or under bubblewrap the parent of
    the process that entered its sandbox and waits for it there."""
    assert isinstance(child.proc, zygote.Forked)
    parent = parent_of(child.proc.pid)
    return parent_of(parent) if child.iso.bwrap else parent


@pytest.fixture
def submission(tmp_path):
    tmp_path.chmod(0o755)
    path = tmp_path / config.current().submission
    path.write_text(PLANTER)
    yield path
    sandbox.discard_early()  # the grade's end: the zygote stops


def ask(child: sandbox.Child, fn: str, word: str, arg: int = 0) -> dict:
    """Call `fn(arg)` in the child; the JSON it printed after `word`."""
    said = child.output.text().count(f"{word} ")
    reply = child.request({"op": "call", "fn": fn, "args": [arg], "kwargs": {}, "grad": []}, timeout=60)
    assert reply.get("ok"), reply
    deadline = time.monotonic() + 30
    while (text := child.output.text()).count(f"{word} ") <= said:
        assert time.monotonic() < deadline, text
        time.sleep(0.02)
    return json.loads(text.rsplit(f"{word} ", 1)[1].splitlines()[0])


def test_a_root_judge_has_warm_children_at_both_levels():
    iso, root = isolation.detect(), os.geteuid() == 0 and sys.platform == "linux"
    assert zygote.serves(replace(iso, bwrap=None, own_uid=True)) == root
    assert zygote.serves(replace(iso, bwrap="/usr/bin/bwrap", own_uid=True)) == root  # each in its own sandbox
    assert not zygote.serves(replace(iso, bwrap=None, own_uid=False))  # same uid: it could signal the zygote
    assert not zygote.serves(replace(iso, bwrap="/usr/bin/bwrap", own_uid=False))


def test_nothing_crosses_between_two_warm_children(submission, level):
    iso, limits = level, config.current().limits
    first = sandbox.Child(submission, limits, iso)
    try:
        assert isinstance(first.proc, zygote.Forked)
        before = ask(first, "look", "FOUND")
        ask(first, "plant", "PLANTED")
        planted = ask(first, "look", "FOUND")
        assert planted["torch attribute"] and planted["confine patched"] and planted["default dtype"] == "torch.float64"
        forked_first = zygote_of(first)
    finally:
        first.kill()
    second = sandbox.Child(submission, limits, iso)
    try:
        after = ask(second, "look", "FOUND")
        assert zygote_of(second) == forked_first  # one zygote forked both
    finally:
        second.kill()
    assert after["uid"] != before["uid"] and after["uid"] == second.uid  # its own uid: confine ran, unpatched
    own = ("uid", "pid", "cwd", "random")
    assert {k: after[k] for k in after if k not in own} == {k: before[k] for k in before if k not in own}
    assert after["random"] != before["random"]  # drawn afresh in each child, as a fresh interpreter does
    assert (after["cwd"], before["cwd"]) == (("/tmp", "/tmp") if iso.bwrap else (str(second.home), str(first.home)))
    assert after["fds"][:5] == [0, 1, 2, 3, 4]


def test_a_warm_child_looks_like_a_fresh_one(submission, monkeypatch, level):
    iso, limits = level, config.current().limits
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
    assert found["1"]["view"] == found["0"]["view"]  # under bubblewrap: its root, host name and network's interfaces
    in_folder = iso.bwrap is None  # under bubblewrap a child works in its /tmp (bwrap --chdir /tmp)
    assert found["1"]["main"] == found["0"]["main"] == ["__main__", True, False, False, False, in_folder, in_folder]


def test_a_warm_child_cannot_reach_the_zygote(submission, level):
    iso, limits = level, config.current().limits
    child = sandbox.Child(submission, limits, iso)
    try:
        zygote_pid = zygote_of(child)
        tried = ask(child, "reach", "REACH", zygote_pid)
        seen = ask(child, "look", "FOUND")
    finally:
        child.kill()
    assert all(v not in ("done", 0) for v in tried.values()), tried
    assert seen["ppid"] == (zygote_pid if iso.bwrap is None else 0)  # under bubblewrap: outside its pid namespace
    assert zygote._ZYGOTE is not None and zygote._ZYGOTE.proc.pid == zygote_pid and zygote._ZYGOTE.alive()
    again = sandbox.Child(submission, limits, iso)  # the zygote still forks
    try:
        assert zygote_of(again) == zygote_pid
    finally:
        again.kill()


def test_a_warm_child_under_bubblewrap_has_its_own_sandbox(submission):
    """Each warm child is in the namespaces of its own bubblewrap (holder.py), none of the judge's or another's."""
    iso, limits = warm_level("bwrap"), config.current().limits
    children = [sandbox.Child(submission, limits, iso) for _ in range(2)]
    try:
        spaces = [{name: os.readlink(f"/proc/{child.proc.pid}/ns/{name}") for name in zygote.NAMESPACES}
                  for child in children]
        seen = [ask(child, "look", "FOUND") for child in children]
        for other in (1, 2):  # its sandbox's other processes: bubblewrap's first one, the holder (root, unlisted)
            tried = ask(children[0], "reach", "REACH", other)
            assert all(v not in ("done", 0) for k, v in tried.items() if k != "list its folder"), (other, tried)
        assert children[0].holder is not None and children[0].holder.proc.poll() is None
    finally:
        for child in children:
            child.kill()
    mine = {name: os.readlink(f"/proc/self/ns/{name}") for name in zygote.NAMESPACES}
    for name in zygote.NAMESPACES:
        if name != "cgroup" or spaces[0][name] != mine[name]:  # a kernel without cgroup namespaces shares the judge's
            assert len({spaces[0][name], spaces[1][name], mine[name]}) == 3, name
    assert [(s["ppid"], s["cwd"]) for s in seen] == [(0, "/tmp")] * 2
    assert seen[0]["others"] == [], seen  # Landlock: its own /proc entries only, not even its sandbox's others
    assert all(not isolation.alive(c.proc.pid) and c.holder is None for c in children)


def _child_in_forked_lane(path: str, name: str, queue) -> None:
    child = sandbox.Child(Path(path), config.current().limits, warm_level(name))
    try:
        queue.put((isinstance(child.proc, zygote.Forked), zygote_of(child)))
    finally:
        child.kill()


@pytest.mark.parametrize("name", LEVELS)
def test_the_second_lane_forks_from_the_same_zygote(submission, name):
    iso, limits = warm_level(name), config.current().limits
    first = sandbox.Child(submission, limits, iso)
    try:
        zygote_pid = zygote_of(first)
    finally:
        first.kill()
    context = multiprocessing.get_context("fork")
    queue = context.Queue()
    lane = context.Process(target=_child_in_forked_lane, args=(str(submission), name, queue))
    lane.start()
    lane.join(120)
    assert queue.get(timeout=5) == (True, zygote_pid)


JUDGE = '''
import sys, time
from dataclasses import replace
from pathlib import Path
from autograder.lab import config
from autograder.sandbox import isolation, sandbox, zygote
iso = isolation.detect() if sys.argv[2] == "bwrap" else replace(isolation.detect(), bwrap=None, notes=())
child = sandbox.Child(Path(sys.argv[1]), config.current().limits, iso)
parent = int(open(f"/proc/{child.proc.pid}/stat").read().rsplit(")", 1)[1].split()[1])
holder = child.holder.proc.pid if child.holder else child.proc.pid
print(zygote._ZYGOTE.proc.pid, child.proc.pid, parent, holder, flush=True)
time.sleep(600)
'''


@pytest.mark.parametrize("name", LEVELS)
def test_the_zygote_dies_with_the_grade(submission, name):
    z_pid = _zygote_of_a_child(submission, name)
    sandbox.discard_early()  # as grade() does at its end
    assert zygote._ZYGOTE is None and not isolation.alive(z_pid)
    judge = subprocess.Popen([sys.executable, "-c", JUDGE, str(submission), name], cwd=ROOT, stdout=subprocess.PIPE,
                             text=True)
    try:
        pids = list(map(int, judge.stdout.readline().split()))  # the zygote, the child, its parent, its sandbox
        assert all(isolation.alive(pid) for pid in pids)
        judge.send_signal(signal.SIGKILL)  # however the judge dies
        judge.wait()
        deadline = time.monotonic() + 10
        while any(isolation.alive(pid) for pid in pids):
            assert time.monotonic() < deadline, "the zygote, its child or the child's sandbox outlived the judge"
            time.sleep(0.05)
    finally:
        judge.kill()


def _zygote_of_a_child(submission: Path, name: str = "docker") -> int:
    child = sandbox.Child(submission, config.current().limits, warm_level(name))
    child.kill()
    assert zygote._ZYGOTE is not None and zygote._ZYGOTE.alive()
    return zygote._ZYGOTE.proc.pid



# ---------------------------------------------------------------------------------- early start (every level)
@pytest.fixture
def fresh(monkeypatch):
    monkeypatch.setenv("AUTOGRADER_WARM", "0")  # the early start of fresh children (a judge not root's, or forced)
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


def test_a_warm_childs_cpu_counts_in_the_grades_budget_once_it_ended(submission, level):
    """The zygote reaps its children, not the judge: their CPU reaches the budget as a reaped child's would."""
    from autograder.sandbox import budget
    iso, limits = level, config.current().limits
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


def test_a_kept_zygote_serves_the_next_grade_with_nothing_of_the_last(submission, monkeypatch, level):
    """zygote.keep() (validate's and grade-all's workers): a grade's end kills and reaps every child the zygote
    forked, even one its judge lost, and the next grade's children come from the same zygote, which holds nothing
    of the last grade's."""
    iso, limits = level, config.current().limits
    monkeypatch.setattr(zygote, "_KEEP", True)
    lost = sandbox.Child(submission, limits, iso)
    first = ask(lost, "look", "FOUND")
    ask(lost, "plant", "PLANTED")
    assert zygote._ZYGOTE is not None
    forked_first, running = zygote_of(lost), lost.proc.pid
    timeouts = [sock.gettimeout() for sock in zygote._ZYGOTE.sockets[1:]]
    sandbox.discard_early()  # the grade's end, its judge never killing `lost`
    assert not isolation.alive(running) and isolation.alive(forked_first)
    assert [sock.gettimeout() for sock in zygote._ZYGOTE.sockets[1:]] == timeouts  # the spare lane's drained, as it was
    lost.kill()  # its folder (its process is gone)
    second = sandbox.Child(submission, limits, iso)
    try:
        found = ask(second, "look", "FOUND")
        assert zygote_of(second) == forked_first
    finally:
        second.kill()
    assert not any(found[key] for key in ("torch attribute", "module", "environment", "worker patched",
                                         "confine patched", "file in tmp", "file in /dev/shm"))
    assert found["default dtype"] == "torch.float32" and found["uid"] != first["uid"]
    monkeypatch.setattr(zygote, "_KEEP", False)  # the fixture's grade end stops it
