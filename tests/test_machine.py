"""autograder.judge.machine reads CPUs and memory limits from fake cgroup trees (v1, v2, hybrid, none)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from autograder.judge import machine

AFFINITY = float(len(os.sched_getaffinity(0)))


def tree(tmp_path: Path, proc: str, files: dict[str, str]) -> tuple[Path, Path]:
    root = tmp_path / "cgroup"
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    (tmp_path / "proc_cgroup").write_text(proc)
    return tmp_path / "proc_cgroup", root


V1_PROC = "4:memory:/job\n2:cpu,cpuacct:/job\n0::/\n"


def test_v1_quota_and_limit(tmp_path):
    args = tree(tmp_path, V1_PROC, {
        "cpu,cpuacct/cpu.cfs_period_us": "100000\n", "cpu,cpuacct/cpu.cfs_quota_us": "-1\n",
        "cpu,cpuacct/job/cpu.cfs_period_us": "100000\n", "cpu,cpuacct/job/cpu.cfs_quota_us": "50000\n",
        "memory/memory.limit_in_bytes": "9223372036854771712\n",
        "memory/job/memory.limit_in_bytes": "805306368\n"})
    assert machine.usable_cpus(*args) == min(AFFINITY, 0.5)
    assert machine.memory_limit_bytes(*args) == 805306368


def test_v1_the_ancestor_limits(tmp_path):
    args = tree(tmp_path, "4:memory:/a/b\n1:cpu:/a/b\n", {
        "cpu/cpu.cfs_period_us": "100000", "cpu/cpu.cfs_quota_us": "-1",
        "cpu/a/cpu.cfs_period_us": "100000", "cpu/a/cpu.cfs_quota_us": "100000",
        "cpu/a/b/cpu.cfs_period_us": "100000", "cpu/a/b/cpu.cfs_quota_us": "-1",
        "memory/memory.limit_in_bytes": "9223372036854771712",
        "memory/a/memory.limit_in_bytes": "536870912",
        "memory/a/b/memory.limit_in_bytes": "9223372036854771712"})
    assert machine.usable_cpus(*args) == min(AFFINITY, 1.0)
    assert machine.memory_limit_bytes(*args) == 536870912


def test_v1_unlimited(tmp_path):
    args = tree(tmp_path, V1_PROC, {
        "cpu/cpu.cfs_period_us": "100000", "cpu/cpu.cfs_quota_us": "-1",
        "memory/memory.limit_in_bytes": "9223372036854771712"})
    assert machine.usable_cpus(*args) == AFFINITY
    assert machine.memory_limit_bytes(*args) is None


def test_container_sees_its_own_cgroup_as_the_root(tmp_path):
    # inside Docker /proc/self/cgroup says "/" (or a host path that is not mounted): the mount is the limit
    args = tree(tmp_path, "4:memory:/docker/abc\n1:cpu:/docker/abc\n", {
        "cpu/cpu.cfs_period_us": "100000", "cpu/cpu.cfs_quota_us": "150000",
        "memory/memory.limit_in_bytes": "805306368"})
    assert machine.usable_cpus(*args) == min(AFFINITY, 1.5)
    assert machine.memory_limit_bytes(*args) == 805306368


def test_v2(tmp_path):
    args = tree(tmp_path, "0::/grader/job\n", {
        "cgroup.controllers": "cpu memory pids", "grader/cpu.max": "max 100000",
        "grader/memory.max": "1073741824", "grader/job/cpu.max": "50000 100000",
        "grader/job/memory.max": "max"})
    assert machine.usable_cpus(*args) == min(AFFINITY, 0.5)
    assert machine.memory_limit_bytes(*args) == 1073741824


def test_v2_unlimited(tmp_path):
    args = tree(tmp_path, "0::/\n", {"cgroup.controllers": "cpu memory"})
    assert machine.usable_cpus(*args) == AFFINITY
    assert machine.memory_limit_bytes(*args) is None


def test_hybrid_reads_the_v2_hierarchy_when_v1_lacks_the_controller(tmp_path):
    args = tree(tmp_path, "1:name=systemd:/\n0::/u\n", {
        "unified/cgroup.controllers": "cpu memory", "unified/u/cpu.max": "200000 100000",
        "unified/u/memory.max": "2147483648"})
    assert machine.usable_cpus(*args) == min(AFFINITY, 2.0)
    assert machine.memory_limit_bytes(*args) == 2147483648


@pytest.mark.parametrize("garbage", ["", "nonsense", "0 100000", "-5 0"])
def test_unreadable_values_mean_no_limit(tmp_path, garbage):
    args = tree(tmp_path, "0::/\n", {"cgroup.controllers": "", "cpu.max": garbage, "memory.max": garbage})
    assert machine.usable_cpus(*args) == AFFINITY
    assert machine.memory_limit_bytes(*args) is None


def test_no_cgroup_file(tmp_path):
    assert machine.usable_cpus(tmp_path / "absent", tmp_path) == AFFINITY
    assert machine.memory_limit_bytes(tmp_path / "absent", tmp_path) is None


def test_this_machine():
    cpus, memory = machine.usable_cpus(), machine.memory_limit_bytes()
    assert 0 < cpus <= (os.cpu_count() or 1)
    assert memory is None or memory > 0
