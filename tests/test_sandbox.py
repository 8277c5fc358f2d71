"""The sandbox's layers, one by one: what the child can see and do at each isolation level.

The probes run in a real child (one torch import each, ~2 s); the rest are unit tests. The adversarial
suite (test_sandbox_adversarial.py) grades whole attack submissions.
"""

from __future__ import annotations

import dataclasses
import os
import struct
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import pytest

from autograder.lab import config
from autograder.lab.paths import REFERENCE, ROOT
from autograder.sandbox import isolation, readable, sandbox, seccomp
from autograder.sandbox.child import wire
from autograder.sandbox.filetree import remove_tree
from tests.test_arithmetic import HAS_AVX2

PROBE = '''
import ctypes, os, resource, socket, torch
libc = ctypes.CDLL(None, use_errno=True)
def show(name, value):
    print(f"PROBE {name}={value}")
status = dict(line.split(":", 1) for line in open("/proc/self/status") if ":" in line)
show("uid", os.getuid())
show("groups", os.getgroups())
show("nonewprivs", status["NoNewPrivs"].strip())
show("seccomp", status["Seccomp"].strip())
def readable(path):
    try:
        with open(path) as f:
            return bool(f.read(1))
    except OSError:
        return False
show("repo", readable(%(repo)r))
show("reference", readable(%(reference)r))
show("nproc", resource.getrlimit(resource.RLIMIT_NPROC)[0] < 10_000)
show("core", resource.getrlimit(resource.RLIMIT_CORE))
show("threads", torch.get_num_threads())
show("kernels", torch.backends.cpu.get_cpu_capability())
try:
    socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    show("inet", "allowed")
except OSError as exc:
    show("inet", exc.errno)
a, b = socket.socketpair()
show("unix", "allowed")
show("unshare", libc.unshare(0x10000000) == 0 or ctypes.get_errno())
show("ptrace", libc.ptrace(16, os.getppid(), 0, 0) == 0 or ctypes.get_errno())
show("setuid0", libc.setuid(0) == 0)
show("shmget", libc.shmget(0, 1 << 20, 0o1600) >= 0 or ctypes.get_errno())
show("msgget", libc.msgget(0, 0o1600) >= 0 or ctypes.get_errno())
show("memfd", libc.memfd_create(b"x", 0) >= 0 or ctypes.get_errno())
try:
    open("/tmp/lab12-probe-litter", "w").close()
    show("shared_tmp", "writable")
except OSError as exc:
    show("shared_tmp", exc.errno)
'''


def probe(tmp_path: Path, iso: isolation.Isolation) -> dict[str, str]:
    path = tmp_path / "rlhf.py"
    path.write_text(PROBE % {"repo": str(ROOT / "grading.yaml"), "reference": str(REFERENCE)})
    child = sandbox.Child(path, config.load().limits, iso)
    try:
        assert child.hello.get("ok"), child.hello
        time.sleep(0.1)
        lines = [line[6:] for line in child.output.text().splitlines() if line.startswith("PROBE ")]
    finally:
        child.kill()
    return dict(line.split("=", 1) for line in lines)


def test_bubblewrap_level_hides_the_grader_and_refuses_escapes(tmp_path):
    iso = isolation.detect()
    if not iso.bwrap:
        if os.environ.get("AUTOGRADER_SANDBOX") == "bwrap":
            pytest.fail("AUTOGRADER_SANDBOX=bwrap but bubblewrap is not available")
        pytest.skip("bubblewrap is not available here: " + "; ".join(iso.notes))
    seen = probe(tmp_path, iso)
    assert seen["repo"] == "False" and seen["reference"] == "False"
    assert seen["nonewprivs"] == "1" and seen["seccomp"] == "2"
    assert seen["inet"] == "1" and seen["unix"] == "allowed"          # EPERM from the filter
    assert seen["unshare"] == "1" and seen["ptrace"] == "1" and seen["setuid0"] == "False"
    assert seen["nproc"] == "True" and seen["core"] == "(0, 0)" and seen["threads"] == "1"
    assert seen["kernels"] == "AVX2" or not HAS_AVX2  # the judge's arithmetic (autograder/lab/arithmetic.py)
    assert seen["shmget"] == seen["msgget"] == seen["memfd"] == "1"
    if iso.own_uid:
        assert int(seen["uid"]) >= isolation.UID_BASE and seen["groups"] == "[]"


@pytest.mark.parametrize("landlock", [True, False])
def test_without_bubblewrap_landlock_hides_files_and_seccomp_still_filters(tmp_path, landlock):
    """The Docker level: no namespaces. Landlock hides the grader's files; without it they are visible
    (honest; the secrets preflight then refuses a real grade unless file modes hide them)."""
    iso = dataclasses.replace(isolation.detect(), bwrap=None)
    if landlock and not iso.landlock:
        pytest.skip("this kernel has no Landlock")
    iso = iso if landlock else dataclasses.replace(iso, landlock=0)
    seen = probe(tmp_path, iso)
    assert seen["repo"] == str(not landlock) and seen["reference"] == str(not landlock)
    assert seen["shared_tmp"] == ("13" if landlock else "writable")       # EACCES from Landlock
    if seccomp.supported():
        assert seen["nonewprivs"] == "1" and seen["seccomp"] == "2"
        assert seen["inet"] == "1" and seen["unshare"] == "1" and seen["ptrace"] == "1"
        assert seen["shmget"] == seen["msgget"] == seen["memfd"] == "1"
    assert seen["nproc"] == "True" and seen["core"] == "(0, 0)" and seen["threads"] == "1"
    assert seen["kernels"] == "AVX2" or not HAS_AVX2  # a warm child's too: the zygote starts pinned
    if iso.own_uid:
        assert int(seen["uid"]) >= isolation.UID_BASE and seen["groups"] == "[]" and seen["setuid0"] == "False"


@pytest.mark.parametrize("level", ["bwrap", "rlimits"])
def test_kill_leaves_no_process_behind(tmp_path, level):
    iso = isolation.detect() if level == "bwrap" else dataclasses.replace(isolation.detect(), bwrap=None)
    if level == "bwrap" and not iso.bwrap:
        pytest.skip("bubblewrap is not available here")
    path = tmp_path / "rlhf.py"
    path.write_text("import os, subprocess\n"
                    "subprocess.Popen(['sleep', '1000'], start_new_session=True)\n"
                    "if os.fork() == 0:\n    os.setsid()\n    os.execvp('sleep', ['sleep', '1001'])\n")
    child = sandbox.Child(path, config.load().limits, iso)
    time.sleep(0.3)
    assert len(child.members()) >= 3
    started = time.monotonic()
    child.kill()
    assert child.members() == set() and time.monotonic() - started < sandbox.KILL_SECONDS + 1


def test_without_bubblewrap_files_left_in_shared_temp_are_removed(tmp_path):
    iso = dataclasses.replace(isolation.detect(), bwrap=None, landlock=0)  # with Landlock it cannot write there
    if not iso.own_uid:
        pytest.skip("only a child with its own uid can be told from the grader's files")
    name = f"autograder-litter-{os.getpid()}"
    path = tmp_path / "rlhf.py"
    path.write_text(f"import os\nfor d in ('/tmp', '/dev/shm'):\n    os.makedirs(d + '/{name}/x', exist_ok=True)\n")
    child = sandbox.Child(path, config.load().limits, iso)
    assert child.hello.get("ok") and os.path.isdir(f"/tmp/{name}/x")
    child.kill()
    assert not os.path.exists(f"/tmp/{name}") and not os.path.exists(f"/dev/shm/{name}")


JUDGE = """
import sys, time
from pathlib import Path
from autograder.lab import config
from autograder.sandbox import sandbox
sandbox.CHILD_ROOT = sys.argv[1]
child = sandbox.Child(Path(sys.argv[2]), config.load().limits)
print(child.home, flush=True)
time.sleep(600)
"""


def test_the_next_child_removes_the_folder_a_killed_judge_left(tmp_path, monkeypatch):
    """A SIGKILLed judge cannot remove its child's folder (a copy of the submission): the next child does,
    and leaves alone the folders of live judges and of other pid namespaces."""
    root = tmp_path / "children"
    root.mkdir()
    path = tmp_path / "rlhf.py"
    path.write_text("x = 1\n")
    judge = subprocess.Popen([sys.executable, "-c", JUDGE, str(root), str(path)], cwd=ROOT, stdout=subprocess.PIPE,
                             text=True)
    left = Path(judge.stdout.readline().strip())
    judge.kill()
    judge.wait()
    assert left.is_dir() and left.parent == root
    live = root / f"autograder-child-{isolation.pid_namespace()}-{os.getpid()}-live"
    elsewhere = root / f"autograder-child-{isolation.pid_namespace() + 1}-{judge.pid}-other"
    live.mkdir()
    elsewhere.mkdir()
    monkeypatch.setattr(sandbox, "CHILD_ROOT", str(root))
    child = sandbox.Child(path, config.load().limits)
    try:
        assert not left.exists() and live.is_dir() and elsewhere.is_dir()
    finally:
        child.kill()


def test_seccomp_program_is_well_formed():
    program = seccomp.program()
    if program is None:
        pytest.skip(f"no filter for {seccomp.machine()}")
    assert len(program) % 8 == 0 and len(program) // 8 < 100
    first = struct.unpack("=HBBI", program[:8])
    assert first == (seccomp.LD_W_ABS, 0, 0, seccomp.ARCH)
    assert struct.unpack("=HBBI", program[-8:])[3] == seccomp.RET_KILL_PROCESS


def test_describe_names_every_missing_layer():
    full = isolation.Isolation(bwrap="/usr/bin/bwrap", own_uid=True, seccomp=b"x", landlock=6,
                               cgroup=Path("/sys/fs/cgroup/lab12"))
    assert full.describe() == "bubblewrap + own uid + Landlock + seccomp + rlimits + cgroup memory limit"
    bare = isolation.Isolation().describe()
    assert bare.startswith("no bubblewrap") and "same uid" in bare and "no Landlock" in bare
    assert "no seccomp" in bare and "polled" in bare


def test_forced_rlimits_level(monkeypatch):
    monkeypatch.setenv("AUTOGRADER_SANDBOX", "rlimits")
    isolation.detect.cache_clear()
    try:
        assert isolation.detect().bwrap is None
    finally:
        monkeypatch.delenv("AUTOGRADER_SANDBOX")
        isolation.detect.cache_clear()


def test_find_cgroup_needs_delegated_memory_and_pids(tmp_path, monkeypatch):
    (tmp_path / "cgroup.controllers").write_text("cpu memory pids\n")
    (tmp_path / "autograder").mkdir()
    monkeypatch.setattr(isolation, "CGROUP_MOUNTS", (tmp_path,))
    monkeypatch.delenv("AUTOGRADER_CGROUP", raising=False)
    (tmp_path / "autograder" / "cgroup.subtree_control").write_text("memory\n")
    assert isolation.find_cgroup() is None
    (tmp_path / "autograder" / "cgroup.subtree_control").write_text("cpu memory pids\n")
    assert isolation.find_cgroup() == tmp_path / "autograder"


def test_the_view_covers_grader_files_inside_bound_folders(tmp_path, monkeypatch):
    monkeypatch.setattr(isolation, "view", lambda: readable.View((ROOT,), (), ()))  # as if the view held the repository
    argv = isolation.Isolation(bwrap="bwrap").command(tmp_path, ["python"], None, 1 << 20)
    covered = {argv[i + 1] for i, a in enumerate(argv) if a == "--tmpfs"}
    assert str(ROOT) in covered and str(ROOT / "solutions") in covered
    assert argv[argv.index("--") + 1:] == ["python"]


def test_landlock_rules_carve_grader_files_out_of_bound_folders(tmp_path, monkeypatch):
    monkeypatch.setattr(isolation, "view", lambda: readable.View((ROOT,), (), ()))  # as if the view held the repository
    rules = isolation.Isolation(landlock=6).landlock_rules(tmp_path)
    read = set(rules["read"])
    assert str(ROOT) not in read and str(ROOT / "solutions") not in read and str(ROOT / "grading.yaml") not in read
    assert not [p for p in read if p.startswith(str(ROOT / "autograder"))]
    assert str(ROOT / "assignment") in read and str(tmp_path.resolve()) in read
    assert rules["write"] == [str(tmp_path.resolve() / "tmp")] and "/dev/null" in rules["files"]


@pytest.fixture
def temp_folder():
    """A folder of root's below a searchable one (pytest's own tmp_path is 0700), to serve as TMPDIR."""
    base = Path(tempfile.mkdtemp(prefix="autograder-tmpdir-"))
    base.chmod(0o755)
    (base / "temp").mkdir()
    yield base / "temp"
    remove_tree(base)


@pytest.mark.parametrize("mode", [0o700, 0o711, 0o1777])
def test_a_temp_folder_the_childs_uid_cannot_search_is_refused(temp_folder, monkeypatch, mode):
    """The Docker level (own uid, no bubblewrap) with TMPDIR a folder of root's of mode 0700: every submission was
    graded "not importable". Now the preflight refuses in one sentence naming the folder; a mode the child's uid can
    search is accepted, and with bubblewrap (which rebuilds the folders above the child's) any mode is."""
    from autograder.sandbox import preflight
    temp_folder.chmod(mode)
    monkeypatch.setattr(sandbox, "CHILD_ROOT", str(temp_folder))
    limits = config.load().limits
    if isolation.detect().bwrap:
        preflight.ensure_child_can_work(limits)
    bare = dataclasses.replace(isolation.detect(), bwrap=None)
    if not bare.own_uid:
        pytest.skip("a child of the grader's own uid can use the grader's folders")
    if mode & 0o001:
        preflight.ensure_child_can_work(limits, bare)
        return
    for check in (preflight.ensure_child_can_work, preflight.ensure_secrets_hidden):
        with pytest.raises(preflight.ChildCannotWork) as refused:
            check(limits, iso=bare)
        assert str(refused.value).startswith(f"submissions cannot run in {temp_folder} (the temporary folder: "
                                             f"TMPDIR): {temp_folder} is not searchable by the sandbox's uid")
        assert "set TMPDIR to a folder anyone may search and write in" in str(refused.value)
    assert not list(temp_folder.iterdir())


def test_preflight_finds_secrets_from_the_childs_point_of_view(tmp_path, monkeypatch):
    """Detected level: nothing readable. Without bubblewrap and Landlock: refused (nothing can keep the child to
    its allow-list); the probe itself still tells a secret of mode 0700 (hidden from another uid) from one
    that is world-readable."""
    from autograder.sandbox import preflight
    limits = config.load().limits
    started = time.monotonic()
    preflight.ensure_secrets_hidden(limits, [tmp_path])
    print(f"preflight at the detected level: {(time.monotonic() - started) * 1000:.0f} ms")
    bare = dataclasses.replace(isolation.detect(), bwrap=None, landlock=0)
    with pytest.raises(preflight.SecretsVisible, match="without bubblewrap or Landlock nothing limits"):
        preflight.ensure_secrets_hidden(limits, [], bare)
    if not bare.own_uid:
        pytest.skip("file modes hide nothing from a child of the same uid")
    secret = tmp_path / "other-student"
    secret.mkdir(mode=0o700)
    (secret / "rlhf.py").write_text("secret")
    answer_for = preflight.secret_paths([secret])
    assert secret / "rlhf.py" in answer_for
    child = sandbox.Child(None, limits, bare, program="probe.py")
    try:
        seen = child.request({"op": "probe", "paths": preflight._identities([secret, secret / "rlhf.py", REFERENCE])})
    finally:
        child.kill()
    assert seen["readable"] == [str(REFERENCE)] and seen["writable"] == []


def test_kill_removes_system_v_ipc_left_by_the_child(tmp_path):
    """Last layer: seccomp refuses shmget (probed above); with the filter off, kill() still removes it."""
    from autograder.sandbox import ipc
    iso = dataclasses.replace(isolation.detect(), bwrap=None, seccomp=None)
    if not iso.own_uid:
        pytest.skip("only a child with its own uid can be told from the grader's IPC objects")
    path = tmp_path / "rlhf.py"
    path.write_text("import ctypes\nlibc = ctypes.CDLL(None)\nseg = libc.shmget(0, 1 << 20, 0o1600)\n"
                    "sem = libc.semget(0, 1, 0o1600)\nq = libc.msgget(0, 0o1600)\nassert min(seg, sem, q) >= 0\n")
    child = sandbox.Child(path, config.load().limits, iso)
    assert child.hello.get("ok"), child.hello
    uid = child.uid
    assert len(ipc.owned_by(uid)) == 3
    child.kill()
    assert ipc.owned_by(uid) == []


def test_kill_removes_posix_message_queues_left_by_the_child(tmp_path):
    """Last layer for POSIX queues: seccomp refuses mq_open (tests/test_seccomp.py); with the filter off,
    a queue made by the child (made even where Landlock then refuses to open it) is removed by kill()."""
    from autograder.sandbox import ipc
    iso = dataclasses.replace(isolation.detect(), bwrap=None, seccomp=None)
    if not iso.own_uid or not ipc.mqueue_mounts():
        pytest.skip("needs root and an mqueue file system (Docker's /dev/mqueue; tests/docker_level.py mounts one)")
    number = {"x86_64": 240, "aarch64": 180}[seccomp.machine()]
    path = tmp_path / "rlhf.py"
    path.write_text(f"import ctypes\nlibc = ctypes.CDLL(None)\nlibc.syscall({number}, b'lab12-q-{os.getpid()}', "
                    "0o102, 0o666, None)\n")  # mq_open(name, O_CREAT | O_RDWR, 0666, NULL)
    child = sandbox.Child(path, config.load().limits, iso)
    assert child.hello.get("ok"), child.hello
    uid = child.uid
    assert [kind for kind, _ in ipc.owned_by(uid)] == ["mqueue"]
    child.kill()
    assert ipc.owned_by(uid) == []


def test_links_and_fifos_are_not_copied(tmp_path):
    link = tmp_path / "rlhf.py"
    link.symlink_to(REFERENCE)
    with pytest.raises(sandbox.ChildFailure, match="links are not followed"):
        sandbox.copy_submission(link, tmp_path / "copy.py", 1 << 20)
    fifo = tmp_path / "fifo.py"
    os.mkfifo(fifo)
    with pytest.raises(sandbox.ChildFailure, match="not a regular file"):
        sandbox.copy_submission(fifo, tmp_path / "copy.py", 1 << 20)


def test_capped_buffer_keeps_the_start_reads_everything_and_says_how_much_was_dropped():
    read, write = os.pipe()
    buffer = sandbox.CappedBuffer(10)
    drainer = threading.Thread(target=buffer.drain, args=(os.fdopen(read, "rb"),))
    drainer.start()
    for _ in range(100):  # 10 MB: far more than the pipe holds, so the drainer must keep reading
        os.write(write, b"x" * 100_000)
    os.write(write, b"\x1b[2J\x00")
    os.close(write)
    drainer.join(5)
    assert not drainer.is_alive()
    assert buffer.text().startswith("x" * 10)
    assert "9999995 more bytes of output were printed and not kept" in buffer.text()
    assert "\x1b" not in buffer.text()


def test_text_from_the_child_is_cleaned():
    from autograder.sandbox import textsafe
    assert textsafe.clean("a\ud800b\x00c\x1b[31m\td\ne\x85", 100) == "abc[31m\td\ne"
    assert textsafe.clean("x" * 50, 10) == "x" * 10 + " [... 40 more characters cut]"
    textsafe.clean("\udfff" * 3, 10).encode("utf-8")  # never raises


def test_a_half_sent_frame_times_out():
    read, write = os.pipe()
    os.write(write, b"AGWF\x00")
    started = time.monotonic()
    with pytest.raises(TimeoutError):
        wire.read_frame(read, deadline=time.monotonic() + 0.3)
    assert time.monotonic() - started < 2
    os.close(read)
    os.close(write)


@pytest.mark.slow
def test_startup_cost_of_bubblewrap_is_small(tmp_path):
    """Prints the numbers for the isolation note: `pytest tests/test_sandbox.py -m slow -k startup -s`."""
    import statistics
    import subprocess
    import sys

    iso = isolation.detect()
    if not iso.bwrap:
        pytest.skip("bubblewrap is not available here")
    tmp_path.chmod(0o755)
    inner = [sys.executable, "-I", "-S", "-c", ""]

    def median_ms(argv: list[str]) -> float:
        times = []
        for _ in range(20):
            started = time.perf_counter()
            subprocess.run(argv, check=True, env={"PATH": "/usr/bin:/bin"})
            times.append(time.perf_counter() - started)
        return statistics.median(times) * 1000

    plain, wrapped = median_ms(inner), median_ms(iso.command(tmp_path, inner, None, 1 << 20))
    path = tmp_path / "rlhf.py"
    path.write_text("x = 1\n")
    costs = {}
    for level in (iso, dataclasses.replace(iso, bwrap=None)):
        started = time.perf_counter()
        child = sandbox.Child(path, config.load().limits, level)
        begun = time.perf_counter()
        child.kill()
        costs[level.describe()] = ((begun - started) * 1000, (time.perf_counter() - begun) * 1000)
    print(f"\ninterpreter start: {plain:.0f} ms plain, {wrapped:.0f} ms in bubblewrap (+{wrapped - plain:.0f} ms)")
    for level, (start, kill) in costs.items():
        print(f"Child start {start:.0f} ms, kill {kill:.0f} ms: {level}")
    assert wrapped - plain < 200


def test_without_landlock_files_in_shared_tmpfs_count_as_memory(tmp_path):
    """The Docker level on a kernel without Landlock: /dev/shm is writable, and what the child's uid holds
    there is added to the polled memory (PSS does not see it)."""
    iso = dataclasses.replace(isolation.detect(), bwrap=None, landlock=0)
    if not iso.own_uid or iso.cgroup or not sandbox._on_tmpfs("/dev/shm"):
        pytest.skip("needs root, no cgroup (else the cgroup counts it) and /dev/shm on tmpfs")
    path = tmp_path / "rlhf.py"
    path.write_text("import os, time\ndef hog():\n    for i in range(40):\n"
                    "        with open(f'/dev/shm/lab12-hog-{os.getpid()}-{i}', 'wb') as f:\n"
                    "            f.write(b'1' * (8 << 20))\n    time.sleep(30)\n")
    limits = dataclasses.replace(config.load().limits, memory_mb=250)  # torch ~150 MB + 320 MB of files
    child = sandbox.Child(path, limits, iso)
    try:
        with pytest.raises(sandbox.ChildFailure, match="ran out of memory"):
            child.request({"op": "call", "fn": "hog", "args": [], "kwargs": {}, "grad": []}, timeout=20)
    finally:
        child.kill()
    assert not [f for f in os.listdir("/dev/shm") if f.startswith("autograder-hog-")]
