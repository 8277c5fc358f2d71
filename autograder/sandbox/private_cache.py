"""Work the judge keeps for its next processes, in files only it can have written, valid while what it was read
from is unchanged.

    stamps = [stamp(folder), ...]         # taken BEFORE reading each file or folder the work depends on
    write(path, {"stamps": stamps, ...})  # best effort: a folder of mode 0700, the file written whole, then renamed
    data = read(path)                     # None unless a regular file of this user that no other may write
    unchanged(data["stamps"])             # each path still has its time and inode (or is still absent)

The files live beside the grader (`.cache/`), hidden from every child with it; the checks in `read` keep a file
another user could have put or changed there from being taken as the judge's own work. A file added, removed or
renamed in a folder changes the folder's time; a file edited changes its own. A file overwritten in place within the
same nanosecond is not seen: users of this module say how long they trust a result (secret_files: SCAN_SECONDS).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

Stamp = tuple[str, int, int]  # (path, st_mtime_ns, st_ino); (path, -1, -1) when absent
ABSENT = (-1, -1)


def stamp(path: str | Path) -> Stamp:
    """`path`'s time and inode, not following a link (ABSENT when there is nothing there)."""
    try:
        info = os.lstat(path)
    except OSError:
        return (str(path), *ABSENT)
    return (str(path), info.st_mtime_ns, info.st_ino)


def unchanged(stamps: list[Stamp]) -> bool:
    """Whether every stamped path still has its stamp."""
    return all(stamp(path)[1:] == (mtime, inode) for path, mtime, inode in stamps)


def read(path: Path) -> dict[str, Any] | None:
    """The JSON object kept at `path`, if this user wrote it and no other user could have (else None)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
        with os.fdopen(fd) as f:
            info = os.fstat(f.fileno())
            if info.st_uid != os.geteuid() or info.st_mode & 0o022:
                return None
            data = json.load(f)
        if not isinstance(data, dict) or not isinstance(data.get("stamps", []), list):
            return None
        data["stamps"] = [(str(p), int(m), int(i)) for p, m, i in data.get("stamps", [])]
        return data
    except (OSError, ValueError, TypeError):
        return None


def write(path: Path, data: dict[str, Any]) -> None:
    """Keep `data` at `path` for the next processes (best effort: a read-only checkout just works again)."""
    try:
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        partial = path.with_name(f"{path.name}.{os.getpid()}")
        fd = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
        with os.fdopen(fd, "w") as f:
            json.dump(data, f)
        os.replace(partial, path)
    except OSError:
        pass
