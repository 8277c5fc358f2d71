"""Remove or measure a folder a submission may have shaped, whatever it holds, and never raise.

    left = remove_tree(path)     # [] when `path` is gone; else the paths that stay (each a reason of its own)
    size = allocated_bytes(path) # what the files beneath hold (st_blocks), at any depth

`shutil.rmtree` recurses in Python (RecursionError at ~1,000 nested folders, which no `ignore_errors`
catches), keeps a descriptor per level and gives up on a folder of mode 0o000. This walks the tree with
an explicit stack of directory descriptors (`os.open(..., dir_fd=)`, `os.scandir(fd)`, `unlink`/`rmdir`
with `dir_fd`), so depth costs memory, not the interpreter's stack, and each entry is reached in one step
(a walk by path names is quadratic in depth, and stops at PATH_MAX, ~2,000 levels):
- links are never followed (O_NOFOLLOW; a link is removed as a name), nor mount points crossed (another
  `st_dev` stays, reported);
- removing, a folder this process owns but cannot list or change (mode 0o000, 0o500...) is given u+rwx;
- at most WINDOW descriptors are open at once; a level whose descriptor was closed is reopened through
  ".." of its child and used only when it is the same folder (device and inode), so a tree moved while
  it is removed is left, not followed elsewhere;
- names are whatever the file system holds (newlines, bytes that are not UTF-8: str with surrogate
  escapes, as `os.fsdecode` gives them).
Every error is caught per entry; the entries that could not be removed are returned (their folders stay
too and are not listed again). Measured figures: docs/isolation.md ("Cleanup").
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass, field

WINDOW = 32  # directory descriptors held at most (RLIMIT_NOFILE may be 1,024; the judge needs its own)
DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
O_PATH = getattr(os, "O_PATH", 0)  # Linux: a descriptor of a folder that cannot be opened for reading


@dataclass
class _Level:
    """One open folder on the way down: its name in its parent, descriptor (-1 while closed), identity."""

    name: str
    fd: int
    ident: tuple[int, int]
    subdirs: list[str] = field(default_factory=list)
    kept: bool = False  # something beneath it stays: it cannot be removed


def remove_tree(path: str | os.PathLike) -> list[str]:
    """Remove `path` (a folder with everything beneath it, or any other file) without following links.
    Returns the paths that could not be removed ([] when all is gone, or `path` did not exist)."""
    path = os.path.abspath(os.fspath(path))
    parent, name = os.path.split(path)
    try:
        base = os.open(parent or "/", DIR_FLAGS & ~os.O_NOFOLLOW)
    except OSError:
        return [path] if os.path.lexists(path) else []
    try:
        return _Removal(path, base).run(name)
    finally:
        os.close(base)


def allocated_bytes(path: str | os.PathLike) -> int:
    """Bytes allocated (st_blocks: a sparse file counts what it holds) to `path` and everything beneath it,
    links not followed; what cannot be read counts nothing. Changes nothing."""
    path = os.path.abspath(os.fspath(path))
    parent, name = os.path.split(path)
    try:
        base = os.open(parent or "/", DIR_FLAGS & ~os.O_NOFOLLOW)
    except OSError:
        return 0
    try:
        walk = _Measure(path, base)
        walk.run(name)
        return walk.total
    finally:
        os.close(base)


class _Walk:
    """The depth-first walk of one tree beneath the open folder `base` (the parent of the tree's root): every
    file is given to `_file` when its folder is listed, every folder to `_folder` when opened and to `_done`
    once everything beneath it was walked."""

    GRANT = False  # give folders this process owns, but cannot list or change, u+rwx

    def __init__(self, root: str, base: int):
        self.root, self.base = root, base
        self.left: list[str] = []
        self.stack: list[_Level] = []
        self.device = -1

    def run(self, name: str) -> list[str]:
        if not self._visit(self.base, name):
            return self.left
        self.device = self.stack[0].ident[0]
        while self.stack:
            top = self.stack[-1]
            if top.subdirs:
                self._visit(top.fd, top.subdirs.pop())
            else:
                self._leave()
        return self.left

    def _path(self, name: str | None = None) -> str:
        names = [level.name for level in self.stack[1:]] + ([name] if name is not None else [])
        return os.path.join(self.root, *names)

    def _file(self, parent: int, name: str) -> bool:
        """Handle the file (not folder) `name`: False when it is a folder after all."""
        raise NotImplementedError

    def _folder(self, fd: int, info: os.stat_result) -> None:
        """The folder just opened (`info`: its fstat), before it is listed."""

    def _done(self, parent: int, name: str) -> None:
        """The folder `name`, everything beneath it walked."""

    def _visit(self, parent: int, name: str) -> bool:
        """Give `name` to `_file` when it is not a folder; open, list and push it when it is. True when pushed."""
        try:
            info = os.stat(name, dir_fd=parent, follow_symlinks=False)
        except FileNotFoundError:
            return False
        except OSError:
            return self._keep(name)
        if not stat.S_ISDIR(info.st_mode):
            if not self._file(parent, name):
                self._keep(name)
            return False
        fd = self._open(parent, name)
        if fd < 0:
            return self._keep(name)
        try:
            here = os.fstat(fd)
            if self.device >= 0 and here.st_dev != self.device:  # a mount point: not ours to empty
                raise OSError("another file system")
            self._folder(fd, here)
            with os.scandir(fd) as entries:
                listed = [(e.name, e.is_dir(follow_symlinks=False)) for e in entries]
        except OSError:
            os.close(fd)
            return self._keep(name)
        level = _Level(name, fd, (here.st_dev, here.st_ino))
        self.stack.append(level)
        for entry, is_dir in listed:
            if is_dir or not self._file(fd, entry):  # a folder is visited later, a file at once
                level.subdirs.append(entry)
        if len(self.stack) > WINDOW:
            far = self.stack[-WINDOW - 1]
            if far.fd >= 0:
                os.close(far.fd)
                far.fd = -1
        return True

    def _open(self, parent: int, name: str) -> int:
        """A descriptor of folder `name` in `parent`, given u+rwx first when it is ours and unreadable; -1 if not."""
        try:
            return os.open(name, DIR_FLAGS, dir_fd=parent)
        except PermissionError:
            pass
        except OSError:
            return -1
        if not (self.GRANT and O_PATH):
            return -1
        try:
            handle = os.open(name, O_PATH | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=parent)
        except OSError:
            return -1
        try:
            info = os.fstat(handle)
            if info.st_uid != os.geteuid():
                return -1
            os.chmod(f"/proc/self/fd/{handle}", stat.S_IMODE(info.st_mode) | 0o700)  # the folder itself, no link
            return os.open(name, DIR_FLAGS, dir_fd=parent)
        except OSError:
            return -1
        finally:
            os.close(handle)

    def _keep(self, name: str) -> bool:
        """`name` (in the folder on top of the stack, or the root itself) stays."""
        self.left.append(self._path(name) if self.stack else self.root)
        if self.stack:
            self.stack[-1].kept = True
        return False

    def _leave(self) -> None:
        """The folder on top has nothing left to visit: close it and remove it from its parent."""
        done = self.stack.pop()
        if not self.stack:
            os.close(done.fd)
            if not done.kept:
                self._done(self.base, done.name)
            return
        parent = self.stack[-1]
        if parent.fd < 0:
            parent.fd = self._reopen_parent(done.fd, parent.ident)
        os.close(done.fd)
        if parent.fd < 0:  # moved while being removed: what is left of it stays
            self.left.append(self._path())
            for level in self.stack:
                if level.fd >= 0:
                    os.close(level.fd)
            self.stack.clear()
            return
        if done.kept:
            parent.kept = True
        else:
            self._done(parent.fd, done.name)

    @staticmethod
    def _reopen_parent(child: int, ident: tuple[int, int]) -> int:
        """The folder above `child` when it is still the one with identity `ident`, else -1."""
        try:
            fd = os.open("..", DIR_FLAGS, dir_fd=child)
        except OSError:
            return -1
        try:
            info = os.fstat(fd)
        except OSError:
            info = None
        if info is None or (info.st_dev, info.st_ino) != ident:
            os.close(fd)
            return -1
        return fd


class _Removal(_Walk):
    """Files are unlinked when their folder is listed, folders removed once empty."""

    GRANT = True

    def _file(self, parent: int, name: str) -> bool:
        """Remove the file (not folder) `name`; False when it is a folder after all, else True (kept if it stays)."""
        try:
            os.unlink(name, dir_fd=parent)
        except IsADirectoryError:
            return False
        except FileNotFoundError:
            pass
        except OSError:
            self._keep(name)
        return True

    def _folder(self, fd: int, info: os.stat_result) -> None:
        if info.st_uid == os.geteuid() and info.st_mode & 0o700 != 0o700:
            os.fchmod(fd, stat.S_IMODE(info.st_mode) | 0o700)

    def _done(self, parent: int, name: str) -> None:
        try:
            os.rmdir(name, dir_fd=parent)
        except FileNotFoundError:
            pass
        except OSError:
            self._keep(name)


class _Measure(_Walk):
    """Adds up st_blocks; removes and changes nothing."""

    def __init__(self, root: str, base: int):
        super().__init__(root, base)
        self.total = 0

    def _file(self, parent: int, name: str) -> bool:
        try:
            info = os.stat(name, dir_fd=parent, follow_symlinks=False)
        except OSError:
            return True
        if stat.S_ISDIR(info.st_mode):
            return False
        self.total += info.st_blocks * 512
        return True

    def _folder(self, fd: int, info: os.stat_result) -> None:
        self.total += info.st_blocks * 512
