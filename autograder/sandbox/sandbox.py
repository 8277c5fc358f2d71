"""Start the sandboxed child that imports a submission, and talk to it under time and memory limits.

    child = Child(Path("lab.py"), limits)       # imports the submission; child.hello is its answer
    start_early(Path("lab.py"), limits)         # or: its interpreter starts now, while the judge prepares...
    child = started(Path("lab.py"), limits)     # ...and is handed over here (a fresh one if none was started)
    reply = child.request({"op": "call", ...}, timeout=20, what="function()")
    child.output.text(); child.kill()             # every process it started is gone after kill()

The child sees a private folder holding the worker (`autograder/sandbox/child/`), the given world and the
submission (copied without following links), and nothing of the judge: not the reference, not the
hidden tests, not grading.yaml (how, and what degrades without bubblewrap or root: see
autograder/sandbox/isolation.py and docs/isolation.md). Before any submission code runs, the worker drops to
its own uid, sets the rlimits and installs the seccomp filter where bubblewrap does not (without it, or in a warm
child: zygote.py). Output is drained concurrently into a capped buffer; what is past the cap is read, counted
and dropped (printing never stops the child: the time limits bound its cost). Every way of failing raises
ChildFailure with one plain sentence of the grader's own (no text or number of the child's choosing: textsafe
WORDS at most) and a `kind`: time, cpu, memory, signal, exit, protocol, unreadable; what the child itself said
or chose (its exit code or signal, its last output line, the frame it sent) is in `detail`, cleaned.
"""

from __future__ import annotations

import functools
import os
import re
import select
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from autograder.lab import arithmetic, config
from autograder.lab.config import Limits
from autograder.lab.paths import world_files
from autograder.sandbox import filetree, holder, ipc, isolation, textsafe, zygote
from autograder.sandbox.budget import CallClock
from autograder.sandbox.child import wire

CHILD_DIR = Path(__file__).with_name("child")
CHILD_FILES = ("worker.py", "wire.py", "confine.py", "probe.py")
POLL_SECONDS = 0.2     # how often memory is checked when no cgroup limits it, while a call runs
MEMORY_CHECK_SECONDS = 1.0  # across short calls: tmpfs files every poll, the tree's PSS (~5 ms to read) this often
KILL_SECONDS = 2.0     # how long kill() waits for every process of the child to be gone
CHILD_ROOT: str | None = None  # where the children's folders go (None: the system's temp folder)
SHARED_TEMP = ("/tmp", "/var/tmp", "/dev/shm")  # writable by anyone: cleaned of a child's files without bwrap
_TOLD: set[str] = set()  # leftovers already reported to staff (once each)
HOME_NAME = re.compile(r"autograder-child-(\d+)-(\d+)-.*")  # autograder-child-<judge's pid namespace>-<judge's pid>-...


DETAIL_CHARS = 500     # longest child-produced text kept in an error's `detail`
CLOCK_TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100  # units of /proc/PID/stat's times


class ChildFailure(Exception):
    """The child stopped answering. `str()` is the grader's sentence; `kind` one of the words above.

    `detail` is text the child produced (its last output line), cleaned, "" when none: it may carry a
    hidden input, so reports show it only where the test's inputs may be shown.
    """

    def __init__(self, message: str, kind: str, detail: str = ""):
        super().__init__(message)
        self.kind = kind
        self.detail = textsafe.clean(detail, DETAIL_CHARS)


class SandboxError(Exception):
    """The sandbox itself could not start: a problem of the grader's machine, not of the submission."""


def isolation_report() -> str:
    """The isolation this machine gives a child, in one line (shown in every report)."""
    return isolation.detect().describe()


class CappedBuffer:
    """Collects a stream's bytes up to a cap; the rest is read to the end, counted and dropped."""

    def __init__(self, cap: int):
        self.cap, self.data, self.dropped = cap, bytearray(), 0
        self.lock = threading.Lock()

    def drain(self, stream) -> None:
        for chunk in iter(lambda: stream.read1(1 << 20), b""):
            with self.lock:
                room = self.cap - len(self.data)
                if room > 0:
                    self.data += chunk[:room]
                self.dropped += max(0, len(chunk) - max(room, 0))

    def text(self) -> str:
        """The kept output, cleaned, and how much was dropped."""
        with self.lock:
            out = textsafe.clean(self.data.decode(errors="replace"), self.cap)
            dropped = self.dropped
        return out + (f"\n[... {dropped} more bytes of output were printed and not kept]" if dropped else "")


def copy_submission(source: Path, target: Path, max_bytes: int) -> None:
    """Copy the submission without following a link (a link to the reference must not be graded)."""
    try:
        fd = os.open(source, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError as exc:
        raise ChildFailure(f"{source.name} cannot be read ({exc.strerror}; links are not followed)",
                           "unreadable") from None
    with os.fdopen(fd, "rb") as f:
        info = os.fstat(f.fileno())
        if not stat.S_ISREG(info.st_mode):
            raise ChildFailure(f"{source.name} is not a regular file", "unreadable")
        if info.st_size > max_bytes:
            raise ChildFailure(f"{source.name} is too large ({info.st_size} bytes)", "unreadable")
        target.write_bytes(f.read(max_bytes))
    target.chmod(0o644)


class Child:
    """One running worker with one submission imported."""

    def __init__(self, submission: Path | None, limits: Limits, iso: isolation.Isolation | None = None,
                 program: str = "worker.py", wait: bool = True):
        """`program`: worker.py (imports `submission`), or probe.py (no submission; see preflight.py).
        `wait=False`: only start its interpreter (it waits for its set-up, nothing of the submission runs);
        `finish()` confines it and imports the submission."""
        self.limits, self.iso = limits, iso or isolation.detect()
        self.isolation = self.iso.describe()
        self._reason: str | None = None
        self.uid: int | None = None
        self._to_child = self._from_child = -1
        sweep_orphans(CHILD_ROOT or tempfile.gettempdir())
        self.home = Path(tempfile.mkdtemp(prefix=f"autograder-child-{isolation.pid_namespace()}-{os.getpid()}-",
                                          dir=CHILD_ROOT)).resolve()
        self.leaf: isolation.CgroupLeaf | None = None
        self.holder: holder.Holder | None = None  # a warm child's own bubblewrap sandbox (holder.py)
        self._bwrap_confines = bool(self.iso.bwrap)  # bubblewrap applies seccomp and says 128 + N for signal N
        self.hello: dict = {}
        self._owner = os.getpid()  # a forked judge (the second lane) never uses its parent's early children
        try:  # no child outlives a failed start, whatever failed
            self._start(submission, program)
            if wait:
                self.finish()
        except BaseException:
            self.kill()
            raise

    def finish(self) -> "Child":
        """Send the set-up and receive the import's answer (`hello`); kills the child on any failure."""
        try:
            self._drainer.start()
            self.hello = self._handshake()
        except BaseException:
            self.kill()
            raise
        return self

    def _handshake(self) -> dict:
        """Send the set-up, then receive the import's answer: {"ok": True} or {"ok": False, "error": ...}.
        SandboxError before any submission code ran; ChildFailure for an answer unreadable or malformed."""
        timeout = self.limits.import_seconds
        wall = timeout * self.limits.wall_per_cpu
        deadline, clock = time.monotonic() + wall, CallClock(self.cpu_seconds)
        try:  # nothing of the submission has run yet: a failure here is the machine's, not the student's
            self._send(wire.encode(self._setup()), deadline, "starting the sandbox", wall)
            ready = self._receive(deadline, wall, "starting the sandbox", clock, timeout)
        except ChildFailure as exc:
            detail = f" ({exc.detail})" if exc.detail else ""
            raise SandboxError(f"the sandbox did not start: {exc}{detail}") from None
        if not ready.get("ready"):
            raise SandboxError("the sandbox could not confine the child: "
                               + textsafe.clean(str(ready.get("error")), DETAIL_CHARS))
        hello = self._receive(deadline, wall, "importing the submission", clock, timeout)
        if type(hello.get("ok")) is not bool:
            raise ChildFailure("importing the submission sent a malformed answer", "protocol")
        return hello

    def _start(self, submission: Path | None, program: str) -> None:
        for name in CHILD_FILES:
            shutil.copy(CHILD_DIR / name, self.home / name)
        (self.home / "world").mkdir()
        lab = config.current()
        for name, file in world_files().items():
            shutil.copy(file, self.home / "world" / name)
        (self.home / "submission").mkdir()
        sub = self.home / "submission" / lab.submission
        if submission is not None:
            copy_submission(Path(submission), sub, self.limits.file_bytes)
        (self.home / "tmp").mkdir()  # its writable folder without bubblewrap (with it: a private /tmp)
        private = self.iso.own_uid  # root-only until its uid is known (then root:uid 0750): no other child reads it
        for path in [self.home, *self.home.rglob("*")]:
            path.chmod((0o700 if private else 0o755) if path.is_dir() else (0o600 if private else 0o644))
        if self.iso.cgroup is not None:
            self.leaf = isolation.CgroupLeaf(self.iso.cgroup, self.limits.memory_mb << 20, self.limits.processes)
        to_child_r, self._to_child = os.pipe()
        self._from_child, from_child_w = os.pipe()
        passed = [to_child_r, from_child_w]
        seccomp_fd = None
        if self.iso.bwrap and self.iso.seccomp:
            seccomp_fd, w = os.pipe()  # a ~400-byte program: fits the pipe's buffer, no writer thread needed
            os.write(w, self.iso.seccomp)
            os.close(w)
            passed.append(seccomp_fd)
        inner = [sys.executable, "-I", "-u", "-B", str(self.home / program), str(sub), str(self.home / "world"),
                 str(to_child_r), str(from_child_w)]
        tmp = "/tmp" if self.iso.bwrap else str(self.home / "tmp")
        env = {"PATH": "/usr/bin:/bin", "HOME": tmp, "TMPDIR": tmp,
               "LANG": "C.UTF-8", "AUTOGRADER_CHILD": str(self.home), **arithmetic.CHILD_ENV}
        # -I ignores PYTHON* variables: -u (unbuffered: output kept at a kill), -B
        leaf = self.leaf
        try:
            forked = self._forked(program, inner[5:7], env, passed) if _warm(program, self.iso) else None
            self._bwrap_confines = self.iso.bwrap is not None and forked is None  # else the worker confines itself
            self.proc: zygote.Forked | subprocess.Popen = forked or subprocess.Popen(
                self.iso.command(self.home, inner, seccomp_fd, self.limits.tmp_mb << 20),
                stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, pass_fds=passed,
                cwd=self.home, env=env, start_new_session=True,
                preexec_fn=leaf.enter if leaf is not None else None)
        finally:
            for fd in passed:
                os.close(fd)
        os.set_blocking(self._to_child, False)
        os.set_blocking(self._from_child, False)  # read what is there, wait (select) only when nothing is
        self._reader = wire.FrameReader(self._from_child)
        self._memory_checked = self._resident_checked = time.monotonic()
        self._resident = 0.0
        self.output = CappedBuffer(self.limits.output_bytes)
        self._drainer = threading.Thread(target=self.output.drain, args=(self.proc.stdout,), daemon=True)
        # (started by finish(): no thread runs while the child only waits, so a judge may fork meanwhile)
        self.uid = isolation.UID_BASE + self.proc.pid if self.iso.own_uid else None
        if self.uid is not None:
            self._hand_over(self.uid)

    def _forked(self, program: str, argv: list[str], env: dict, passed: list[int]) -> zygote.Forked | None:
        """The child forked by the zygote (autograder/sandbox/zygote.py), in its cgroup leaf and, under bubblewrap,
        in its own sandbox's namespaces (holder.py); None when the zygote or bubblewrap cannot (a fresh child is
        started instead)."""
        out_r, out_w = os.pipe()
        try:
            if self.iso.bwrap:
                self.holder = holder.Holder(self.iso, self.home, self.limits.tmp_mb << 20, env,
                                            self.leaf.enter if self.leaf is not None else None)
            sandbox = self.holder.namespaces if self.holder is not None else []
            cwd = env["TMPDIR"] if self.holder is not None else str(self.home)  # as bubblewrap's --chdir /tmp
            pid = zygote.fork(self.home, program, argv, env, (passed[0], passed[1], out_w, *sandbox), cwd)
        except (zygote.ZygoteError, holder.HolderError) as exc:
            os.close(out_r)
            if self.holder is not None:
                self.holder.kill()
                self.holder = None
            print(f"autograder: a fresh child is started ({exc})", file=sys.stderr)
            return None
        finally:
            os.close(out_w)
            if self.holder is not None:
                self.holder.close_namespaces()
        proc = zygote.Forked(pid, os.fdopen(out_r, "rb"))
        if self.leaf is not None:
            self.leaf.add(proc.pid)  # before its set-up: every process it starts is in the leaf too
        return proc

    def _hand_over(self, uid: int) -> None:
        """Its folder becomes root:uid 0750 (0640 files): readable by this child only, writable by none
        but its tmp (uid:uid 0700). The worker still waits for its set-up, so nothing ran as uid yet."""
        for path in [self.home, *self.home.rglob("*")]:
            os.chown(path, 0, uid, follow_symlinks=False)
            path.chmod(0o750 if path.is_dir() else 0o640)
        os.chown(self.home / "tmp", uid, uid)
        (self.home / "tmp").chmod(0o700)

    def _setup(self) -> dict:
        """What the worker applies to itself before it imports the submission (see worker.confine)."""
        lim = self.limits
        rlimits = {"RLIMIT_CORE": [0, 0], "RLIMIT_FSIZE": [lim.file_bytes] * 2, "RLIMIT_NOFILE": [lim.open_files] * 2,
                   "RLIMIT_AS": [lim.address_space_mb << 20] * 2,
                   "RLIMIT_CPU": [int(lim.cpu_seconds), int(lim.cpu_seconds) + 1]}  # SIGXCPU, then SIGKILL
        program = list(self.iso.seccomp) if self.iso.seccomp and not self._bwrap_confines else None
        landlock = self.iso.landlock_rules(self.home) if self.iso.landlock else None
        return {"op": "setup", "uid": self.uid, "rlimits": rlimits, "processes": lim.processes, "seccomp": program,
                "landlock": landlock}

    # ------------------------------------------------------------------ talking to the child
    def request(self, message: dict, timeout: float | None = None, what: str = "the call",
                wall: float | None = None) -> dict:
        """Send `message`, return the child's answer. `timeout`: the CPU seconds the child may spend on it
        (default call_seconds); `wall`: the wall-clock backstop (default wall_per_cpu times `timeout`), for a
        call that waits without using CPU. Load on the machine or a CPU quota slows only the wall clock."""
        timeout = timeout or self.limits.call_seconds
        wall = wall or timeout * self.limits.wall_per_cpu
        deadline = time.monotonic() + wall
        self._send(wire.encode(message), deadline, what, wall)
        return self._receive(deadline, wall, what, CallClock(self.cpu_seconds), timeout)

    def send(self, message: dict, what: str, wall: float) -> None:
        """Send `message` within `wall` seconds, its answers read by `answer` (a batch of calls: child/worker.py)."""
        self._send(wire.encode(message), time.monotonic() + wall, what, wall)

    def answer(self, timeout: float | None = None, what: str = "the call", wall: float | None = None) -> dict:
        """The child's next answer (of a batch: each answer is one call's), within `timeout` CPU seconds (default
        call_seconds) counted from now, and the wall-clock backstop `wall` (default wall_per_cpu times `timeout`)."""
        timeout = timeout or self.limits.call_seconds
        wall = wall or timeout * self.limits.wall_per_cpu
        return self._receive(time.monotonic() + wall, wall, what, CallClock(self.cpu_seconds), timeout)

    def _send(self, data: bytes, deadline: float, what: str, timeout: float | None = None) -> None:
        view = memoryview(data)
        while view:  # write first (a frame usually fits the pipe at once), wait only when it is full
            try:
                view = view[os.write(self._to_child, view):]
                continue
            except BlockingIOError:
                pass
            except OSError:
                raise ChildFailure(*self._death(what)) from None
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([], [self._to_child], [], left)[1]:
                self._timeout(what, timeout or self.limits.import_seconds)

    def _receive(self, deadline: float, timeout: float, what: str, clock: CallClock | None = None,
                 cpu_limit: float = 0.0) -> dict:
        """The next answer; `deadline`/`timeout` the wall backstop, `clock`/`cpu_limit` the CPU limit."""
        while not self._reader.buffer:  # bytes kept from the last read are an answer already started
            left = deadline - time.monotonic()
            if select.select([self._from_child], [], [], max(0.0, min(left, POLL_SECONDS)))[0]:
                break
            if self._over_memory():
                self._stop("memory")
            elif left <= 0:
                self._timeout(what, timeout, cpu_limit)
            elif clock is not None and clock.spent() > cpu_limit:
                self._stop("time")
                self.kill()
                raise ChildFailure(f"{what} did not finish within {cpu_limit:g} s of CPU time (time limit) and was "
                                   "stopped", "time")
        if time.monotonic() - self._memory_checked >= POLL_SECONDS and self._over_memory(
                fresh_resident=time.monotonic() - self._resident_checked >= MEMORY_CHECK_SECONDS):
            self._stop("memory")  # calls shorter than a poll: memory (tmpfs files) held across them counts too
            raise ChildFailure(*self._death(what))
        try:
            message = self._reader.read(deadline)
        except TimeoutError:
            self._timeout(what, timeout, cpu_limit)
        except EOFError:
            raise ChildFailure(*self._death(what)) from None
        except wire.WireError as exc:
            self.kill()
            raise ChildFailure(f"{what} sent an unreadable answer ({textsafe.wire_words(str(exc))})", "protocol",
                               textsafe.clean(str(exc), DETAIL_CHARS)) from None
        if not isinstance(message, dict):
            self.kill()
            raise ChildFailure(f"{what} sent a malformed answer", "protocol")
        return message

    def _over_memory(self, fresh_resident: bool = True) -> bool:
        """Without a cgroup: does the child hold more than memory_mb (its tree's PSS and its tmpfs files)?
        `fresh_resident=False` reuses the last PSS (~3-5 ms to read) and reads only the tmpfs files."""
        self._memory_checked = time.monotonic()
        if self.leaf is not None:
            return False
        if fresh_resident:
            self._resident, self._resident_checked = self._resident_mb(), self._memory_checked
        return self._resident + self._tmpfs_mb() > self.limits.memory_mb

    def _timeout(self, what: str, timeout: float, cpu_limit: float = 0.0):
        """The wall-clock backstop: the child used less CPU than its limit, yet did not answer in time."""
        self._stop("time")
        self.kill()
        waiting = f" while using less than its {cpu_limit:g} s of CPU time (does it wait or sleep?)" if cpu_limit \
            else ""
        raise ChildFailure(f"{what} did not finish within {timeout:g} s of wall-clock time{waiting} (time limit) "
                           "and was stopped", "time")

    def _death(self, what: str) -> tuple[str, str, str]:
        """Why the channel closed, as (sentence, kind, detail)."""
        try:
            code = self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            code = None
        oom = self.leaf is not None and self.leaf.oom_kills() > 0
        self.kill()
        with self.output.lock:
            printed = self.output.data.decode(errors="replace").strip().splitlines()
        last = f"; last output: {printed[-1]}" if printed else ""
        lim = self.limits
        if self._reason == "memory" or oom:
            return (f"the submission ran out of memory (limit {lim.memory_mb} MB) during {what} and was stopped",
                    "memory", "")
        if code is None:
            return f"the submission closed its channel during {what}", "exit", ""
        signum = -code if code < 0 else code - 128 if self._bwrap_confines and code > 128 else 0  # bwrap: 128 + signal
        if signum in (signal.SIGXCPU,):
            return f"the submission used more than {lim.cpu_seconds:g} s of CPU time during {what}", "cpu", ""
        # The code and signal are the submission's choice (an input's digits): they go with the inputs, in detail.
        if signum in signal.Signals._value2member_map_:
            hint = " (out of memory or CPU time?)" if signum == signal.SIGKILL else ""
            return (f"the submission crashed (killed by a signal) during {what}", "signal",
                    textsafe.clean(f"signal {signum} ({signal.Signals(signum).name}){hint}{last}", DETAIL_CHARS))
        return (f"the submission exited during {what}", "exit",
                textsafe.clean(f"exit code {code}{last}", DETAIL_CHARS))

    # ------------------------------------------------------------------ processes
    def cpu_seconds(self) -> float:
        """CPU seconds of the child: its cgroup leaf's (every process it started, wherever reparented), else its
        live process tree's, user and system, its reaped descendants' included (/proc/PID/stat: ~30 us a process)."""
        in_leaf = self.leaf.cpu_seconds() if self.leaf is not None else None
        if in_leaf is not None:
            return in_leaf
        ticks = 0
        for pid in self._tree():
            try:
                with open(f"/proc/{pid}/stat", "rb") as f:
                    fields = f.read().rpartition(b")")[2].split()  # the name may hold spaces and parentheses
                ticks += sum(int(x) for x in fields[11:15])  # utime stime cutime cstime: fields 14-17 of stat(5)
            except (OSError, ValueError):
                continue
        return ticks / CLOCK_TICKS

    def _tree(self) -> list[int]:
        """The child's process tree (pids as the judge sees them), through /proc/PID/task/TID/children."""
        found, todo = [], [self.proc.pid]
        while todo:
            pid = todo.pop()
            found.append(pid)
            try:
                for tid in os.listdir(f"/proc/{pid}/task"):
                    with open(f"/proc/{pid}/task/{tid}/children") as f:
                        todo += [int(c) for c in f.read().split()]
            except OSError:
                continue
        return found

    def _resident_mb(self) -> float:
        """Proportional set size of the child's tree (forked copies share pages: RSS would count them twice)."""
        total = 0
        for pid in self._tree():
            try:
                with open(f"/proc/{pid}/smaps_rollup", "rb") as f:
                    total += next(int(line.split()[1]) for line in f if line.startswith(b"Pss:"))
            except (OSError, StopIteration, ValueError):
                continue
        return total / 1024

    def _tmpfs_mb(self) -> float:
        """What the child's files hold in memory-backed folders (tmpfs): its tmp, and without bubblewrap
        what its uid owns in the shared temp folders (with bubblewrap those are private and size-capped)."""
        if self.iso.bwrap:
            return 0.0
        total = filetree.allocated_bytes(self.home / "tmp") if _on_tmpfs(str(self.home / "tmp")) else 0
        if self.uid is not None:
            for folder in filter(_on_tmpfs, SHARED_TEMP):
                total += sum(filetree.allocated_bytes(e.path) for e in _entries_of(self.uid, folder))
        return total / (1 << 20)

    def members(self) -> set[int]:
        """Every live process of this child: its tree, its uid, or anything naming its folder (~30 ms)."""
        if not os.path.isdir("/proc"):  # not Linux: the process group is all kill() can reach
            return set()
        proc = getattr(self, "proc", None)
        found = set(self._tree()) if proc is not None and proc.returncode is None else set()  # reaped: pid reusable
        mark = str(self.home).encode()
        for name in filter(str.isdigit, os.listdir("/proc")):
            try:
                if self.uid is not None and _uids(int(name)) & {self.uid}:
                    found.add(int(name))
                    continue
                for part in ("cmdline",) if self.uid is not None else ("cmdline", "environ"):
                    with open(f"/proc/{name}/{part}", "rb") as f:
                        if mark in f.read():
                            found.add(int(name))
                            break
            except OSError:
                continue
        found.discard(os.getpid())
        return {pid for pid in found if isolation.alive(pid)}

    def _stop(self, reason: str | None) -> None:
        """Kill everything the child started (first reason wins); collecting is kill()'s job."""
        if reason and not self._reason:
            self._reason = reason
        if self.leaf is not None:
            self.leaf.kill()
        leaders = [getattr(self, "proc", None), self.holder.proc if self.holder is not None else None]
        for leader in filter(None, leaders):
            try:  # the group outlives the leader when it left children behind: always kill it
                os.killpg(leader.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass

    def kill(self) -> None:
        """Kill every process of the child, collect its last output, remove its folder and cgroup."""
        self._stop(None)
        deadline = time.monotonic() + KILL_SECONDS
        proc = getattr(self, "proc", None)
        while True:
            if proc is not None and proc.poll() is None:
                try:
                    proc.wait(timeout=0.2)
                except subprocess.TimeoutExpired:
                    pass
            left = self.members() if time.monotonic() < deadline else set()
            if not left:
                break
            for pid in left:
                try:
                    os.kill(pid, signal.SIGKILL)
                except (ProcessLookupError, PermissionError):
                    pass
            time.sleep(0.01)
        if isinstance(proc, zygote.Forked) and proc.returncode is None:
            try:  # its end, and its CPU for the grade's budget, as the zygote reaped it
                proc.wait(timeout=KILL_SECONDS)
            except subprocess.TimeoutExpired:
                pass
        if self.holder is not None:
            self.holder.kill()
            self.holder = None
        drainer = getattr(self, "_drainer", None)  # none when the start was interrupted before it was made
        if drainer is not None and drainer.ident is not None:
            drainer.join(timeout=1)
        for fd in (self._to_child, self._from_child):
            if fd >= 0:
                os.close(fd)
        self._to_child = self._from_child = -1
        if self.leaf is not None:
            self.leaf.remove()
            self.leaf = None
        if self.uid is not None and not self.iso.bwrap:  # no private /tmp or IPC namespace: remove its leftovers
            for folder in SHARED_TEMP:
                _remove_owned_by(self.uid, folder)
            ipc.remove_owned_by(self.uid)
        _remove(self.home)


_EARLY: dict[tuple, Child] = {}  # children started ahead of need, by (submission, limits, program)


def _early_key(submission: Path | None, limits: Limits, program: str) -> tuple:
    return (str(Path(submission).resolve()) if submission is not None else None, limits, program)


def _warm(program: str, iso: isolation.Isolation) -> bool:
    """Whether this child is forked by the zygote: a worker where the zygote serves; the secrets probe imports no
    torch (~0.1 s fresh), so it starts at once instead of waiting for the zygote's import."""
    return program == "worker.py" and zygote.serves(iso)


def start_early(submission: Path | None, limits: Limits, iso: isolation.Isolation | None = None,
                program: str = "worker.py") -> None:
    """Start a child's interpreter now (its ~1 s of imports overlap the judge's preparation); `started` with the
    same arguments hands it over. Nothing of the submission runs before then. A start that fails here is
    forgotten: the start at hand-over says why."""
    if _warm(program, iso or isolation.detect()):
        zygote.start()  # its children are forked in milliseconds once it has imported torch
        return
    key = _early_key(submission, limits, program)
    if key in _EARLY:
        return
    try:
        _EARLY[key] = Child(submission, limits, iso, program, wait=False)
    except (ChildFailure, SandboxError, OSError):
        pass


def started(submission: Path | None, limits: Limits, iso: isolation.Isolation | None = None,
            program: str = "worker.py") -> Child:
    """A child with `submission` imported: the one `start_early` started for these arguments, else a new one."""
    early = _EARLY.pop(_early_key(submission, limits, program), None)
    if early is not None and early._owner == os.getpid() and early.iso == (iso or isolation.detect()):
        return early.finish()
    if early is not None and early._owner == os.getpid():
        early.kill()
    return Child(submission, limits, iso, program)


def discard_early() -> None:
    """The grade's end: kill the children started early and never handed over, and stop the zygote (a kept one,
    zygote.keep, kills and reaps its children instead)."""
    while _EARLY:
        child = _EARLY.popitem()[1]
        if child._owner == os.getpid():
            child.kill()
    zygote.stop()


def _forget_early() -> None:
    """In a forked judge: its parent's early children are not its own (their parent kills them); it closes its
    copies of their channels."""
    for child in _EARLY.values():
        for fd in (child._to_child, child._from_child):
            if fd >= 0:
                os.close(fd)
        if child.proc.stdout is not None:
            child.proc.stdout.close()
    _EARLY.clear()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_early)


def sweep_orphans(root: str) -> None:
    """Remove what the children of dead judges left in `root`. A judge killed mid-grade (SIGKILL, the OOM
    killer, grade-all's job limit) cannot clean up: its child's folder, which holds a copy of a submission,
    would stay, readable by whichever later child is given the same uid. Only folders of this pid namespace
    whose judge is gone are removed; without bubblewrap, so are their uid's files in the shared temp
    folders and its IPC objects, unless a live process holds that uid (a new child given it already)."""
    if not isolation.pid_namespace():  # no /proc: whether a judge lives cannot be told
        return
    try:
        entries = list(os.scandir(root))
    except OSError:
        return
    for entry in entries:
        name = HOME_NAME.fullmatch(entry.name)
        if (not name or int(name[1]) != isolation.pid_namespace() or isolation.alive(int(name[2]))
                or entry.path in _TOLD):
            continue  # (one that could not be removed is not walked again by this process)
        try:
            info = entry.stat(follow_symlinks=False)
        except OSError:
            continue
        if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.geteuid():
            continue
        _remove(entry.path)
        uid = info.st_gid  # root:uid once handed over
        if os.geteuid() == 0 and uid >= isolation.UID_BASE and not _uid_in_use(uid):
            for folder in SHARED_TEMP:
                _remove_owned_by(uid, folder)
            ipc.remove_owned_by(uid)



def _uid_in_use(uid: int) -> bool:
    for name in filter(str.isdigit, os.listdir("/proc")):
        try:
            if uid in _uids(int(name)):
                return True
        except (OSError, StopIteration):
            continue
    return False


def _entries_of(uid: int, folder: str) -> list[os.DirEntry]:
    """The entries of `folder` that belong to `uid` (links not followed)."""
    try:
        return [e for e in os.scandir(folder) if e.stat(follow_symlinks=False).st_uid == uid]
    except OSError:
        return []


def _remove_owned_by(uid: int, folder: str) -> None:
    """Delete the entries of `folder` that belong to `uid` (without following links)."""
    for entry in _entries_of(uid, folder):
        _remove(entry.path)


def _remove(path: str | Path) -> None:
    """Remove what a child left (filetree: any depth, mode, link or name; never raises). What stays is said
    once to staff, on stderr (never in a report): grading goes on, and a later sweep tries again."""
    left = filetree.remove_tree(path)
    if left and str(path) not in _TOLD:
        _TOLD.add(str(path))
        try:
            print(f"autograder: could not remove {str(path)!r}, left by a sandboxed child: {len(left)} entries stay "
                  f"(the first: {left[0]!r}); grading goes on, remove it by hand", file=sys.stderr)
        except (OSError, ValueError):  # stderr closed or a broken pipe: cleanup still never raises
            pass


@functools.lru_cache(maxsize=64)
def _on_tmpfs(path: str) -> bool:
    """True when `path` lies on a memory-backed file system (the longest matching mount in mountinfo)."""
    best, fstype = "", ""
    try:
        with open("/proc/self/mountinfo") as f:
            for line in f:
                fields = line.split()
                mount, kind = fields[4], fields[fields.index("-") + 1]
                if (path == mount or path.startswith(mount.rstrip("/") + "/")) and len(mount) >= len(best):
                    best, fstype = mount, kind
    except (OSError, ValueError, IndexError):
        return False
    return fstype in ("tmpfs", "ramfs", "shmfs")


def _uids(pid: int) -> set[int]:
    """Real, effective, saved and file-system uid of a process."""
    with open(f"/proc/{pid}/status", "rb") as f:
        line = next(line for line in f if line.startswith(b"Uid:"))
    return {int(x) for x in line.split()[1:]}


