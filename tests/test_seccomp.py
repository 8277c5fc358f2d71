"""autograder/sandbox/seccomp.py: the numbers are the kernel's, and the program decides what its docstring says.

The program is run here by a small classic-BPF interpreter, on both architectures, for every syscall
number up to 460 (and the arguments the filter looks at); tests/test_sandbox.py probes it in real children.
"""

from __future__ import annotations

import errno
import re
import struct
from pathlib import Path

import pytest

from autograder.sandbox import seccomp

HEADERS = {"x86_64": [Path("/usr/include/x86_64-linux-gnu/asm/unistd_64.h"), Path("/usr/include/asm/unistd_64.h")],
           "aarch64": [Path("/usr/include/asm-generic/unistd.h")]}
NEWER_THAN_HEADERS = {"cachestat": 451}  # Linux 6.5: include/uapi/asm-generic/unistd.h, syscall_64.tbl
EPERM, ENOSYS = seccomp.RET_ERRNO | errno.EPERM, seccomp.RET_ERRNO | errno.ENOSYS


def header_numbers(arch: str) -> dict[str, int] | None:
    path = next((p for p in HEADERS[arch] if p.is_file()), None)
    if path is None:
        return None
    found: dict[str, int] = {}
    for name, number in re.findall(r"#define __NR(?:3264)?_(\w+)\s+(\d+)", path.read_text()):
        found.setdefault(name, int(number))
    return found


@pytest.mark.parametrize("arch", ["x86_64", "aarch64"])
def test_syscall_numbers_are_the_kernel_headers(arch):
    numbers = header_numbers(arch)
    if numbers is None:
        pytest.skip(f"no kernel headers for {arch} here (apt install linux-libc-dev)")
    column = 0 if arch == "x86_64" else 1
    wrong = {name: (ours[column], numbers.get(name, NEWER_THAN_HEADERS.get(name)))
             for name, ours in seccomp.SYSCALLS.items()
             if ours[column] != numbers.get(name, NEWER_THAN_HEADERS.get(name))}
    assert not wrong, f"(ours, the header's) for {arch}: {wrong}"


def run(program: bytes, arch: str, nr: int, args: tuple[int, ...] = (), audit_arch: int | None = None) -> int:
    """What the filter returns for one call (a classic-BPF interpreter for the opcodes seccomp.py emits)."""
    data = struct.pack("=iIQ6Q", nr, audit_arch or seccomp.AUDIT_ARCH[arch], 0, *(list(args) + [0] * (6 - len(args))))
    code = [struct.unpack("=HBBI", program[i:i + 8]) for i in range(0, len(program), 8)]
    pc, acc = 0, 0
    for _ in range(len(code) + 1):
        op, jt, jf, k = code[pc]
        if op == seccomp.LD_W_ABS:
            acc = struct.unpack_from("=I", data, k)[0]
            pc += 1
        elif op == seccomp.RET:
            return k
        else:
            taken = {seccomp.JEQ: acc == k, seccomp.JGT: acc > k, seccomp.JGE: acc >= k,
                     seccomp.JSET: bool(acc & k)}[op]
            pc += 1 + (jt if taken else jf)
    raise AssertionError("the program does not end")


@pytest.mark.parametrize("arch", ["x86_64", "aarch64"])
def test_the_program_refuses_exactly_the_refused_calls(arch, monkeypatch):
    monkeypatch.setattr(seccomp, "machine", lambda: arch)
    program = seccomp.program()
    assert program is not None and len(program) // 8 < 100
    column = 0 if arch == "x86_64" else 1
    nr = {name: n[column] for name, n in seccomp.SYSCALLS.items() if n[column] is not None}
    refused = {nr[name] for names in seccomp.REFUSED.values() for name in names if name in nr}
    special = {nr[name] for name in ("socket", "socketpair", "clone", "clone3", "fcntl")}
    for number in range(461):
        if number not in special:
            assert run(program, arch, number) == (EPERM if number in refused else seccomp.RET_ALLOW), number
    assert run(program, arch, nr["socket"], (seccomp.AF_UNIX,)) == seccomp.RET_ALLOW
    assert run(program, arch, nr["socketpair"], (2,)) == EPERM                      # AF_INET
    assert run(program, arch, nr["clone"], (0x11,)) == seccomp.RET_ALLOW             # SIGCHLD | ...: a fork
    assert run(program, arch, nr["clone"], (0x10000000,)) == EPERM                   # CLONE_NEWUSER
    assert run(program, arch, nr["clone3"]) == ENOSYS
    for cmd in range(2000):
        refused_cmd = any(lo <= cmd <= hi for lo, hi in seccomp.FCNTL_REFUSED)
        assert run(program, arch, nr["fcntl"], (3, cmd)) == (EPERM if refused_cmd else seccomp.RET_ALLOW), cmd
    assert run(program, arch, nr["fcntl"], (3, (1 << 32) | 1)) == seccomp.RET_ALLOW  # F_GETFD: the kernel's int
    assert run(program, arch, nr["clone"], (0x11,), audit_arch=0x40000003) == seccomp.RET_KILL_PROCESS  # i386
    if arch == "x86_64":
        assert run(program, arch, seccomp.X32_SYSCALL_BIT | 0) == EPERM


def test_every_refused_call_has_a_number_and_a_family():
    names = [name for family in seccomp.REFUSED.values() for name in family]
    assert len(names) == len(set(names)) and set(names) <= set(seccomp.SYSCALLS)
    doc = " ".join(seccomp.__doc__.split())
    assert not [family for family in seccomp.REFUSED if f"- {family}" not in doc], "the docstring says why, per family"
