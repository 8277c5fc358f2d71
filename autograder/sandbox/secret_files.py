"""The grader's secret files, and every copy of them that a sandboxed child could read, found by content.

    listed(extra)          # the secrets that exist here (reference, hidden checks, bank, ...) and `extra`
    copies(roots, skip)    # copies of the grader's own secrets beneath `roots` (the child's read roots)

The child may read only its allow-list (autograder/sandbox/readable.py; isolation.read_roots(): the places it
shows): this search is the second line behind it, for a copy inside those places (the standard library's
folder, /usr) under another name. A copy is recognised by what it holds, whatever its name or place:
  - a regular file with a secret's bytes (its size first, then SHA-256; files under MIN_BYTES hold too
    little to matter and are common);
  - a .pyc whose code object equals a secret module compiled here (the file name aside): this
    interpreter's .pyc of a module has one size, so only files of those sizes are read, at most that
    many bytes are unmarshalled, and a file that does not load is no copy;
  - `name.*.pyc` in the __pycache__ beside a copy `name.py` (any interpreter's, any optimisation level);
  - a git object store (`objects/` of another checkout) holding a secret's blob, loose or in a pack:
    the whole store is its copy (it holds that file's history too).
Not recognised: an edited copy, an archive (zip, wheel, tarball), a .pyc of another Python whose source is
not beside it. `extra` (the output folder, other students' submissions) is made at grading time, not
installed: it is checked where it lies, not searched for.

The search reads the size of every file beneath the roots (~1.3 s of CPU for the ~215,000 files of /usr,
the interpreter and the venv on the development VM) and hashes only the few of a secret's size. It is
reused for SCAN_SECONDS, keyed by what it searched (the roots, the folders skipped, the secrets' sizes, times
and inodes), as long as no folder it walked has changed (checking the ~29,000 folders' times costs ~0.1 s; a
grade asks several times within seconds: a check younger than CHECKED_SECONDS stands):
by the process (a grade-all or Dask worker grades many submissions), and by the next ones through CACHE, a
file per search (grade-all searches once before it starts its workers, which then only check the folders; grades
of two labs, whose secrets differ, each keep their own search). A search made while an image is built (IMAGE_BUILD
set: the Gradescope bundle's setup.sh) is reused by every grade of that image whatever its age, still only while no
folder it walked has changed: each grade's container starts afresh from the image, so nothing in it can have
overwritten a file in place since (a Gradescope grade searched again each time: ~1.5 s of its CPU at 0.5 CPU).
"""

from __future__ import annotations

import hashlib
import importlib.util
import marshal
import os
import struct
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import CodeType

from autograder.lab import paths
from autograder.sandbox import private_cache
from autograder.sandbox.private_cache import Stamp

MIN_BYTES = 64          # smaller files are not searched for (an empty __init__.py is everywhere)
SCAN_SECONDS = 600.0    # how long a search's result is reused (by this process, or through CACHE)
CHECKED_SECONDS = 10.0  # a search this process made or checked so recently is reused unchecked (within one grade)
CACHE = paths.ROOT / ".cache" / "secret-copies"  # the searches, for the next processes: hidden with the grader
IMAGE_BUILD = "AUTOGRADER_IMAGE_BUILD"  # set while a container image is built: its search serves every grade of it
PYC_HEADER = 16         # magic, flags, then the source's mtime and size (or its hash)
GIT_IDX_MAGIC = b"\377tOc\0\0\0\2"  # a pack index, version 2


def grader_roots(lab: Path | None = None) -> list[Path]:
    """Where the lab's secrets live (folders stand for everything beneath them): its reference, its grading.yaml,
    and its grader package (grading/) but for what students get (paths.PUBLIC_GRADING). The engine holds none."""
    lab = lab or paths.LAB
    grading = lab / paths.GRADING.relative_to(paths.LAB)
    public = [grading / p for p in paths.PUBLIC_GRADING]
    return [lab / paths.SOLUTIONS.relative_to(paths.LAB), lab / paths.GRADING_YAML.relative_to(paths.LAB),
            *_all_but(grading, public)]


def _all_but(folder: Path, kept: list[Path]) -> list[Path]:
    """The entries beneath `folder` that hold none of `kept` (folders whole where they can be)."""
    if not folder.is_dir():
        return []
    found = []
    for entry in sorted(folder.iterdir()):
        if entry in kept or entry.name == "__pycache__" and entry.parent in kept:
            continue
        if any(k.is_relative_to(entry) for k in kept) and entry.is_dir():
            found += _all_but(entry, kept)
        else:
            found.append(entry)
    return found


def listed(extra: Iterable[Path] = ()) -> list[Path]:
    """The grader's secrets that exist on this machine, and `extra`, each folder with everything beneath."""
    found: list[Path] = []
    for root in [*grader_roots(), *map(Path, extra)]:
        if not os.path.lexists(root):
            continue
        found.append(Path(root))
        if Path(root).is_dir() and not Path(root).is_symlink():
            for folder, dirs, files in os.walk(root):
                found += [Path(folder, name) for name in dirs + files]
    return found


@dataclass(frozen=True)
class Copy:
    path: Path       # what the child could read (a file, or a git object store)
    original: Path   # the secret it copies


def copies(roots: Sequence[Path], skip: Sequence[Path] = ()) -> list[Copy]:
    """Copies of the grader's secrets beneath `roots`, outside `skip` (folders hidden whole anyway).

    A search is reused for SCAN_SECONDS while the secrets are unchanged (their sizes, times and inodes) and
    no folder beneath the roots has changed (a file added, removed or renamed changes its folder's time; one
    overwritten in place does not: the next search, after SCAN_SECONDS, finds it): by this process, and by the
    next ones through CACHE (private_cache)."""
    secrets = [p for p in listed() if p.is_file() and not p.is_symlink()]
    key = (tuple(map(str, roots)), tuple(sorted(map(str, skip))), tuple((str(p), *_stamp(p)) for p in secrets))
    done = _searched.get(key)
    if done is not None and time.monotonic() - _checked.get(key, -CHECKED_SECONDS) < CHECKED_SECONDS:
        return done[1]
    if done is None or not 0 <= time.time() - done[0] <= SCAN_SECONDS or not private_cache.unchanged(done[2]):
        _searched.clear()
        digest = hashlib.sha256(repr(key).encode()).hexdigest()
        done = _cached(digest)
        if done is None:
            folders: list[Stamp] = []
            done = (time.time(), _search(key[0], set(key[1]), secrets, folders), folders)
            _save(digest, *done)
        _searched[key] = done
    _checked.clear()
    _checked[key] = time.monotonic()
    return done[1]


# the last search: key -> (when, by time.time(); its copies; each folder it walked, with its time and inode)
_searched: dict[tuple, tuple[float, list[Copy], list[Stamp]]] = {}
_checked: dict[tuple, float] = {}  # key -> when (time.monotonic()) this process last searched or checked the folders


def _stamp(path: Path) -> tuple[int, int, int]:
    info = path.stat()
    return info.st_size, info.st_mtime_ns, info.st_ino


def _cached(digest: str) -> tuple[float, list[Copy], list[Stamp]] | None:
    """(when, the copies, the folders walked) of a search made for the same secrets and roots by a process of
    this user less than SCAN_SECONDS ago, or while the image this machine runs was built, if not one folder it
    walked has changed since."""
    for image in (False, True):
        saved = private_cache.read(_cache_file(digest, image))
        try:
            if saved is None or saved["key"] != digest or not private_cache.unchanged(saved["stamps"]):
                continue
            if not image and not 0 <= time.time() - saved["time"] <= SCAN_SECONDS:
                continue
            when = time.time() if image else float(saved["time"])  # the image's: as if searched now, checked now
            return when, [Copy(Path(path), Path(original)) for path, original in saved["copies"]], saved["stamps"]
        except (KeyError, TypeError, ValueError):
            continue
    return None


def _save(digest: str, when: float, found: list[Copy], folders: list[Stamp]) -> None:
    """Keep a search for the next processes, and forget those too old to be reused (an image's serve its every
    grade)."""
    for old in CACHE.glob("*.json"):
        try:
            if not old.name.startswith("image-") and time.time() - old.lstat().st_mtime > SCAN_SECONDS:
                old.unlink(missing_ok=True)
        except OSError:
            pass
    private_cache.write(_cache_file(digest, bool(os.environ.get(IMAGE_BUILD))),
                        {"key": digest, "time": when, "stamps": folders,
                         "copies": [[str(c.path), str(c.original)] for c in found]})


def _cache_file(digest: str, image: bool = False) -> Path:
    """The file of the search keyed `digest` (a sha256 in hex); `image`: made while the image was built."""
    return CACHE / f"{'image-' if image else ''}{digest[:32]}.json"


def _search(roots: tuple[str, ...], skip: set[str], secrets: list[Path],
            folders: list[Stamp]) -> list[Copy]:
    """Every copy beneath `roots`; `folders` gets each folder walked, with its time and inode."""
    prints = _fingerprints(secrets)
    same_size, pycs, found = [], [], []
    for entry in _files(roots, skip, folders):
        if len(entry.name) == 38 or entry.name.endswith(".idx"):  # cheap test first: most files are neither
            secret = _in_git_store(entry, prints.blobs)
            if secret is not None:
                found.append(Copy(Path(entry.path).parent.parent, secret))  # objects/ab/cdef..., objects/pack/x.idx
                continue
        try:
            size = entry.stat(follow_symlinks=False).st_size
        except OSError:
            continue
        if size in prints.files:
            same_size.append((entry.path, size))
        if size in prints.compiled and entry.name.endswith(".pyc"):  # also when a secret (a cached .pyc) has its size
            pycs.append((entry.path, size))
    for path, size in same_size:
        original = prints.files[size].get(_sha256(path, size))
        if original is not None:
            found.append(Copy(Path(path), original))
            found += [Copy(pyc, original) for pyc in _compiled_beside(Path(path))]
    for path, size in pycs:
        original = _compiled_from(path, prints.compiled[size])
        if original is not None:
            found.append(Copy(Path(path), original))
    unique = {c.path: c for c in found}  # a store found through several of its files, a .pyc found twice
    return sorted(unique.values(), key=lambda c: str(c.path))


@dataclass(frozen=True)
class _Fingerprints:
    files: dict[int, dict[bytes, Path]]            # size -> SHA-256 -> the secret
    compiled: dict[int, list[tuple[CodeType, Path]]]  # size of this interpreter's .pyc -> (code, the module)
    blobs: dict[bytes, Path]                       # git blob id -> the secret


def _fingerprints(secrets: list[Path]) -> _Fingerprints:
    files: dict[int, dict[bytes, Path]] = {}
    compiled: dict[int, list[tuple[CodeType, Path]]] = {}
    blobs: dict[bytes, Path] = {}
    for path in secrets:
        try:
            data = path.read_bytes()
        except OSError:
            continue
        if len(data) < MIN_BYTES:
            continue
        files.setdefault(len(data), {})[hashlib.sha256(data).digest()] = path
        blobs[hashlib.sha1(b"blob %d\0" % len(data) + data).digest()] = path
        if path.suffix == ".py":
            try:
                code = compile(data, str(path), "exec", dont_inherit=True, optimize=0)
            except (SyntaxError, ValueError):
                continue
            compiled.setdefault(PYC_HEADER + len(marshal.dumps(code)), []).append((code, path))
    return _Fingerprints(files, compiled, blobs)


def _files(roots: tuple[str, ...], skip: set[str], folders: list[Stamp]):
    """Every regular file beneath `roots` (links are not followed: the child's view resolves them
    itself, to places that are roots too or that it cannot read), folders in `skip` left out; each folder
    walked goes to `folders` with its time and inode, read before its entries."""
    todo = []
    for root in roots:
        try:
            if root not in skip:
                todo.append((root, os.lstat(root)))
        except OSError:
            continue
    while todo:
        path, info = todo.pop()
        folders.append((path, info.st_mtime_ns, info.st_ino))
        try:
            folder = os.scandir(path)
        except OSError:
            continue
        with folder:
            for entry in folder:
                try:
                    if entry.is_file(follow_symlinks=False):
                        yield entry
                    elif entry.is_dir(follow_symlinks=False) and entry.path not in skip:
                        todo.append((entry.path, entry.stat(follow_symlinks=False)))
                except OSError:
                    continue


def _sha256(path: str, size: int) -> bytes:
    try:
        with open(path, "rb", buffering=0) as f:
            return hashlib.sha256(f.read(size + 1)).digest()
    except OSError:
        return b""


def _compiled_beside(source: Path) -> list[Path]:
    """`name.*.pyc` in the __pycache__ beside `name.py` (any interpreter, any optimisation level)."""
    cache = source.parent / "__pycache__"
    try:
        return sorted(p for p in cache.iterdir() if p.name.startswith(source.stem + ".") and p.suffix == ".pyc")
    except OSError:
        return []


def _compiled_from(path: str, modules: list[tuple[CodeType, Path]]) -> Path | None:
    """The secret module whose compiled code `path` (a .pyc of its size) holds, if any."""
    try:
        with open(path, "rb", buffering=0) as f:
            data = f.read(PYC_HEADER + max(len(marshal.dumps(code)) for code, _ in modules))
        if data[:4] != importlib.util.MAGIC_NUMBER:
            return None
        code = marshal.loads(data[PYC_HEADER:])
    except Exception:  # noqa: BLE001 - any file can end in .pyc: one that does not load holds no code
        return None
    return next((module for secret, module in modules if code == secret), None)


def _in_git_store(entry: os.DirEntry, blobs: dict[bytes, Path]) -> Path | None:
    """The secret whose blob this file of a git object store holds: a loose object objects/ab/cdef...,
    or a pack index objects/pack/*.idx listing it. None for any other file."""
    parent = os.path.dirname(entry.path)
    if entry.name.endswith(".idx"):
        return _pack_lists(entry.path, blobs) if os.path.basename(parent) == "pack" else None
    if len(os.path.basename(parent)) != 2 or os.path.basename(os.path.dirname(parent)) != "objects":
        return None
    try:
        return blobs.get(bytes.fromhex(os.path.basename(parent) + entry.name))
    except ValueError:
        return None


def _pack_lists(idx: str, blobs: dict[bytes, Path]) -> Path | None:
    """The secret whose blob id a version-2 pack index lists (ids sorted, counted by their first byte)."""
    try:
        with open(idx, "rb", buffering=0) as f:
            if f.read(8) != GIT_IDX_MAGIC:
                return None
            ends = struct.unpack(">256I", f.read(1024))  # ends[b]: how many ids start with a byte <= b
            for blob, secret in blobs.items():
                first = ends[blob[0] - 1] if blob[0] else 0
                count = ends[blob[0]] - first
                if not 0 < count <= ends[255]:
                    continue
                f.seek(8 + 1024 + 20 * first)
                ids = f.read(20 * count)
                if any(ids[i:i + 20] == blob for i in range(0, len(ids), 20)):
                    return secret
    except (OSError, struct.error):
        return None
    return None
