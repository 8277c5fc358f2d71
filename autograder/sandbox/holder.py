"""A warm child's own bubblewrap sandbox: the namespaces a fresh child gets, held open by a process that only waits.

    holder = Holder(iso, home, tmp_bytes, env, preexec)   # bubblewrap, exactly as for a fresh child, around a wait
    zygote.fork(..., (*channel, *holder.namespaces))      # the forked child joins them (child/zygote.enter_sandbox)
    holder.close_namespaces(); holder.kill()              # its sandbox ends: the kernel kills what is left in it

Under bubblewrap a fresh child is `bwrap ... python -I worker.py`: ~1 s of CPU to import torch. A warm child is
forked from the zygote instead, then enters the namespaces (zygote.NAMESPACES) of a bubblewrap started for it alone
with the same arguments (its own IPC, network, host name, cgroup and pid namespaces, and a mount namespace with the
same read-only view, its folder, a private size-capped /tmp and /dev/shm and its own /proc), whose one process waits
until its input closes. So two children of one grade share no namespace, as two fresh ones do (docs/isolation.md,
"Warm under bubblewrap").
"""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Callable

from autograder.sandbox import isolation, zygote

READY = b"."  # what the waiting process writes once bubblewrap has set its sandbox up and started it
WAIT = f"import os; os.write(1, {READY!r}); os.read(0, 1)"
START_SECONDS = 60.0  # wall time bubblewrap may take to start (a loaded machine, 0.5 CPU)


class HolderError(Exception):
    """The sandbox did not start: the caller starts a fresh child instead."""


class Holder:
    def __init__(self, iso: isolation.Isolation, home: Path, tmp_bytes: int, env: dict,
                 preexec: Callable[[], None] | None):
        info_r, info_w = os.pipe()
        try:
            argv = iso.command(home, [sys.executable, "-I", "-S", "-c", WAIT], None, tmp_bytes, info_fd=info_w)
            self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                         stderr=subprocess.DEVNULL, pass_fds=[info_w], cwd=home, env=env,
                                         start_new_session=True, preexec_fn=preexec)
        except OSError as exc:
            os.close(info_r)
            raise HolderError(f"bubblewrap does not start ({exc})") from None
        finally:
            os.close(info_w)
        self.namespaces: list[int] = []
        try:
            deadline = time.monotonic() + START_SECONDS
            inside = int(json.loads(_read_all(info_r, deadline))["child-pid"])
            assert self.proc.stdout is not None
            if _read_all(self.proc.stdout.fileno(), deadline, len(READY)) != READY:  # set up: it runs the wait
                raise HolderError("bubblewrap did not start its sandbox")
            self.namespaces = [os.open(f"/proc/{inside}/ns/{name}", os.O_RDONLY) for name in zygote.NAMESPACES]
        except (OSError, ValueError, KeyError, TypeError, HolderError) as exc:
            self.kill()
            raise HolderError(f"bubblewrap did not start its sandbox ({exc})") from None
        finally:
            os.close(info_r)

    def close_namespaces(self) -> None:
        """Once the child has joined them (the zygote holds its own copies until then)."""
        for fd in self.namespaces:
            os.close(fd)
        self.namespaces = []

    def kill(self) -> None:
        """End the sandbox (its pid namespace's first process dies: the kernel kills every other) and collect it."""
        self.close_namespaces()
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        for stream in filter(None, (self.proc.stdin, self.proc.stdout)):
            try:
                stream.close()
            except OSError:
                pass
        self.proc.wait()


def _read_all(fd: int, deadline: float, size: int = 1 << 16) -> bytes:
    """What `fd` holds until its end (or `size` bytes), by `deadline`."""
    data = b""
    while len(data) < size:
        left = deadline - time.monotonic()
        if left <= 0 or not select.select([fd], [], [], left)[0]:
            raise HolderError("bubblewrap did not answer in time")
        chunk = os.read(fd, size - len(data))
        if not chunk:
            break
        data += chunk
    return data
