"""The seccomp filter of the sandboxed child: a classic-BPF program, written by hand with `struct`.

Refused (the call fails with EPERM, nothing is killed): sockets other than AF_UNIX (no network even
if a namespace were missing), ptrace and cross-process memory access, new namespaces (unshare,
setns, clone with CLONE_NEW* flags), mount and the new mount API, chroot, memory the judge's poll
cannot see (System V shared memory, message queues and semaphores, memfd_create: the lab needs none
of them, torch's import included), and calls a grader's child never needs that widen the kernel's
attack surface (io_uring, which would bypass this filter, bpf, perf_event_open, userfaultfd,
keyrings, kernel modules, kexec, reboot, file handles).
clone3 answers ENOSYS, as in Docker's and Flatpak's profiles: its flags sit in memory a filter
cannot read, and glibc then falls back to clone, whose flags are checked.

Why by hand: the program is ~50 instructions, needs no library (libseccomp's Python binding is not on
PyPI as a wheel and its ctypes API differs across versions), and the syscall numbers below were
checked against the kernel headers (asm/unistd_64.h, asm-generic/unistd.h). Other architectures get
no filter, and the isolation report says so.

    program = seccomp.program()          # bytes of struct sock_filter[], or None on another arch
    bwrap --seccomp FD                   # reads those bytes (see autograder/isolation.py)
"""

from __future__ import annotations

import errno
import platform
import struct
import sys

# struct seccomp_data: int nr; u32 arch; u64 instruction_pointer; u64 args[6] (little-endian hosts)
NR, ARCH, ARG0 = 0, 4, 16
AUDIT_ARCH = {"x86_64": 0xC000003E, "aarch64": 0xC00000B7}
X32_SYSCALL_BIT = 0x40000000

RET_KILL_PROCESS, RET_ERRNO, RET_ALLOW = 0x80000000, 0x00050000, 0x7FFF0000
LD_W_ABS, JEQ, JGE, JSET, RET = 0x20, 0x15, 0x35, 0x45, 0x06

AF_UNIX = 1
CLONE_NEW_FLAGS = 0x7E020000  # NEWNS | NEWCGROUP | NEWUTS | NEWIPC | NEWUSER | NEWPID | NEWNET

SYSCALLS = {  # name: (x86_64, aarch64)
    "ptrace": (101, 117), "process_vm_readv": (310, 270), "process_vm_writev": (311, 271),
    "unshare": (272, 97), "setns": (308, 268), "clone": (56, 220), "clone3": (435, 435),
    "mount": (165, 40), "umount2": (166, 39), "pivot_root": (155, 41), "chroot": (161, 51),
    "open_tree": (428, 428), "move_mount": (429, 429), "fsopen": (430, 430), "fsconfig": (431, 431),
    "fsmount": (432, 432), "fspick": (433, 433), "mount_setattr": (442, 442),
    "socket": (41, 198), "socketpair": (53, 199),
    "io_uring_setup": (425, 425), "io_uring_enter": (426, 426), "io_uring_register": (427, 427),
    "bpf": (321, 280), "perf_event_open": (298, 241), "userfaultfd": (323, 282),
    "keyctl": (250, 219), "add_key": (248, 217), "request_key": (249, 218),
    "init_module": (175, 105), "finit_module": (313, 273), "delete_module": (176, 106),
    "kexec_load": (246, 104), "kexec_file_load": (320, 294), "reboot": (169, 142),
    "open_by_handle_at": (304, 265), "name_to_handle_at": (303, 264),
    "shmget": (29, 194), "shmat": (30, 196), "shmctl": (31, 195), "shmdt": (67, 197),
    "semget": (64, 190), "semop": (65, 193), "semctl": (66, 191), "semtimedop": (220, 192),
    "msgget": (68, 186), "msgsnd": (69, 189), "msgrcv": (70, 188), "msgctl": (71, 187),
    "memfd_create": (319, 279), "memfd_secret": (447, 447),
}
REFUSED = ("ptrace", "process_vm_readv", "process_vm_writev", "unshare", "setns", "mount", "umount2",
           "pivot_root", "chroot", "open_tree", "move_mount", "fsopen", "fsconfig", "fsmount", "fspick",
           "mount_setattr", "io_uring_setup", "io_uring_enter", "io_uring_register", "bpf",
           "perf_event_open", "userfaultfd", "keyctl", "add_key", "request_key", "init_module",
           "finit_module", "delete_module", "kexec_load", "kexec_file_load", "reboot",
           "open_by_handle_at", "name_to_handle_at", "shmget", "shmat", "shmctl", "shmdt", "semget", "semop",
           "semctl", "semtimedop", "msgget", "msgsnd", "msgrcv", "msgctl", "memfd_create", "memfd_secret")


def machine() -> str:
    return platform.machine()


def supported() -> bool:
    return sys.platform.startswith("linux") and machine() in AUDIT_ARCH


def program() -> bytes | None:
    """The filter as raw `struct sock_filter` entries, or None where this system is not covered."""
    if not supported():
        return None
    arch = machine()
    column = 0 if arch == "x86_64" else 1
    nr = {name: numbers[column] for name, numbers in SYSCALLS.items()}
    code: list = [  # (op, jump-if-true label or 0, jump-if-false label or 0, k)
        (LD_W_ABS, 0, 0, ARCH),
        (JEQ, 0, "kill", AUDIT_ARCH[arch]),  # a foreign ABI (int 0x80 on x86_64) is never allowed
        (LD_W_ABS, 0, 0, NR),
    ]
    if arch == "x86_64":
        code.append((JGE, "deny", 0, X32_SYSCALL_BIT))  # the x32 ABI reuses numbers under this bit
    code += [(JEQ, "deny", 0, nr[name]) for name in REFUSED]
    code += [(JEQ, "socket", 0, nr["socket"]), (JEQ, "socket", 0, nr["socketpair"]),
             (JEQ, "clone", 0, nr["clone"]), (JEQ, "nosys", 0, nr["clone3"]),
             (RET, 0, 0, RET_ALLOW),
             "socket", (LD_W_ABS, 0, 0, ARG0), (JEQ, "allow", "deny", AF_UNIX),
             "clone", (LD_W_ABS, 0, 0, ARG0), (JSET, "deny", "allow", CLONE_NEW_FLAGS),
             "allow", (RET, 0, 0, RET_ALLOW),
             "deny", (RET, 0, 0, RET_ERRNO | errno.EPERM),
             "nosys", (RET, 0, 0, RET_ERRNO | errno.ENOSYS),
             "kill", (RET, 0, 0, RET_KILL_PROCESS)]
    return _assemble(code)


def _assemble(code: list) -> bytes:
    """Resolve labels (strings placed before an instruction) into relative jump offsets."""
    labels: dict[str, int] = {}
    instructions: list[tuple] = []
    for item in code:
        if isinstance(item, str):
            labels[item] = len(instructions)
        else:
            instructions.append(item)

    def offset(target, at: int) -> int:
        if target == 0:
            return 0
        jump = labels[target] - at - 1
        if not 0 <= jump <= 255:
            raise ValueError(f"seccomp jump to {target} out of range")
        return jump

    return b"".join(struct.pack("=HBBI", op, offset(jt, i), offset(jf, i), k)
                    for i, (op, jt, jf, k) in enumerate(instructions))
