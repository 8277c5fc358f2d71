"""What the sandboxed child does to itself before any submission code runs (standard library only).

    if confine.start(in_fd, out_fd):       # the judge's set-up frame (JSON only), then {"ready": True}:
        ...                                # own uid, die with the parent, rlimits, Landlock, seccomp

The set-up is {"uid": int or None, "rlimits": {"RLIMIT_AS": [soft, hard], ...}, "processes": int,
"landlock": {"abi": int, "read": [paths], "write": [paths], "files": [paths], "listed": [paths]} or None,
"seccomp": [bytes of a BPF program] or None (bubblewrap installed it already)}.

Landlock (Linux >= 5.13, no root or namespace needed): the child may read and execute only beneath
`read` (the interpreter, packages, its own folder...), read and write only beneath `write` (its own
tmp folder) and the device files in `files` (/dev/null...), and may list the folders in `listed` (the
package folders holding its allowed distributions: Python's import lists them; names only, beneath too, no
file beneath them is opened by this rule); everything else is refused with EACCES,
whatever the file modes say. From ABI 4 TCP bind/connect are refused; from ABI 6 signals and abstract
unix sockets cannot reach outside the sandbox. A rule on /proc/self (the child's own /proc/PID) keeps its
O_PATH descriptor open: procfs gives an entry a new inode once its dentry is dropped (drop_caches, memory
pressure), and the rule would no longer match (measured: 285 of 300 reads refused after drop_caches).
Frames use wire.py's header (b"AGWF" + length) with a JSON body, so the tiny secrets probe (probe.py)
needs no torch.
"""

from __future__ import annotations

import ctypes
import json
import os
import resource
import signal
import struct
import sys
import time

LIBC = ctypes.CDLL(None, use_errno=True)
PR_SET_PDEATHSIG, PR_SET_NO_NEW_PRIVS, PR_SET_SECCOMP, SECCOMP_MODE_FILTER = 1, 38, 22, 2
LANDLOCK_CREATE_RULESET, LANDLOCK_ADD_RULE, LANDLOCK_RESTRICT_SELF = 444, 445, 446  # all architectures
LANDLOCK_CREATE_RULESET_VERSION, LANDLOCK_RULE_PATH_BENEATH = 1, 1
# handled_access_fs bits by ABI: 1-12 (v1), REFER (v2), TRUNCATE (v3), IOCTL_DEV (v5)
FS_EXECUTE, FS_WRITE_FILE, FS_READ_FILE, FS_READ_DIR = 1 << 0, 1 << 1, 1 << 2, 1 << 3
FS_ALL = {1: (1 << 13) - 1, 2: (1 << 14) - 1, 3: (1 << 15) - 1, 4: (1 << 15) - 1, 5: (1 << 16) - 1}
FS_TRUNCATE, FS_IOCTL_DEV = 1 << 14, 1 << 15
NET_ALL, SCOPE_ALL = 0b11, 0b11   # TCP bind + connect (v4); abstract unix sockets + signals (v6)
HEADER = struct.Struct(">4sI")
HELD: list[int] = []  # O_PATH descriptors of /proc rules, open for the process's life (landlock() says why)


class SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


def read_setup(fd: int) -> dict:
    """One JSON-only frame of wire.py's format."""
    magic, length = HEADER.unpack(_read_exactly(fd, HEADER.size))
    if magic != b"AGWF" or length > 1 << 20:
        raise ValueError("bad set-up frame")
    return json.loads(_read_exactly(fd, length))


def write_plain(fd: int, message: dict) -> None:
    """One JSON-only frame of wire.py's format (wire.read_frame reads it)."""
    body = json.dumps({**message, "tensors": []}).encode()
    data = HEADER.pack(b"AGWF", len(body)) + body
    while data:
        data = data[os.write(fd, data):]


def _read_exactly(fd: int, n: int) -> bytes:
    data = b""
    while len(data) < n:
        chunk = os.read(fd, n - len(data))
        if not chunk:
            raise EOFError("the judge closed the channel")
        data += chunk
    return data


def start(in_fd: int, out_fd: int) -> bool:
    """Read the set-up, confine this process, answer {"ready": True}; or answer the error and return False
    (the judge reports a sandbox that cannot start as the machine's problem, not the submission's)."""
    try:
        confine(read_setup(in_fd))
    except BaseException as exc:  # noqa: BLE001
        write_plain(out_fd, {"ok": False, "error": {"kind": "sandbox", "type": type(exc).__name__,
                                                  "message": str(exc)[:500], "line": None}})
        return False
    write_plain(out_fd, {"ready": True})
    return True


def confine(setup: dict) -> None:
    """Drop to the child's uid, die with the parent, set rlimits, Landlock, seccomp: in that order."""
    uid = setup.get("uid")
    if uid is not None:
        os.setgroups([])
        os.setgid(uid)
        os.setuid(uid)
        if os.getresuid() != (uid, uid, uid) or os.getgroups():
            raise OSError(f"could not switch to uid {uid}")
    linux = sys.platform.startswith("linux")  # elsewhere (a student's Mac): the rlimits the system accepts
    if linux:
        _prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    used = int(time.process_time()) + 1  # RLIMIT_CPU counts from the start: torch's import is not the student's
    for name, (soft, hard) in setup["rlimits"].items():
        extra = used if name == "RLIMIT_CPU" else 0
        try:
            resource.setrlimit(getattr(resource, name), (soft + extra, hard + extra))
        except (ValueError, OSError):
            if linux:
                raise
    if linux:
        nproc = tasks_of(os.getuid()) + setup["processes"]  # RLIMIT_NPROC counts the uid's threads
        resource.setrlimit(resource.RLIMIT_NPROC, (nproc, nproc))
    if setup.get("landlock") or setup.get("seccomp"):
        _prctl(PR_SET_NO_NEW_PRIVS, 1)
    if setup.get("landlock"):
        landlock(**setup["landlock"])
    if setup.get("seccomp"):
        program = ctypes.create_string_buffer(bytes(setup["seccomp"]))
        fprog = SockFprog(len(setup["seccomp"]) // 8, ctypes.addressof(program))
        _prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.addressof(fprog))


def landlock_abi() -> int:
    """The kernel's Landlock ABI version (0: none, or disabled)."""
    if not sys.platform.startswith("linux"):
        return 0
    version = LIBC.syscall(ctypes.c_long(LANDLOCK_CREATE_RULESET), None, ctypes.c_size_t(0),
                           ctypes.c_uint32(LANDLOCK_CREATE_RULESET_VERSION))
    return max(version, 0)


def landlock(abi: int, read: list[str], write: list[str], files: list[str],
             listed: tuple[str, ...] | list[str] = ()) -> None:
    """Restrict this process (and all it starts) to `read` + `write` + `files` + `listed` (see the module doc)."""
    handled = FS_ALL[min(abi, 5)]
    attr = struct.pack("=QQQ", handled, NET_ALL if abi >= 4 else 0, SCOPE_ALL if abi >= 6 else 0)
    size = 8 if abi < 4 else 16 if abi < 6 else 24
    ruleset = _syscall(LANDLOCK_CREATE_RULESET, ctypes.c_char_p(attr[:size]), ctypes.c_size_t(size),
                       ctypes.c_uint32(0))
    try:
        read_access = FS_EXECUTE | FS_READ_FILE | FS_READ_DIR
        file_rights = FS_EXECUTE | FS_WRITE_FILE | FS_READ_FILE | (handled & (FS_TRUNCATE | FS_IOCTL_DEV))
        for paths, access in ((read, read_access), (write, handled), (files, FS_READ_FILE | FS_WRITE_FILE),
                              (listed, FS_READ_DIR)):
            for path in paths:
                try:
                    fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
                except OSError:
                    continue  # a path that does not exist here needs no rule
                try:
                    allowed = access if os.path.isdir(path) else access & file_rights
                    rule = struct.pack("=Qi", allowed, fd)
                    _syscall(LANDLOCK_ADD_RULE, ctypes.c_int(ruleset), ctypes.c_int(LANDLOCK_RULE_PATH_BENEATH),
                             ctypes.c_char_p(rule), ctypes.c_uint32(0))
                finally:
                    if path.startswith("/proc/"):
                        HELD.append(fd)  # a rule holds an inode: procfs makes a new one once the entry is dropped
                    else:
                        os.close(fd)
        _syscall(LANDLOCK_RESTRICT_SELF, ctypes.c_int(ruleset), ctypes.c_uint32(0))
    finally:
        os.close(ruleset)


def _syscall(number: int, *args) -> int:
    result = LIBC.syscall(ctypes.c_long(number), *args)
    if result < 0:
        raise OSError(ctypes.get_errno(), f"landlock syscall {number} failed: {os.strerror(ctypes.get_errno())}")
    return result


def _prctl(option: int, arg: int, arg3: int = 0) -> None:
    if LIBC.prctl(ctypes.c_int(option), ctypes.c_ulong(arg), ctypes.c_ulong(arg3), ctypes.c_ulong(0),
                  ctypes.c_ulong(0)) != 0:
        raise OSError(ctypes.get_errno(), f"prctl({option}) failed")


def alive(pid: int) -> bool:
    """True for a process that exists and is not a zombie waiting to be collected."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            return f.read().rsplit(b")", 1)[1].split()[0] != b"Z"
    except (OSError, IndexError):
        return False


def tasks_of(uid: int) -> int:
    """Threads of this real uid that this process can see (in a pid namespace: only the sandbox's)."""
    count = 0
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/status") as status:
                fields = dict(line.split(":", 1) for line in status if ":" in line)
        except OSError:
            continue
        if int(fields["Uid"].split()[0]) == uid:
            count += int(fields["Threads"])
    return count
