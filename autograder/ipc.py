"""System V IPC objects (shared memory, message queues, semaphores) a child left behind, and their removal.

    ipc.owned_by(uid)          # [("shm", id), ("sem", id), ...] from /proc/sysvipc/*
    ipc.remove_owned_by(uid)   # IPC_RMID on each (the judge is root); a segment still attached is
                               # destroyed once its last process (killed already) detaches

The seccomp filter refuses shmget/msgget/semget, and bubblewrap gives the child its own IPC
namespace; this is the last layer, for a kernel or architecture where neither holds.
"""

from __future__ import annotations

import ctypes
import os
import sys

IPC_RMID = 0
KINDS = {"shm": "shmctl", "msg": "msgctl", "sem": "semctl"}
LIBC = ctypes.CDLL(None, use_errno=True) if sys.platform.startswith("linux") else None


def owned_by(uid: int) -> list[tuple[str, int]]:
    """The IPC objects whose owner or creator is `uid`."""
    found = []
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
    return found


def remove_owned_by(uid: int) -> None:
    """Remove every IPC object of `uid`. Root without CAP_SYS_ADMIN (Docker) may not remove another
    uid's objects, so a forked process does it as that uid (only when there is something to remove)."""
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


def _remove(found: list[tuple[str, int]]) -> None:
    assert LIBC is not None  # Linux only (owned_by finds nothing elsewhere)
    for kind, ident in found:
        if kind == "sem":
            LIBC.semctl(ctypes.c_int(ident), ctypes.c_int(0), ctypes.c_int(IPC_RMID))
        else:
            getattr(LIBC, KINDS[kind])(ctypes.c_int(ident), ctypes.c_int(IPC_RMID), None)
