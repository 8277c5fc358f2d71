"""Start the sandboxed child that imports a submission, and talk to it under time limits.

The child sees a private folder holding the worker (`autograder/child/`), the given world and the
submission, and nothing of the judge: not the reference, not the hidden tests, not grading.yaml.
It runs in its own session (so its whole process group can be killed), with a cleared environment,
resource limits, and its output drained concurrently into a capped buffer.
"""

from __future__ import annotations

import os
import resource
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from autograder.child import wire
from autograder.paths import ASSIGNMENT

CHILD_DIR = Path(__file__).with_name("child")
WORLD_FILES = ("tinylm.py", "lab_helpers.py", "training.py", "sft.pt")


@dataclass(frozen=True)
class Limits:
    """Resource limits of one child (the values live in grading.yaml's `limits`)."""

    call_seconds: float
    import_seconds: float
    memory_mb: int
    processes: int
    output_bytes: int
    file_bytes: int
    open_files: int


class ChildFailure(Exception):
    """The child stopped answering: timeout, crash, exit, or a broken channel. `str()` is a plain sentence."""


class CappedBuffer:
    """Collects a stream's bytes up to a cap, counting (not keeping) the rest."""

    def __init__(self, cap: int):
        self.cap, self.data, self.dropped = cap, bytearray(), 0
        self.lock = threading.Lock()

    def drain(self, stream) -> None:
        for chunk in iter(lambda: stream.read1(65536), b""):
            with self.lock:
                room = self.cap - len(self.data)
                self.data += chunk[:room]
                self.dropped += max(0, len(chunk) - room)

    def text(self) -> str:
        with self.lock:
            out = self.data.decode(errors="replace")
            return out + (f"\n[... {self.dropped} more bytes of output cut]" if self.dropped else "")


def _limit_resources(limits: Limits) -> None:
    """Runs in the child before exec: rlimits that hold for the child and everything it starts."""
    mem = limits.memory_mb << 20
    for rlim, value in ((resource.RLIMIT_CORE, 0), (resource.RLIMIT_FSIZE, limits.file_bytes),
                        (resource.RLIMIT_NOFILE, limits.open_files), (resource.RLIMIT_AS, 4 * mem)):
        resource.setrlimit(rlim, (value, value))
    if os.getuid() != 0:  # for root RLIMIT_NPROC is not enforced; the hardened sandbox handles that case
        resource.setrlimit(resource.RLIMIT_NPROC, (limits.processes, limits.processes))


class Child:
    """One running worker with one submission imported."""

    def __init__(self, submission: Path, limits: Limits):
        self.limits = limits
        self.home = Path(tempfile.mkdtemp(prefix="lab12-child-"))
        for name in ("worker.py", "wire.py"):
            shutil.copy(CHILD_DIR / name, self.home / name)
        world = self.home / "world"
        world.mkdir()
        for name in WORLD_FILES:
            shutil.copy(ASSIGNMENT / name, world / name)
        sub = self.home / "submission"
        sub.mkdir()
        shutil.copy(submission, sub / "rlhf.py")
        to_child_r, self._to_child = os.pipe()
        self._from_child, from_child_w = os.pipe()
        env = {"PATH": "/usr/bin:/bin", "HOME": str(self.home), "OMP_NUM_THREADS": "1",
               "MKL_NUM_THREADS": "1", "PYTHONDONTWRITEBYTECODE": "1", "PYTHONHASHSEED": "0"}
        self.proc = subprocess.Popen(
            [sys.executable, "-I", str(self.home / "worker.py"), str(sub / "rlhf.py"), str(world),
             str(to_child_r), str(from_child_w)],
            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
            pass_fds=(to_child_r, from_child_w), cwd=self.home, env=env, start_new_session=True,
            preexec_fn=lambda: _limit_resources(limits))
        os.close(to_child_r)
        os.close(from_child_w)
        self.output = CappedBuffer(limits.output_bytes)
        self._drainer = threading.Thread(target=self.output.drain, args=(self.proc.stdout,), daemon=True)
        self._drainer.start()
        self.hello = self._receive(limits.import_seconds, "importing rlhf.py")

    def request(self, message: dict, timeout: float | None = None, what: str = "the call") -> dict:
        try:
            wire.write_frame(self._to_child, message)
        except (BrokenPipeError, OSError):
            raise ChildFailure(self._death_sentence(what)) from None
        return self._receive(timeout or self.limits.call_seconds, what)

    def _receive(self, timeout: float, what: str) -> dict:
        deadline = time.monotonic() + timeout
        while True:
            ready, _, _ = select.select([self._from_child], [], [], max(0.0, deadline - time.monotonic()))
            if ready:
                break
            if time.monotonic() >= deadline:
                self.kill()
                raise ChildFailure(f"{what} did not finish within {timeout:g} s (time limit) and was stopped")
        try:
            return wire.read_frame(self._from_child)
        except EOFError:
            raise ChildFailure(self._death_sentence(what)) from None
        except wire.WireError as exc:
            self.kill()
            raise ChildFailure(f"{what} sent an unreadable answer ({exc})") from None

    def _death_sentence(self, what: str) -> str:
        try:
            code = self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.kill()
            return f"the submission closed its channel during {what}"
        self.kill()
        printed = self.output.text().strip().splitlines()
        last = f" (last output: {printed[-1][:200]})" if printed else ""
        if code < 0:
            name = signal.Signals(-code).name if -code in signal.Signals._value2member_map_ else str(-code)
            hint = " (out of memory?)" if -code == signal.SIGKILL else ""
            return f"the submission crashed with signal {-code} ({name}){hint} during {what}{last}"
        return f"the submission exited with code {code} during {what}{last}"

    def kill(self) -> None:
        """Kill the child's whole process group, collect its last output, remove its folder."""
        try:  # the group outlives the leader when it left children behind: always kill it
            os.killpg(self.proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            pass
        self._drainer.join(timeout=1)
        for fd in (self._to_child, self._from_child):
            if fd >= 0:
                os.close(fd)
        self._to_child = self._from_child = -1
        shutil.rmtree(self.home, ignore_errors=True)
