"""A benchmark's own cgroup v1 groups: the whole process tree of a run, counted by the kernel.

    groups = Groups("bench-1", cpus=0.5, memory_mb=768)   # None: no quota, no limit (counted all the same)
    subprocess.run(argv, preexec_fn=groups.enter)           # the run and everything it starts
    groups.read()                                           # (CPU seconds, peak MB, OOM kills)
    groups.remove()

cpuacct.usage counts every process that ever ran in the group, reaped or not, sandboxed children in their own
namespaces or uid included (rusage misses the children a judge never waits for); memory.max_usage_in_bytes is
the group's peak (page cache the run reads included, as in Docker). Needs root and writable cgroup v1 cpu,
cpuacct and memory hierarchies (/sys/fs/cgroup/{cpu,cpuacct,memory}).
"""

from __future__ import annotations

import os
import time
from pathlib import Path

CGROUP_V1 = Path("/sys/fs/cgroup")
PERIOD_US = 100_000
CONTROLLERS = ("cpu", "cpuacct", "memory")


def available() -> str:
    """"" when groups can be made here, else why not."""
    if os.geteuid() != 0:
        return "not root"
    for controller in CONTROLLERS:
        try:
            if not os.access(_parent(controller), os.W_OK):
                return f"cgroup v1 {controller} is not writable"
        except SystemExit as exc:
            return str(exc)
    return ""


def _parent(controller: str) -> Path:
    """This process's own group of `controller` (new groups nest in it)."""
    for line in Path("/proc/self/cgroup").read_text().splitlines():
        _, controllers, path = line.split(":", 2)
        if controller in controllers.split(","):
            mount = next(m for m in (CGROUP_V1 / controllers, CGROUP_V1 / controller) if m.is_dir())
            return mount / path.lstrip("/")
    raise SystemExit(f"no cgroup v1 {controller} controller here")


class Groups:
    """cpu, cpuacct and memory groups of cgroup v1, nested in this process's own groups."""

    def __init__(self, name: str, cpus: float | None = None, memory_mb: int | None = None):
        self.dirs = {c: _parent(c) / name for c in CONTROLLERS}
        for d in self.dirs.values():
            d.mkdir()
        if cpus is not None:
            (self.dirs["cpu"] / "cpu.cfs_period_us").write_text(str(PERIOD_US))
            (self.dirs["cpu"] / "cpu.cfs_quota_us").write_text(str(int(cpus * PERIOD_US)))
        if memory_mb is not None:
            memory = self.dirs["memory"]
            (memory / "memory.limit_in_bytes").write_text(str(memory_mb << 20))
            if (memory / "memory.memsw.limit_in_bytes").exists():  # no swapping past the limit
                (memory / "memory.memsw.limit_in_bytes").write_text(str(memory_mb << 20))

    def enter(self) -> None:
        """Move the calling process (a child before exec) into the groups."""
        for d in self.dirs.values():
            (d / "cgroup.procs").write_text(str(os.getpid()))

    def pids(self) -> list[int]:
        return [int(p) for p in (self.dirs["memory"] / "cgroup.procs").read_text().split()]

    def read(self) -> tuple[float, float, int]:
        """(CPU seconds, peak MB, OOM kills) of everything that ran in the groups."""
        cpu = int((self.dirs["cpuacct"] / "cpuacct.usage").read_text()) / 1e9
        peak = int((self.dirs["memory"] / "memory.max_usage_in_bytes").read_text()) / 2**20
        oom = dict(line.split() for line in (self.dirs["memory"] / "memory.oom_control").read_text().splitlines())
        return cpu, peak, int(oom.get("oom_kill", 0))

    def remove(self) -> None:
        """Kill what is left of the run (only its own processes are in these groups) and remove the groups."""
        for pid in self.pids():
            try:
                os.kill(pid, 9)
            except ProcessLookupError:
                pass
        deadline = time.monotonic() + 10
        for d in self.dirs.values():
            while True:
                try:
                    d.rmdir()
                    break
                except OSError:
                    if time.monotonic() > deadline:
                        raise
                    time.sleep(0.1)
