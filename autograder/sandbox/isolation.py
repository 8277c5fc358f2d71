"""What this machine offers to isolate the sandboxed child, and the command that starts it with all of it.

    iso = isolation.detect()           # probed once per judge process (one bubblewrap start, ~20 ms)
    iso.describe()                     # "bubblewrap + own uid + Landlock + seccomp + rlimits + memory polled
                                       #  (no cgroup)"
    argv = iso.command(home, [python, "-I", worker, ...], seccomp_fd, tmp_bytes)

Layers, each used when available and named in the report when missing:
  bubblewrap   fresh pid/net/ipc/uts/mount namespaces (and a user namespace when the judge is not
               root); a read-only view of the allow-list (autograder/sandbox/readable.py: /usr without its
               Python places, the interpreter, its standard library, the run-time distributions' files)
               and the child's folder; a private size-capped /tmp and /dev/shm; dies with the judge.
               Anything of the grader that lies inside a bound folder is covered.
  own uid      when the judge is root, the worker drops to a uid of its own (UID_BASE + the pid of the
               process that started it), with no supplementary groups: it can signal, ptrace or count
               as no other process, and the whole uid is killed at the end.
  Landlock     (Linux >= 5.13; needs neither root nor namespaces) the worker restricts itself to reading
               the same allow-list (of /proc: only its own /proc/PID) and writing its own tmp folder
               (autograder/sandbox/child/confine.py): the layer that hides the grader's files where bubblewrap
               cannot start (Docker's default profile).
  seccomp      autograder/sandbox/seccomp.py (network sockets, ptrace, namespaces, mounts, SysV IPC, POSIX queues,
               memfd, file locks, inotify refused: the audit is its docstring).
  cgroup v2    memory.max, memory.swap.max and pids.max for the child's leaf; used when a delegated
               folder is found: $AUTOGRADER_CGROUP, <cgroup2 mount>/autograder (docs/isolation.md shows how to
               make it) or the judge's own cgroup, whichever has memory and pids in cgroup.subtree_control.
               Without it the judge polls memory (PSS of the child's process tree, every 0.2 s).
AUTOGRADER_SANDBOX=rlimits forces the weakest level, without bubblewrap or Landlock (tests of degradation:
never for real grades, which the secrets preflight then refuses); AUTOGRADER_SANDBOX=bwrap makes a
missing bubblewrap an error (CI and Gradescope set-up must not degrade silently). Whatever the level,
a real grade first runs autograder/sandbox/preflight.py: a probe started exactly like the child must find no
secret readable, or the grade is refused.
"""

from __future__ import annotations

import functools
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from dataclasses import dataclass, field, replace
from pathlib import Path

from autograder.lab import paths
from autograder.sandbox import readable, seccomp, secret_files
from autograder.sandbox.child import confine

UID_BASE = 2_100_000_000   # child uids: UID_BASE + a pid (< 2**22), far above any system or subuid range
CGROUP_MOUNTS = (Path("/sys/fs/cgroup"), Path("/sys/fs/cgroup/unified"))
HOST_LINKS = readable.HOST_LINKS  # /bin, /lib...: symlinks into /usr (made as links), or folders
DEVICES = ("/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom")  # Landlock: read + write
PROC = (Path("/proc/self"), Path("/proc/cpuinfo"))  # Landlock: the child's own /proc/PID (opened by the child,
#  so "self" is its own) and what torch's import reads; not other processes' names, command lines, locks


class IsolationError(Exception):
    """AUTOGRADER_SANDBOX asks for a level this machine cannot give."""


@dataclass(frozen=True)
class Isolation:
    bwrap: str | None = None           # path of a bubblewrap that passed the probe
    own_uid: bool = False              # the judge is root: the child gets a uid of its own
    seccomp: bytes | None = None       # the BPF program (None: this architecture is not covered)
    landlock: int = 0                  # the kernel's Landlock ABI version (0: none)
    cgroup: Path | None = None         # a delegated cgroup v2 folder with memory and pids controllers
    notes: tuple[str, ...] = field(default=())  # why a layer is missing

    def describe(self) -> str:
        """One line for reports, e.g. "bubblewrap + own uid + seccomp + rlimits + cgroup memory limit"."""
        layers = ["bubblewrap" if self.bwrap else "no bubblewrap",
                  "own uid" if self.own_uid else "same uid as the grader",
                  "Landlock" if self.landlock else "no Landlock"]
        layers.append("seccomp" if self.seccomp else "no seccomp")
        layers.append("rlimits")
        memory = "memory polled (no cgroup)" if os.path.isdir("/proc") else "no memory limit (no /proc)"
        layers.append("cgroup memory limit" if self.cgroup else memory)
        return " + ".join(layers)

    def command(self, home: Path, inner: list[str], seccomp_fd: int | None, tmp_bytes: int,
                info_fd: int | None = None) -> list[str]:
        """argv that runs `inner` (the worker) in the sandbox; `home` is bound read-only at its own path. `info_fd`:
        where bubblewrap writes {"child-pid": PID}, the pid of the process in the sandbox (a warm child's holder)."""
        if not self.bwrap:
            return inner
        argv = [self.bwrap, "--unshare-pid", "--unshare-net", "--unshare-ipc", "--unshare-uts",
                "--unshare-cgroup-try", "--hostname", "sandbox", "--die-with-parent", "--new-session"]
        if os.geteuid() == 0:  # privileged bwrap, no user namespace; the worker drops to its own uid
            argv += ["--cap-drop", "ALL", "--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID"]
        else:
            argv += ["--unshare-user", "--disable-userns"]
        for link in HOST_LINKS:
            if os.path.islink(link):
                argv += ["--symlink", os.readlink(link), link]
        argv += ["--proc", "/proc", "--dev", "/dev",
                 "--perms", "1777", "--size", str(tmp_bytes), "--tmpfs", "/tmp",
                 "--perms", "1777", "--size", str(tmp_bytes), "--tmpfs", "/dev/shm"]
        seen = view()
        done: list[tuple[str, str]] = []  # the steps so far (kind, path + "/"): the latest holding a folder decides
        made = {"/", "/tmp"}
        for kind, path in [*seen.layers(), ("bind", home.resolve())]:
            for parent in map(str, reversed(path.parents)):  # missing folders on the way, traversable by its uid
                holder = next(((k, p) for k, p in reversed(done) if (parent + "/").startswith(p)), None)
                if parent not in made and (holder is None or holder[0] == "mask" and holder[1] != parent + "/"):
                    argv += ["--perms", "0755", "--dir", parent]
                    made.add(parent)
            done.append((kind, str(path).rstrip("/") + "/"))
            if kind == "mask":
                argv += ["--perms", "0755", "--tmpfs", str(path)] if path.is_dir() else \
                    ["--ro-bind", "/dev/null", str(path)]
            elif path.is_symlink():
                argv += ["--symlink", os.readlink(path), str(path)]
            else:
                argv += ["--ro-bind", str(path), str(path)]
        for secret in hidden():
            if seen.readable(secret):
                argv += ["--tmpfs", str(secret)] if secret.is_dir() else ["--ro-bind", "/dev/null", str(secret)]
        if seccomp_fd is not None:
            argv += ["--seccomp", str(seccomp_fd)]
        if info_fd is not None:
            argv += ["--info-fd", str(info_fd)]
        return argv + ["--chdir", "/tmp", "--", *inner]

    def landlock_rules(self, home: Path) -> dict:
        """What the child may reach under Landlock (confine.landlock): the same view as bubblewrap's."""
        read = [*_read_list(view(), tuple(hidden())), home.resolve(), *PROC]
        write = [Path("/tmp"), Path("/dev/shm")] if self.bwrap else [home.resolve() / "tmp"]
        return {"abi": self.landlock, "read": [str(p) for p in read], "write": [str(p) for p in write],
                "files": list(DEVICES), "listed": [str(p) for p in view().listed]}


@functools.lru_cache(maxsize=4)
def _read_list(seen: readable.View, secrets: tuple[Path, ...]) -> list[Path]:
    """Landlock's read rules for a view, carved around its masks and the secrets (memoised: the same per process)."""
    return [p for root, masks in seen.read_rules() for p in _carve(root, masks + list(secrets))]


def _carve(root: Path, secrets: list[Path]) -> list[Path]:
    """`root`, or, when secrets lie strictly inside it, the entries around them (Landlock only adds).
    A rule on a link is a rule on its target (a venv's lib64 -> lib): one whose target holds a secret,
    or lies in one, is left out (the target's own entries are carved where they lie)."""
    inside = [s for s in secrets if s != root and s.is_relative_to(root)]
    if not inside:
        return [root]
    kept = []
    for entry in sorted(root.iterdir()):
        if entry in inside:
            continue
        if entry.is_symlink():
            target = entry.resolve()
            if not any(s.is_relative_to(target) or target.is_relative_to(s) for s in secrets):
                kept.append(entry)
            continue
        kept += _carve(entry, inside) if any(s.is_relative_to(entry) for s in inside) else [entry]
    return kept


def view() -> readable.View:
    """What the child may read besides its own folder and /proc (autograder/sandbox/readable.py: an allow-list)."""
    return readable.view()


def read_roots() -> list[Path]:
    """The places the child's view shows (each with what `view().masked` hides inside it): where the
    content search looks for copies of the grader's secrets (the second line behind the allow-list)."""
    return [p for kind, p in view().layers() if kind == "bind" and not p.is_symlink()]


def _grader_folders() -> list[Path]:
    """The grader's own places: hidden whole wherever they lie inside a read root (a venv in the repository)."""
    package = paths.ENGINE.resolve()
    return [p for p in {paths.ROOT.resolve(), package, paths.SOLUTIONS.resolve(), paths.GRADING_YAML.resolve()}
            if p.exists() and p != Path("/")]


def secret_copies() -> list[secret_files.Copy]:
    """Every copy of the grader's secrets the child could read (found by content; memoised)."""
    return secret_files.copies(read_roots(), skip=[*_grader_folders(), *view().masked])


def hidden() -> list[Path]:
    """What the child must not see even where it lies inside a read root: the grader's own places, and
    every copy of its secrets beneath the read roots."""
    return _grader_folders() + [c.path for c in secret_copies()]


# ---------------------------------------------------------------------------------- detection
@functools.lru_cache(maxsize=1)
def detect() -> Isolation:
    """Probe the machine once: which layers work here."""
    wanted = os.environ.get("AUTOGRADER_SANDBOX", "auto")
    notes = []
    program = seccomp.program()
    if program is None:
        notes.append(f"no seccomp filter for {sys.platform} {seccomp.machine()}")
    iso = Isolation(own_uid=os.geteuid() == 0, seccomp=program, cgroup=find_cgroup())
    if iso.cgroup is None:
        notes.append("no delegated cgroup v2 with memory and pids controllers")
    if wanted != "rlimits":
        iso = replace(iso, landlock=confine.landlock_abi())
        if not iso.landlock:
            notes.append("no Landlock (it needs Linux >= 5.13 with landlock among the enabled LSMs)")
        found = shutil.which("bwrap")
        problem = _probe(replace(iso, bwrap=found)) if found else "bubblewrap is not installed"
        if problem is None:
            iso = replace(iso, bwrap=found)
        elif wanted == "bwrap":
            raise IsolationError(f"AUTOGRADER_SANDBOX=bwrap but {problem}")
        else:
            notes.append(problem)
    return replace(iso, notes=tuple(notes))


def _probe(iso: Isolation) -> str | None:
    """Start the real sandbox once with a trivial program; None when it works, else what went wrong."""
    home = Path(tempfile.gettempdir()) / f"autograder-probe-{uuid.uuid4().hex[:8]}"
    home.mkdir(mode=0o755)
    try:
        argv = iso.command(home, [sys.executable, "-I", "-S", "-c", ""], None, 1 << 20)
        done = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, timeout=60,
                              env={"PATH": "/usr/bin:/bin"})
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"bubblewrap does not start ({exc})"
    finally:
        home.rmdir()
    if done.returncode != 0:
        last = (done.stderr.decode(errors="replace").strip().splitlines() or ["?"])[-1]
        return f"bubblewrap does not work here ({last[:200]})"
    return None


def find_cgroup() -> Path | None:
    """A cgroup v2 folder we may create children in, with memory and pids enabled for them."""
    mount = next((m for m in CGROUP_MOUNTS if (m / "cgroup.controllers").is_file()), None)
    if mount is None:
        return None
    own = ""
    try:
        own = next(line[3:].strip() for line in Path("/proc/self/cgroup").read_text().splitlines()
                   if line.startswith("0::"))
    except (OSError, StopIteration):
        pass
    candidates = [Path(os.environ["AUTOGRADER_CGROUP"])] if os.environ.get("AUTOGRADER_CGROUP") else []
    candidates += [mount / "autograder", mount / own.lstrip("/")]
    for folder in candidates:
        try:
            enabled = set((folder / "cgroup.subtree_control").read_text().split())
        except OSError:
            continue
        if {"memory", "pids"} <= enabled and os.access(folder, os.W_OK):
            return folder
    return None


class CgroupLeaf:
    """The child's own cgroup under a delegated folder: memory and process limits, OOM count, kill-all."""

    def __init__(self, parent: Path, memory_bytes: int, processes: int):
        self.path = parent / f"autograder-{uuid.uuid4().hex[:12]}"
        self.path.mkdir()
        for name, value in (("memory.max", memory_bytes), ("memory.swap.max", 0), ("pids.max", processes)):
            if (self.path / name).exists():
                (self.path / name).write_text(str(value))
        self._procs = os.open(self.path / "cgroup.procs", os.O_WRONLY)

    def enter(self) -> None:
        """Runs in the forked child before exec (no allocation-heavy Python): move it into the leaf."""
        os.write(self._procs, b"0")

    def add(self, pid: int) -> None:
        """Move a process started another way (a child forked by the zygote) into the leaf."""
        os.write(self._procs, str(pid).encode())

    def oom_kills(self) -> int:
        try:
            events = dict(line.split() for line in (self.path / "memory.events").read_text().splitlines())
            return int(events.get("oom_kill", 0))
        except (OSError, ValueError):
            return 0

    def cpu_seconds(self) -> float | None:
        """CPU seconds of every process that ever ran in the leaf (cpu.stat's usage_usec), None if unreadable."""
        try:
            stat = dict(line.split() for line in (self.path / "cpu.stat").read_text().splitlines())
            return int(stat["usage_usec"]) / 1e6
        except (OSError, ValueError, KeyError):
            return None

    def kill(self) -> None:
        """SIGKILL every process in the leaf (cgroup.kill where the kernel has it, >= 5.14)."""
        try:
            if (self.path / "cgroup.kill").exists():
                (self.path / "cgroup.kill").write_text("1")
                return
            for pid in (self.path / "cgroup.procs").read_text().split():
                try:
                    os.kill(int(pid), signal.SIGKILL)
                except ProcessLookupError:
                    pass
        except OSError:
            pass

    def remove(self) -> None:
        """Kill what is left and delete the leaf (the kernel empties it within moments)."""
        os.close(self._procs)
        deadline = time.monotonic() + 2
        while True:
            self.kill()
            try:
                self.path.rmdir()
                return
            except OSError:
                if time.monotonic() > deadline:
                    return
                time.sleep(0.01)


@functools.lru_cache(maxsize=1)
def pid_namespace() -> int:
    """An id of this process's pid namespace: a pid names the same process only within one."""
    try:
        return os.stat("/proc/self/ns/pid").st_ino
    except OSError:
        return 0


alive = confine.alive  # a process that exists and is not a zombie (the child runtime's zygote asks it too)
