"""The secrets probe: started exactly like the worker (same sandbox, uid, Landlock, seccomp), it imports
no submission and answers two questions: can a submission use its own folder, and which of these paths
could it read or write?

    python -I probe.py SUBMISSION WORLD_DIR IN_FD OUT_FD        (the worker's argv; SUBMISSION does not exist)
    {"op": "setup", ...} -> {"ready": True}; then {"ok": True} in place of an import's answer;
    {"op": "usable"} -> {"usable": bool, "what": "its temp folder"..., "blocked": the first folder above
    it the child cannot search, or ""}: its world files and submission folder readable, $TMPDIR writable;
    {"op": "probe", "paths": [[path, st_dev, st_ino], ...]} -> {"readable": [path, ...], "writable": [...]}
    (as many questions as the judge asks, until it closes the channel)
A path counts only when it names the judge's own file (same device and inode): under bubblewrap,
/tmp is the child's private one, not the judge's.
Standard library only (no torch import): it costs ~0.1 s. See autograder/sandbox/preflight.py.
"""

from __future__ import annotations

import os
import pathlib
import sys
import uuid

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # `python -I` leaves the script's folder out
import confine  # noqa: E402


def same_file(path: str, dev: int, ino: int) -> bool:
    try:
        info = os.stat(path, follow_symlinks=False)
    except OSError:
        return False
    return (info.st_dev, info.st_ino) == (dev, ino)


def readable(path: str) -> bool:
    """True when the directory can be listed or the file opened and read."""
    try:
        if os.path.isdir(path):
            os.listdir(path)
            return True
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
        try:
            os.read(fd, 1)
        finally:
            os.close(fd)
        return True
    except OSError:
        return False


def writable(path: str) -> bool:
    """True when a file can be made in the directory, or the file opened for writing (nothing is written)."""
    try:
        if os.path.isdir(path):
            mark = os.path.join(path, f".autograder-probe-{uuid.uuid4().hex[:8]}")
            os.close(os.open(mark, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600))
            os.unlink(mark)
            return True
        os.close(os.open(path, os.O_WRONLY | os.O_NOFOLLOW | os.O_NONBLOCK))
        return True
    except OSError:
        return False


def usable(submission: str, world: str) -> dict:
    """Whether this child could import a submission: read its world files and submission folder, write $TMPDIR."""
    temp = os.environ.get("TMPDIR", "/tmp")
    needs = [("its world folder", world, readable(world)),
             ("its submission folder", os.path.dirname(submission), readable(os.path.dirname(submission))),
             ("its temp folder", temp, writable(temp))]
    if os.path.isdir(world):
        needs += [("its world files", world, readable(os.path.join(world, name))) for name in os.listdir(world)]
    what, where = next(((what, where) for what, where, ok in needs if not ok), ("", ""))
    if not what:
        return {"usable": True}
    above = [str(p) for p in reversed(pathlib.PurePath(where).parents)] + [where]
    blocked = next((p for p in above if not os.access(p, os.X_OK)), "")
    return {"usable": False, "what": what, "blocked": blocked}


def main() -> None:
    in_fd, out_fd = int(sys.argv[3]), int(sys.argv[4])
    if not confine.start(in_fd, out_fd):
        return
    confine.write_plain(out_fd, {"ok": True})
    while True:
        try:
            request = confine.read_setup(in_fd)
        except EOFError:
            return
        if request.get("op") == "usable":
            confine.write_plain(out_fd, usable(sys.argv[1], sys.argv[2]))
            continue
        paths = [path for path, dev, ino in request.get("paths", []) if same_file(path, dev, ino)]
        confine.write_plain(out_fd, {"readable": [p for p in paths if readable(p)],
                                     "writable": [p for p in paths if writable(p)]})


if __name__ == "__main__":
    main()
