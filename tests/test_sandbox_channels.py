"""No bit crosses between two sandboxed children, running at once or one grade after the other.

A sender child sets a bit in every channel tried (tests/adversarial/channels.py): POSIX message queues,
System V IPC, abstract and filesystem unix sockets, files and named pipes in /tmp, /var/tmp, /dev/shm and
its own tmp, a signal, its process name, file locks (flock, POSIX), an inotify watch, a file's atime, the
user keyring, its nice value and CPU affinity. A receiver child running at the same time, and a child
started after both are gone (the next grade's), look for it. A control run first passes the bit between
two plain processes of one uid with the same probes: there every channel carries it, so the receivers'
"NOT" means that a layer closed the channel, not that the probe is blind. Run at every level (.ci/run's
"Docker level" step runs this file there): `pytest tests/test_sandbox_channels.py -s` prints the table.
"""

from __future__ import annotations

import importlib.metadata as metadata
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

import pytest

from autograder.lab import config
from autograder.sandbox import ipc, isolation, sandbox

CHANNELS = Path(__file__).with_name("adversarial") / "channels.py"
def _unopened(name: str) -> Path:
    """A file of the child's allow-list that no program opens: one of mpmath's (a torch requirement) metadata."""
    return Path(str(next(f for f in metadata.distribution("mpmath").files or [] if f.name == name).locate()))


SHARED = _unopened("INSTALLER")      # a file every child may read and no program opens
UNSHARED = _unopened("WHEEL")        # the same, for the probes' absent case
ATIME = _unopened("top_level.txt")
CONDITIONAL = {  # channels the control cannot show everywhere
    "posix mqueue listed": lambda: bool(ipc.mqueue_mounts()),
    "cpu affinity": lambda: len(os.sched_getaffinity(0)) > 1,
    "atime": lambda: "noatime" not in _mount_options(ATIME),
}


def _mount_options(path: Path) -> str:
    done = subprocess.run(["findmnt", "-n", "-o", "OPTIONS", "-T", str(path)], capture_output=True, text=True)
    return done.stdout


def source(mark: str) -> str:
    return CHANNELS.read_text().replace("__MARK__", mark).replace("__SHARED__", str(SHARED))


def seen(text: str) -> dict[str, str]:
    """channel -> "GOT detail" or "NOT detail", from a receiver's output."""
    found = {}
    for line in text.splitlines():
        word, _, rest = line.partition(" ")
        if word in ("GOT", "NOT"):
            channel, _, detail = rest.partition(": ")
            found[channel] = f"{word} {detail}"
    return found


def wait_for(read, word: str, seconds: float = 30) -> str:
    deadline = time.monotonic() + seconds
    while word not in (text := read()):
        assert time.monotonic() < deadline, f"no {word!r} in: {text[-2000:]}"
        time.sleep(0.05)
    return text


def set_atime() -> int:
    """Make ATIME's access time two days old, so that any read updates it (relatime)."""
    info = ATIME.stat()
    atime = info.st_mtime_ns - 2 * 86400 * 10**9
    os.utime(ATIME, ns=(atime, info.st_mtime_ns))
    return atime


def control(tmp_path: Path, mark: str) -> tuple[dict, dict]:
    """The bit between plain processes of one uid: (seen at once, seen after the sender ended)."""
    code = source(mark)
    own_tmp = tmp_path / "sender-tmp"
    own_tmp.mkdir()
    env = {"PATH": "/usr/bin:/bin", "TMPDIR": str(own_tmp)}
    receiver = subprocess.Popen([sys.executable, "-I", "-c", code + "\nimport sys\nprint('READY', flush=True)\n"
                                 "receive(sys.stdin.readline())"],
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env)
    assert receiver.stdout.readline() == "READY\n"  # its signal handler and inotify watch are in place
    sender = subprocess.Popen([sys.executable, "-I", "-c", code + "\nimport sys\nsend(sys.argv[1])\nsys.stdin.read()",
                               json.dumps({"peer_pid": receiver.pid, "shared": str(SHARED), "atime_file": str(ATIME)})],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env)
    try:
        atime = set_atime()
        out = ""
        while "DONE send" not in out:
            out += sender.stdout.readline()
            assert sender.poll() is None or "DONE send" in out, out
        pid, tmp = out.split("DONE send ", 1)[1].split()
        args = json.dumps({"sender_pid": int(pid), "sender_tmp": tmp, "shared": str(SHARED),
                           "unshared": str(UNSHARED), "atime_file": str(ATIME), "atime_ns": atime})
        at_once = receiver.communicate(args + "\n", timeout=60)[0]
    finally:
        sender.stdin.close()
        sender.wait(10)
        receiver.kill()
    later = subprocess.run([sys.executable, "-I", "-c", code + "\nimport sys\nreceive(sys.argv[1])", args],
                           capture_output=True, text=True, env=env, timeout=60).stdout
    subprocess.run([sys.executable, "-I", "-c", code + "\nclean()"], env=env, timeout=60, check=True)
    return seen(at_once), seen(later)


@pytest.fixture
def arena(monkeypatch):
    root = Path(tempfile.mkdtemp(prefix="autograder-channels-"))
    root.chmod(0o755)
    monkeypatch.setattr(sandbox, "CHILD_ROOT", str(root))
    yield root
    shutil.rmtree(root, ignore_errors=True)


def call(child: sandbox.Child, fn: str, args: dict) -> None:
    reply = child.request({"op": "call", "fn": fn, "args": [json.dumps(args)], "kwargs": {}, "grad": []}, timeout=60)
    assert reply.get("ok"), reply


def test_no_bit_crosses_between_two_children(tmp_path, arena):
    level = os.environ.get("AUTOGRADER_EXPECT_LEVEL")  # .ci/run's Docker-level step names the level it built
    iso = isolation.detect()
    assert not level or iso.describe().startswith(level), iso.describe()
    mark = f"autograder-chan-{uuid.uuid4().hex[:8]}"
    wanted = {c for c, present in CONDITIONAL.items() if not present()}
    control_now, control_later = control(tmp_path, mark)
    carried = {c for c, v in control_now.items() if v.startswith("GOT")}
    blind = set(control_now) - carried - wanted
    assert not blind, f"the control shows no bit through {sorted(blind)}: the probe is blind there"

    path = tmp_path / "rlhf.py"
    path.write_text(source(mark + "-sandboxed"))
    limits = config.load().limits
    receiver = sandbox.Child(path, limits, iso)
    sender = later = None
    try:
        sender = sandbox.Child(path, limits, iso)
        atime = set_atime()
        call(sender, "send", {"peer_pid": receiver.proc.pid, "shared": str(SHARED), "atime_file": str(ATIME)})
        sent = wait_for(sender.output.text, "DONE send")
        tmp = sent.split("DONE send ", 1)[1].split()[1]
        args = {"sender_pid": sender.proc.pid, "sender_tmp": tmp, "shared": str(SHARED), "unshared": str(UNSHARED),
                "atime_file": str(ATIME), "atime_ns": atime}
        call(receiver, "receive", args)
        at_once = seen(wait_for(receiver.output.text, "DONE receive"))
        uids = [c.uid for c in (sender, receiver) if c.uid is not None]
        sender.kill()
        receiver.kill()
        assert not [obj for uid in uids for obj in ipc.owned_by(uid)], "a named object outlived its child"
        later = sandbox.Child(path, limits, iso)
        call(later, "receive", args)
        next_grade = seen(wait_for(later.output.text, "DONE receive"))
    finally:
        for child in (sender, receiver, later):
            if child is not None:
                child.kill()
    print(f"\nchannels at {iso.describe()} (sender: {', '.join(sent_lines(sent))})")
    print(f"{'channel':<34} {'control':<8} {'at once':<8} {'next grade':<10}  what the receiver saw at once")
    for channel in sorted(control_now):
        print(f"{channel:<34} {control_now[channel][:3]:<8} {at_once.get(channel, '?')[:3]:<8} "
              f"{next_grade.get(channel, '?')[:3]:<10}  {at_once.get(channel, '')[4:90]}")
    crossed = {c for c, v in at_once.items() if v.startswith("GOT")}
    crossed |= {c for c, v in next_grade.items() if v.startswith("GOT")}
    assert set(at_once) == set(next_grade) == set(control_now)
    assert control_later  # the control's later receiver ran (persistent channels show there)
    left_open = left_open_at(iso)
    if left_open:
        print(f"left open at this level: {left_open}")
    assert crossed <= set(left_open), {c: (at_once[c], next_grade[c]) for c in crossed}


def left_open_at(iso: isolation.Isolation) -> dict[str, str]:
    """Channels no layer closes at this level (docs/isolation.md): channel -> why."""
    options = _mount_options(ATIME).split(",")
    if iso.bwrap or options[0] != "rw" or "noatime" in options:
        return {}  # bubblewrap binds /usr and the packages read-only: reading updates no access time
    return {"atime": "a read updates a file's access time on a writable relatime mount, and stat shows it "
                     "to every later child (not on Docker's image layers: overlayfs reads them O_NOATIME)"}


def sent_lines(text: str) -> list[str]:
    return [line[5:] for line in text.splitlines() if line.startswith("SENT ")]
