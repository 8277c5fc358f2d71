"""What this process may really use of the machine: CPUs (affinity and cgroup quota) and memory (cgroup limit).

    usable_cpus()          # 0.5 in a Gradescope container with a 0.5-CPU quota, 2.0 on an idle 2-core box
    memory_limit_bytes()   # 805306368 under a 768 MB cgroup limit, None when nothing limits this process

`os.cpu_count()` reports the host's cores even inside a container; these read what the kernel will
actually grant: the CPUs of the affinity mask, capped by the CFS quota of this process's cgroup and
of every ancestor cgroup visible (v1 `cpu.cfs_quota_us / cpu.cfs_period_us`, v2 `cpu.max`), and the
smallest memory limit on the way up (v1 `memory.limit_in_bytes`, v2 `memory.max`). Unreadable or
absent files mean "no limit there". Linux only; elsewhere: `os.cpu_count()` and None.
"""

from __future__ import annotations

import os
from pathlib import Path

CGROUP_ROOT = Path("/sys/fs/cgroup")
PROC_CGROUP = Path("/proc/self/cgroup")
V1_NO_LIMIT = 1 << 62  # v1 reports "no memory limit" as a huge page-rounded number (9223372036854771712)


def usable_cpus(proc_cgroup: Path = PROC_CGROUP, root: Path = CGROUP_ROOT) -> float:
    """CPUs this process may use: min(affinity mask size, every cgroup CPU quota above it), > 0."""
    try:
        cpus = float(len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        cpus = float(os.cpu_count() or 1)
    quotas = [q for d in _cgroup_dirs(proc_cgroup, root, "cpu") if (q := _cpu_quota(d)) is not None]
    return min([cpus, *quotas])


def memory_limit_bytes(proc_cgroup: Path = PROC_CGROUP, root: Path = CGROUP_ROOT) -> int | None:
    """The smallest cgroup memory limit over this process's cgroup and its ancestors, or None."""
    limits = [m for d in _cgroup_dirs(proc_cgroup, root, "memory") if (m := _memory_limit(d)) is not None]
    return min(limits) if limits else None


def _cpu_quota(folder: Path) -> float | None:
    """CPUs granted by the quota in `folder` (v2 cpu.max "max 100000" or "50000 100000"; v1 cfs files)."""
    v2 = _read(folder / "cpu.max")
    if v2 is not None:
        fields = v2.split()
        if len(fields) == 2 and fields[0] != "max":
            return _ratio(fields[0], fields[1])
        return None
    quota, period = _read(folder / "cpu.cfs_quota_us"), _read(folder / "cpu.cfs_period_us")
    if quota is None or period is None or quota.strip() == "-1":
        return None
    return _ratio(quota, period)


def _ratio(quota: str, period: str) -> float | None:
    try:
        q, p = int(quota), int(period)
    except ValueError:
        return None
    return q / p if q > 0 and p > 0 else None


def _memory_limit(folder: Path) -> int | None:
    for name in ("memory.max", "memory.limit_in_bytes"):
        text = _read(folder / name)
        if text is not None:
            text = text.strip()
            if text == "max" or not text.isdigit() or int(text) >= V1_NO_LIMIT:
                return None
            return int(text)
    return None


def _cgroup_dirs(proc_cgroup: Path, root: Path, controller: str) -> list[Path]:
    """The folders of this process's cgroup and its ancestors for `controller` (v1 hierarchy, else v2).

    /proc/self/cgroup lines are "ID:CONTROLLERS:PATH" (v2: "0::PATH"). A v1 controller may be mounted
    alone (/sys/fs/cgroup/cpu) or with others (/sys/fs/cgroup/cpu,cpuacct); v2 lives at the root or
    under /sys/fs/cgroup/unified in a hybrid layout. Inside a container the path is often "/": the
    container's own cgroup is then the mount point itself.
    """
    text = _read(proc_cgroup)
    if text is None:
        return []
    v1, v2 = None, None
    for line in text.splitlines():
        parts = line.split(":", 2)
        if len(parts) != 3:
            continue
        if parts[0] == "0" and parts[1] == "":
            v2 = parts[2]
        elif controller in parts[1].split(","):
            v1 = (parts[1], parts[2])
    if v1 is not None:
        mounts = [root / v1[0], root / controller, *sorted(root.glob(f"*{controller}*"))]
        base = next((m for m in mounts if m.is_dir() and _has_files(m, controller)), None)
        return _ancestors(base, v1[1]) if base is not None else []
    if v2 is not None:
        base = next((m for m in (root, root / "unified") if (m / "cgroup.controllers").is_file()), None)
        return _ancestors(base, v2) if base is not None else []
    return []


def _has_files(folder: Path, controller: str) -> bool:
    probe = {"cpu": "cpu.cfs_period_us", "memory": "memory.limit_in_bytes"}[controller]
    return (folder / probe).exists()


def _ancestors(base: Path, path: str) -> list[Path]:
    """base/path, then each parent up to base itself (only those that exist)."""
    parts = [p for p in path.split("/") if p and p not in (".", "..")]
    dirs = [base.joinpath(*parts[:i]) for i in range(len(parts), -1, -1)]
    return [d for d in dirs if d.is_dir()]


def _read(path: Path) -> str | None:
    try:
        return path.read_text()
    except OSError:
        return None
