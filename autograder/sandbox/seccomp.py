"""The seccomp filter of the sandboxed child: a classic-BPF program, written by hand with `struct`.

Refused (the call fails with EPERM, nothing is killed), by family: each is a call the child (the lab,
torch's import, a submission's honest code) has no use for, and that reaches outside its own process:

- network: sockets other than AF_UNIX (no network even if a namespace were missing); `bind` (a named
  unix socket is a name other processes can see: an abstract one in /proc/net/unix, a file one on disk);
- other processes: ptrace, process_vm_readv/writev, kcmp, pidfd_open/getfd/send_signal, process_madvise,
  process_mrelease (cross-uid use is refused by the kernel too: this removes the attack surface);
- namespaces and mounts: unshare, setns, clone with CLONE_NEW* flags, mount, umount2, pivot_root,
  chroot and the new mount API (open_tree, move_mount, fsopen, fsconfig, fsmount, fspick, mount_setattr);
- named IPC and hidden memory (names that outlive a process, memory the judge's poll cannot see):
  System V shared memory, message queues and semaphores, POSIX message queues (mq_open, mq_unlink, mq_timedsend,
  mq_timedreceive, mq_notify, mq_getsetattr: without bubblewrap a queue outlives the grade and its name
  is seen by every later child), memfd_create, memfd_secret, keyrings (add_key, request_key, keyctl);
- shared files (every child reads the same /usr, at once and with the next grade: a channel through them):
  file locks (flock, and fcntl's F_GETLK/F_SETLK/F_SETLKW, F_OFD_*, F_SETLEASE/F_GETLEASE, F_NOTIFY),
  inotify and fanotify (watches on a file another child opens), cachestat (what another read);
- attributes read by pid (another process can read them): setpriority, ioprio_set/get, sched_setaffinity,
  sched_setscheduler, sched_setparam, sched_setattr (the readers stay allowed: nothing they read varies);
- kernel attack surface: io_uring (it would bypass this filter), bpf, perf_event_open,
  userfaultfd, kernel modules, kexec, reboot, file handles (open_by_handle_at, name_to_handle_at).
clone3 answers ENOSYS, as in Docker's and Flatpak's profiles: its flags sit in memory a filter cannot
read, and glibc then falls back to clone, whose flags are checked. Foreign ABIs (x32, int 0x80) kill.

Allowed, because the child needs them and the kernel (own uid, Landlock) confines them: AF_UNIX
socketpair and connect (Landlock ABI 6 scopes abstract sockets and signals to the sandbox), kill and
tgkill (no other uid can be signalled), fcntl's other commands, getpriority and sched_get* (read-only),
prctl, mmap and mprotect, futex, eventfd, pipes, timers, signalfd.

Why by hand: the program is ~70 instructions, needs no library (libseccomp's Python binding is not on
PyPI as a wheel and its ctypes API differs across versions). The numbers below are those of the kernel
headers: x86_64 from asm/unistd_64.h, aarch64 from asm-generic/unistd.h (linux-libc-dev 6.1, checked
by tests/test_seccomp.py where the headers are installed); cachestat (Linux 6.5, newer than those
headers) is 451 on both (arch/x86/entry/syscalls/syscall_64.tbl, include/uapi/asm-generic/unistd.h).
Runs of consecutive refused numbers are tested as one range. Other architectures get no filter, and
the isolation report says so.

    program = seccomp.program()          # bytes of struct sock_filter[], or None on another arch
    bwrap --seccomp FD                   # reads those bytes (see autograder/sandbox/isolation.py)
"""

from __future__ import annotations

import errno
import platform
import struct
import sys

# struct seccomp_data: int nr; u32 arch; u64 instruction_pointer; u64 args[6] (little-endian hosts)
NR, ARCH, ARG0, ARG1 = 0, 4, 16, 24
AUDIT_ARCH = {"x86_64": 0xC000003E, "aarch64": 0xC00000B7}
X32_SYSCALL_BIT = 0x40000000

RET_KILL_PROCESS, RET_ERRNO, RET_ALLOW = 0x80000000, 0x00050000, 0x7FFF0000
LD_W_ABS, JEQ, JGT, JGE, JSET, RET = 0x20, 0x15, 0x25, 0x35, 0x45, 0x06

AF_UNIX = 1
CLONE_NEW_FLAGS = 0x7E020000  # NEWNS | NEWCGROUP | NEWUTS | NEWIPC | NEWUSER | NEWPID | NEWNET
FCNTL_REFUSED = ((5, 7), (36, 38), (1024, 1026))  # F_GETLK..F_SETLKW, F_OFD_GETLK..F_OFD_SETLKW,
#                                                    F_SETLEASE, F_GETLEASE, F_NOTIFY (both architectures)

SYSCALLS: dict[str, tuple[int, int | None]] = {  # name: (x86_64, aarch64); None where the architecture has no such call
    "ptrace": (101, 117), "process_vm_readv": (310, 270), "process_vm_writev": (311, 271), "kcmp": (312, 272),
    "pidfd_open": (434, 434), "pidfd_getfd": (438, 438), "pidfd_send_signal": (424, 424),
    "process_madvise": (440, 440), "process_mrelease": (448, 448),
    "unshare": (272, 97), "setns": (308, 268), "clone": (56, 220), "clone3": (435, 435),
    "mount": (165, 40), "umount2": (166, 39), "pivot_root": (155, 41), "chroot": (161, 51),
    "open_tree": (428, 428), "move_mount": (429, 429), "fsopen": (430, 430), "fsconfig": (431, 431),
    "fsmount": (432, 432), "fspick": (433, 433), "mount_setattr": (442, 442),
    "socket": (41, 198), "socketpair": (53, 199), "bind": (49, 200), "fcntl": (72, 25),
    "io_uring_setup": (425, 425), "io_uring_enter": (426, 426), "io_uring_register": (427, 427),
    "bpf": (321, 280), "perf_event_open": (298, 241), "userfaultfd": (323, 282),
    "keyctl": (250, 219), "add_key": (248, 217), "request_key": (249, 218),
    "init_module": (175, 105), "finit_module": (313, 273), "delete_module": (176, 106),
    "kexec_load": (246, 104), "kexec_file_load": (320, 294), "reboot": (169, 142),
    "open_by_handle_at": (304, 265), "name_to_handle_at": (303, 264),
    "shmget": (29, 194), "shmat": (30, 196), "shmctl": (31, 195), "shmdt": (67, 197),
    "semget": (64, 190), "semop": (65, 193), "semctl": (66, 191), "semtimedop": (220, 192),
    "msgget": (68, 186), "msgsnd": (69, 189), "msgrcv": (70, 188), "msgctl": (71, 187),
    "mq_open": (240, 180), "mq_unlink": (241, 181), "mq_timedsend": (242, 182), "mq_timedreceive": (243, 183),
    "mq_notify": (244, 184), "mq_getsetattr": (245, 185),
    "memfd_create": (319, 279), "memfd_secret": (447, 447),
    "flock": (73, 32), "inotify_init": (253, None), "inotify_init1": (294, 26), "inotify_add_watch": (254, 27),
    "fanotify_init": (300, 262), "fanotify_mark": (301, 263), "cachestat": (451, 451),
    "setpriority": (141, 140), "ioprio_set": (251, 30), "ioprio_get": (252, 31),
    "sched_setaffinity": (203, 122), "sched_setscheduler": (144, 119), "sched_setparam": (142, 118),
    "sched_setattr": (314, 274),
}
REFUSED = {  # family: calls refused with EPERM (the module docstring says why)
    "network": ("bind",),
    "other processes": ("ptrace", "process_vm_readv", "process_vm_writev", "kcmp", "pidfd_open", "pidfd_getfd",
                        "pidfd_send_signal", "process_madvise", "process_mrelease"),
    "namespaces and mounts": ("unshare", "setns", "mount", "umount2", "pivot_root", "chroot", "open_tree",
                              "move_mount", "fsopen", "fsconfig", "fsmount", "fspick", "mount_setattr"),
    "named IPC and hidden memory": ("shmget", "shmat", "shmctl", "shmdt", "semget", "semop", "semctl", "semtimedop",
                                    "msgget", "msgsnd", "msgrcv", "msgctl", "mq_open", "mq_unlink", "mq_timedsend",
                                    "mq_timedreceive", "mq_notify", "mq_getsetattr", "memfd_create", "memfd_secret",
                                    "add_key", "request_key", "keyctl"),
    "shared files": ("flock", "inotify_init", "inotify_init1", "inotify_add_watch", "fanotify_init",
                     "fanotify_mark", "cachestat"),
    "attributes read by pid": ("setpriority", "ioprio_set", "ioprio_get", "sched_setaffinity",
                               "sched_setscheduler", "sched_setparam", "sched_setattr"),
    "kernel attack surface": ("io_uring_setup", "io_uring_enter", "io_uring_register", "bpf", "perf_event_open",
                              "userfaultfd", "init_module", "finit_module", "delete_module", "kexec_load",
                              "kexec_file_load", "reboot", "open_by_handle_at", "name_to_handle_at"),
}


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
    nr: dict[str, int] = {name: n for name, numbers in SYSCALLS.items() if (n := numbers[column]) is not None}
    refused = [nr[name] for names in REFUSED.values() for name in names if name in nr]
    code: list = [  # (op, jump-if-true, jump-if-false, k): a label, 0 (the next instruction) or a count to skip
        (LD_W_ABS, 0, 0, ARCH),
        (JEQ, 0, "kill", AUDIT_ARCH[arch]),  # a foreign ABI (int 0x80 on x86_64) is never allowed
        (LD_W_ABS, 0, 0, NR),
    ]
    if arch == "x86_64":
        code.append((JGE, "deny", 0, X32_SYSCALL_BIT))  # the x32 ABI reuses numbers under this bit
    code += _jumps_to("deny", _runs(refused))
    code += [(JEQ, "socket", 0, nr["socket"]), (JEQ, "socket", 0, nr["socketpair"]),
             (JEQ, "clone", 0, nr["clone"]), (JEQ, "fcntl", 0, nr["fcntl"]), (JEQ, "nosys", 0, nr["clone3"]),
             (RET, 0, 0, RET_ALLOW),
             "socket", (LD_W_ABS, 0, 0, ARG0), (JEQ, "allow", "deny", AF_UNIX),
             "clone", (LD_W_ABS, 0, 0, ARG0), (JSET, "deny", "allow", CLONE_NEW_FLAGS),
             "fcntl", (LD_W_ABS, 0, 0, ARG1), *_jumps_to("deny", list(FCNTL_REFUSED)),
             "allow", (RET, 0, 0, RET_ALLOW),
             "deny", (RET, 0, 0, RET_ERRNO | errno.EPERM),
             "nosys", (RET, 0, 0, RET_ERRNO | errno.ENOSYS),
             "kill", (RET, 0, 0, RET_KILL_PROCESS)]
    return _assemble(code)


def _runs(numbers: list[int]) -> list[tuple[int, int]]:
    """Sorted numbers as runs of consecutive ones: [1, 2, 3, 7] -> [(1, 3), (7, 7)]."""
    runs: list[tuple[int, int]] = []
    for n in sorted(set(numbers)):
        if runs and n == runs[-1][1] + 1:
            runs[-1] = (runs[-1][0], n)
        else:
            runs.append((n, n))
    return runs


def _jumps_to(label: str, runs: list[tuple[int, int]]) -> list:
    """Jump to `label` when the loaded word is in one of the runs (one instruction per single value, two per
    range), else fall through."""
    code: list = []
    for lo, hi in runs:
        code += [(JEQ, label, 0, lo)] if lo == hi else [(JGE, 0, 1, lo), (JGT, 0, label, hi)]
    return code


def _assemble(code: list) -> bytes:
    """Resolve labels (strings placed before an instruction) into relative jump offsets; an int is an offset."""
    labels: dict[str, int] = {}
    instructions: list[tuple] = []
    for item in code:
        if isinstance(item, str):
            labels[item] = len(instructions)
        else:
            instructions.append(item)

    def offset(target, at: int) -> int:
        jump = target if isinstance(target, int) else labels[target] - at - 1
        if not 0 <= jump <= 255:
            raise ValueError(f"seccomp jump to {target} out of range")
        return jump

    return b"".join(struct.pack("=HBBI", op, offset(jt, i), offset(jf, i), k)
                    for i, (op, jt, jf, k) in enumerate(instructions))
