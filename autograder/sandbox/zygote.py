"""Warm children: fork each sandboxed worker from a process that has already imported torch (~5-10 ms a child, and
~0.05 s more for its own bubblewrap where there is one, instead of ~1 s of CPU for a fresh `python -I worker.py`).

    if zygote.serves(iso):
        pid = zygote.fork(home, "worker.py", [submission, world], env, (to_child_r, from_child_w, output_w), cwd)
        proc = zygote.Forked(pid, output)               # proc.poll(), proc.wait(timeout=5): as Popen's, told by it
    zygote.stop()                                        # the grade's end: the zygote and its children die

Where: wherever the judge is root, so each child gets a uid of its own (the zygote is root: a child cannot signal,
ptrace or read the /proc entries of it or of another child). A forked child confines itself as a fresh
`python -I worker.py` does (confine.py), from the same set-up frame, before any submission code runs: own uid, no
supplementary groups, rlimits, Landlock, seccomp, its own folder, session and descriptors (0-4 only). It shares
nothing writable with another child: its memory is a copy-on-write copy of the zygote's, which never ran submission
code and never receives anything a child wrote.
- Without bubblewrap (Docker's level, Gradescope's) that is all a fresh child has too.
- Under bubblewrap a fresh child is its own sandbox (pid, network, IPC, UTS, cgroup and mount namespaces, a private
  /tmp and /dev/shm, its own /proc). A warm child gets the same: the judge starts a bubblewrap with the fresh child's
  arguments around a process that only waits (holder.py), and the forked child joins its namespaces (NAMESPACES,
  child/zygote.enter_sandbox) and forks once more, into its pid namespace; that process runs the program (the judge
  sees, signals and kills it alone), while the one between waits for it and ends as it ends, so the zygote reaps
  its CPU. Two warm children of one grade share no namespace, as two fresh ones (docs/isolation.md, "Warm under
  bubblewrap").
A judge that is not root keeps fresh children (same uid: a child could signal the zygote), and so does
AUTOGRADER_WARM=0.

One zygote per judge process tree, started by the first child it serves (or by `start()`, early); it has one
control socket per lane: the second lane, forked from the first, takes the spare one. A grade's end stops it,
except in a process that grades one submission after another (validate's and grade-all's workers: `keep()`):
there it kills and reaps every child it forked and serves the next grade, saving that grade its start (a
python importing torch, ~1.5-2 s of CPU). It never ran submission code, so nothing of one grade is in it.
"""

from __future__ import annotations

import array
import errno
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from autograder.lab import arithmetic
from autograder.sandbox import isolation

CHILD_DIR = Path(__file__).with_name("child")
FILES = ("zygote.py", "worker.py", "wire.py", "confine.py")
# a bubblewrap sandbox's namespaces a warm child joins, in this order: the mount namespace last (it changes the root
# and /proc), the pid namespace takes effect for the process forked after the joins (child/zygote.enter_sandbox)
NAMESPACES = ("ipc", "net", "uts", "cgroup", "pid", "mnt")
LANES = 2
START_SECONDS = 120.0  # wall time the zygote may take to import torch (a loaded machine, 0.5 CPU)


class ZygoteError(Exception):
    """The zygote could not fork a child: the caller starts a fresh one."""


def serves(iso: isolation.Isolation) -> bool:
    """Whether children at this level are forked from the zygote (see the module docstring)."""
    return (iso.own_uid and os.geteuid() == 0 and sys.platform.startswith("linux")
            and os.environ.get("AUTOGRADER_WARM", "1") != "0")


class Forked:
    """A forked child's handle, like subprocess.Popen's: pid, returncode, poll(), wait(), stdout. Under bubblewrap
    pid is the process inside the child's own sandbox (holder.py) that runs its program."""

    def __init__(self, pid: int, stdout):
        assert _ZYGOTE is not None
        self.zygote, self.pid, self.stdout = _ZYGOTE, pid, stdout
        self.returncode: int | None = None

    def poll(self) -> int | None:
        if self.returncode is None:
            self.returncode = self.zygote.ended(self.pid)
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        deadline = None if timeout is None else time.monotonic() + timeout
        while self.poll() is None:
            left = None if deadline is None else deadline - time.monotonic()
            if left is not None and left <= 0:
                raise subprocess.TimeoutExpired(f"child {self.pid}", timeout or 0)
            self.zygote.read(min(left, 0.05) if left is not None else 0.05)
        assert self.returncode is not None
        return self.returncode


class Zygote:
    def __init__(self) -> None:
        self.home = Path(tempfile.mkdtemp(prefix=f"autograder-child-{isolation.pid_namespace()}-{os.getpid()}-zygote-"))
        self.home.chmod(0o700)  # root's alone: no child may read or run anything of it
        for name in FILES:
            shutil.copy(CHILD_DIR / name, self.home / name)
        (self.home / "tmp").mkdir(mode=0o700)
        pairs = [socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET) for _ in range(LANES)]
        self.sockets = [mine for mine, _ in pairs]
        theirs = [their for _, their in pairs]
        env = {"PATH": "/usr/bin:/bin", "HOME": str(self.home / "tmp"), "TMPDIR": str(self.home / "tmp"),
               "LANG": "C.UTF-8", **arithmetic.CHILD_ENV}  # its children compute with the kernels it chose
        try:
            self.proc = subprocess.Popen(
                [sys.executable, "-I", "-u", "-B", str(self.home / "zygote.py"), *(str(s.fileno()) for s in theirs)],
                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, pass_fds=[s.fileno() for s in theirs],
                cwd=self.home, env=env, start_new_session=True)
        finally:
            for sock in theirs:
                sock.close()
        self.owner, self.lane, self.starter = os.getpid(), 0, os.getpid()
        self.ended_codes: dict[int, int] = {}
        self.reaped = 0.0  # CPU seconds of this lane's children that ended (the zygote reaps them, not the judge)

    @property
    def sock(self) -> socket.socket:
        return self.sockets[self.lane]

    def fork(self, home: Path, program: str, argv: list[str], env: dict, fds: tuple[int, ...],
             cwd: str) -> int:
        """Ask for a child; its pid (when `fds` carry its sandbox's namespaces: the process inside them). Raises
        ZygoteError when the zygote cannot (the caller starts a fresh one)."""
        message = json.dumps({"op": "fork", "home": str(home), "program": program, "argv": argv, "env": env,
                              "cwd": cwd})
        try:
            self.sock.sendmsg([message.encode()], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", fds))])
            deadline = time.monotonic() + START_SECONDS
            while True:
                answer = self._next(deadline - time.monotonic())
                if answer is None:  # it holds the request and `fds`: it must never fork it late (the fresh
                    self.proc.kill()  # child started instead has the same pipes), so it goes, children included
                    raise ZygoteError(f"the zygote did not answer within {START_SECONDS:g} s")
                if "pid" in answer or "error" in answer:
                    break
        except OSError as exc:
            self.proc.kill()
            raise ZygoteError(f"the zygote is gone ({errno.errorcode.get(exc.errno or 0, exc)})") from None
        if "error" in answer or type(answer.get("pid")) is not int:
            raise ZygoteError(str(answer.get("error", "malformed answer")))
        return answer["pid"]

    def read(self, timeout: float) -> None:
        """Take in what the zygote said within `timeout` seconds (ended children)."""
        try:
            self._next(timeout)
        except OSError:
            pass

    def _next(self, timeout: float) -> dict | None:
        """The zygote's next message, or None when none came within `timeout`; "ended" ones are recorded."""
        self.sock.settimeout(max(timeout, 0.0))
        try:
            data = self.sock.recv(1 << 16)
        except (socket.timeout, BlockingIOError):
            return None
        if not data:
            raise OSError(errno.EPIPE, "the zygote closed its socket")
        message = json.loads(data)
        if "ended" in message:
            self.ended_codes[int(message["ended"])] = int(message["code"])
            self.reaped += float(message.get("cpu", 0.0))
        return message

    def ended(self, pid: int) -> int | None:
        """The exit code of a child that ended (-N: signal N), None while it runs."""
        while pid not in self.ended_codes:
            try:
                if self._next(0) is None:
                    break
            except OSError:
                return None if isolation.alive(pid) else -9  # the zygote died: its children were killed with it
        return self.ended_codes.get(pid)

    def alive(self) -> bool:
        return isolation.alive(self.proc.pid)  # (a forked lane cannot wait for its parent's child)

    def end_grade(self) -> bool:
        """Have the zygote kill and reap every child it forked, and drop what the spare lanes' sockets still hold
        (their children's ends, which a later lane must not read as its own); False when it does not answer."""
        try:
            self.sockets[0].send(json.dumps({"op": "end-grade"}).encode())
            deadline = time.monotonic() + START_SECONDS
            while True:
                answer = self._next(deadline - time.monotonic())
                if answer is None:
                    return False
                if "cleared" in answer:
                    break
            for sock in self.sockets[1:]:
                blocking = sock.gettimeout()
                sock.settimeout(0)
                try:
                    while sock.recv(1 << 16):
                        pass
                except OSError:  # BlockingIOError: nothing more
                    pass
                finally:
                    sock.settimeout(blocking)  # as it was: the next grade's lane sends and reads on it
        except (OSError, ValueError):
            return False
        self.ended_codes.clear()  # pids of this grade's children: another may get one of them
        return self.alive()

    def close(self) -> None:
        """Close this process's sockets; the process that started the zygote also ends it (SIGKILL: it has nothing
        to save, its children die with it, and an interpreter holding torch takes ~0.4 s to exit by itself)."""
        for sock in self.sockets:
            sock.close()
        if self.starter != os.getpid():
            return
        self.proc.kill()
        self.proc.wait()
        shutil.rmtree(self.home, ignore_errors=True)


_ZYGOTE: Zygote | None = None
_STOPPED = 0.0  # reaped CPU of this process's zygotes stopped before (a counter only grows, as rusage's)
_KEEP = False   # keep(): a grade's end clears the zygote instead of stopping it


def keep(on: bool = True) -> None:
    """In a process that grades one submission after another: keep its zygote from one grade to the next (`on`),
    or no longer (then `stop()` ends it)."""
    global _KEEP
    _KEEP = on


def start() -> None:
    """Start the zygote now (its imports overlap the judge's work); a no-op when one runs."""
    global _ZYGOTE
    if _ZYGOTE is None or not _ZYGOTE.alive():
        if _ZYGOTE is not None:
            _ZYGOTE.close()
        _ZYGOTE = Zygote()


def reaped_cpu() -> float:
    """CPU seconds of the children this process had forked that ended (its budget counts them as reaped children)."""
    return _STOPPED + (_ZYGOTE.reaped if _ZYGOTE is not None and _ZYGOTE.owner == os.getpid() else 0.0)


def fork(home: Path, program: str, argv: list[str], env: dict, fds: tuple[int, ...], cwd: str) -> int:
    """The pid of a child forked by this process tree's zygote (started if none runs), which holds `fds` as its
    input, answers and output, works in `cwd` and (under bubblewrap) runs inside the namespaces of the further
    descriptors (NAMESPACES: its own sandbox's); raises ZygoteError (then start a fresh child)."""
    try:
        start()
    except OSError as exc:
        raise ZygoteError(f"the zygote does not start ({exc})") from None
    assert _ZYGOTE is not None
    return _ZYGOTE.fork(home, program, argv, env, fds, cwd)


def stop() -> None:
    """The end of a grade: close the zygote (it exits, and any child it forked that still runs dies with it), or
    where it is kept (`keep`), kill and reap its children and keep it for the next grade."""
    global _ZYGOTE, _STOPPED
    if _ZYGOTE is not None and _ZYGOTE.owner == os.getpid():
        if _KEEP and _ZYGOTE.starter == os.getpid() and _ZYGOTE.lane == 0 and _ZYGOTE.end_grade():
            return
        _STOPPED += _ZYGOTE.reaped
        _ZYGOTE.close()
    _ZYGOTE = None


def _take_spare() -> None:
    """In a forked judge (the second lane): use the zygote's next socket, close the parent's."""
    global _ZYGOTE, _STOPPED
    _STOPPED = 0.0  # a forked process's rusage of reaped children starts at 0 too
    z = _ZYGOTE
    if z is None:
        return
    os.close(z.sockets[z.lane].detach())  # the parent's lane: its copy here would keep the zygote alive
    if z.lane + 1 >= LANES:
        for sock in z.sockets[z.lane + 1:]:
            os.close(sock.detach())
        _ZYGOTE = None
        return
    z.lane += 1
    z.owner = os.getpid()
    z.ended_codes, z.reaped = {}, 0.0


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_take_spare)



