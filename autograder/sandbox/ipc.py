"""Named IPC objects a child left behind, and their removal: System V shared memory, message queues and
semaphores, and POSIX message queues (where an mqueue file system is mounted, e.g. Docker's /dev/mqueue).

    ipc.owned_by(uid)          # [("shm", id), ("sem", id), ("mqueue", "/dev/mqueue/name"), ...]
    ipc.remove_owned_by(uid)   # IPC_RMID on each System V object, unlink on each queue (as that uid); a
                               # segment still attached is destroyed once its last process (killed) detaches

The seccomp filter refuses shmget/msgget/semget and mq_open, and bubblewrap gives the child its own IPC
namespace; this is the last layer, for a kernel or architecture where neither holds. Without an mqueue
mount the kernel offers no way to list the queues: there seccomp is the only layer.
"""

from __future__ import annotations

import ctypes
import os
import sys

IPC_RMID = 0
KINDS = {"shm": "shmctl", "msg": "msgctl", "sem": "semctl"}  # System V, as in /proc/sysvipc/*
LIBC = ctypes.CDLL(None, use_errno=True) if sys.platform.startswith("linux") else None


def owned_by(uid: int) -> list[tuple[str, int | str]]:
    """The IPC objects whose owner or creator is `uid`: (kind, System V id) or ("mqueue", path)."""
    found: list[tuple[str, int | str]] = []
    for kind in KINDS:
        try:
            with open(f"/proc/sysvipc/{kind}") as f:
                header, *rows = [line.split() for line in f]
        except (OSError, ValueError):
            continue
        column = {name: i for i, name in enumerate(header)}
        ident = "shmid" if kind == "shm" else "msqid" if kind == "msg" else "semid"
        for row in rows:
            try:
                if uid in (int(row[column["uid"]]), int(row[column["cuid"]])):
                    found.append((kind, int(row[column[ident]])))
            except (KeyError, IndexError, ValueError):
                continue
    for mount in mqueue_mounts():
        try:
            found += [("mqueue", e.path) for e in os.scandir(mount) if e.stat(follow_symlinks=False).st_uid == uid]
        except OSError:
            continue
    return found


def mqueue_mounts() -> list[str]:
    """Where an mqueue file system is mounted (from /proc/self/mountinfo)."""
    try:
        with open("/proc/self/mountinfo") as f:
            lines = [line.split() for line in f]
    except OSError:
        return []
    return [fields[4] for fields in lines if "-" in fields and fields[fields.index("-") + 1] == "mqueue"]


def remove_owned_by(uid: int) -> None:
    """Remove every IPC object of `uid`. Root without CAP_SYS_ADMIN (Docker) may not remove another
    uid's System V objects, so a forked process does it as that uid (only when there is something to remove)."""
    found = owned_by(uid) if sys.platform.startswith("linux") else []
    if not found:
        return
    if os.geteuid() != 0 or uid == 0:
        _remove(found)
        return
    pid = os.fork()
    if pid == 0:  # only syscalls here: the judge has threads, and libc was loaded before the fork
        try:
            os.setgroups([])
            os.setgid(uid)
            os.setuid(uid)
            _remove(found)
        finally:
            os._exit(0)
    os.waitpid(pid, 0)


def _remove(found: list[tuple[str, int | str]]) -> None:
    assert LIBC is not None  # Linux only (owned_by finds nothing elsewhere)
    for kind, ident in found:
        if kind == "mqueue":
            try:
                os.unlink(str(ident))  # the queue's owner may remove it from the sticky folder
            except OSError:
                pass
        elif kind == "sem":
            LIBC.semctl(ctypes.c_int(int(ident)), ctypes.c_int(0), ctypes.c_int(IPC_RMID))
        else:
            getattr(LIBC, KINDS[kind])(ctypes.c_int(int(ident)), ctypes.c_int(IPC_RMID), None)
