"""What the sandboxed child may read, at every level: an allow-list, not a search.

    view = readable.view()     # once per process; the run-time distributions' files from CACHE while unchanged
    view.system                # the machine's own folders: /usr and what /bin, /lib... are (shared libraries)
    view.masked                # the Python places inside them (every lib*/python*, src/...): hidden whole
    view.allowed               # files and folders shown again: the interpreter, its standard library, the
                               # installed files of the run-time distributions
    view.listed                # package folders holding allowed paths: Landlock lets the child list their
                               # names (Python's import lists them), not read what lies beneath
    view.readable(path)        # is `path` in the view?

bubblewrap binds `system` read-only, covers each of `masked` with an empty tmpfs, then binds each of
`allowed` read-only (a link as the same link); Landlock gives read rules on `system` carved around
`masked`, and on `allowed` carved around `masked` places inside them (isolation.Isolation). Nothing else
beside the interpreter is readable, whatever it holds: other distributions, `src/` checkouts of
`pip install -e git+...`, eggs, folders named by `.pth` files, caches, the grader itself.

The run-time distributions are RUNTIME (what the child's own modules import: torch, and numpy for Tensor.numpy() on
the wire), OPTIONAL (what torch imports when it is installed), the distributions of what the lab's world files
import (parsed, never run), and every distribution these require, from their metadata (requirements under an `extra`
or whose marker is false here are left out). A distribution's files are those its RECORD lists (its top-level names
when it has none); a folder is shown whole only when RECORD lists every file beneath it (a file put into torch/
after installing stays unreadable), else file by file. The standard library is the interpreter's stdlib folders
without their site-packages or dist-packages.

Reading the distributions' files (their metadata, RECORD, a walk of the folders they install: 0.1-0.2 s of CPU, before
the judge can import torch) is kept in CACHE for the next processes (private_cache), valid while nothing it read has
changed: the world files (what they import), the import path's folders (a distribution installed or removed), each
distribution's metadata folder and files (its requirements, its RECORD) and every folder walked (a file put into
torch/ changes torch/'s time, and the folder is no longer shown whole).
"""

from __future__ import annotations

import ast
import csv
import functools
import glob
import hashlib
import importlib.metadata as metadata
import os
import re
import site
import sys
import sysconfig
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from autograder.lab.paths import ROOT, world_files
from autograder.sandbox import private_cache
from autograder.sandbox.private_cache import Stamp

RUNTIME = ("torch", "numpy")  # what autograder/sandbox/child/ imports: torch (worker, wire) and numpy (Tensor.numpy())
# What torch imports at its own import when it is installed, though no requirement names it (torch.hub: tqdm). Left
# out, it is listable but unreadable under Landlock: `import torch` would fail with PermissionError, not ImportError.
# tests/test_readable.py finds any other such import.
OPTIONAL = ("tqdm",)
HOST_LINKS = ("/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")  # symlinks into /usr, or folders
PYTHON_PLACES = ("lib*/python*", "local/lib*/python*", "src", "local/src", "share/python*", "local/share/python*")
#  inside /usr: every interpreter's library and packages, source checkouts, Debian's bundled wheels
NAME = re.compile(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)")
CACHE = ROOT / ".cache" / "readable"  # runtime_files() for the next processes: hidden with the grader


@dataclass(frozen=True)
class View:
    system: tuple[Path, ...]   # folders of the machine, readable but for `masked`
    masked: tuple[Path, ...]   # hidden whole, inside `system` or inside an allowed folder (site-packages)
    allowed: tuple[Path, ...]  # shown again inside `masked`, or alone (not resolved: a link stays a link)
    listed: tuple[Path, ...] = ()  # package folders holding allowed paths: their names listed (Landlock)

    def _rules(self) -> list[tuple[Path, bool]]:
        """(path, shown) by depth, a mask before an allowance of the same path (the later one wins)."""
        rules = [(p, True) for p in self.system] + [(p, False) for p in self.masked] + [(p, True) for p in self.allowed]
        return sorted(rules, key=lambda r: (len(r[0].parts), r[1] and r[0] not in self.system))

    def readable(self, path: Path) -> bool:
        """Whether the child may read `path` (the deepest rule containing it decides)."""
        verdict = False
        for rule, shown in self._rules():
            if path == rule or path.is_relative_to(rule):
                verdict = shown
        return verdict

    def layers(self) -> list[tuple[str, Path]]:
        """The fewest ("bind" | "mask", path) steps, in order, that make this view from nothing (bubblewrap):
        a step that changes nothing (an allowance already shown, a mask of what is hidden) is left out."""
        return list(_layers(self))

    def read_rules(self) -> list[tuple[Path, list[Path]]]:
        """Landlock's view: each shown place with the masks inside it (the rules go around them)."""
        steps = self.layers()
        masks = [p for kind, p in steps if kind == "mask"]
        return [(p, [m for m in masks if m != p and m.is_relative_to(p)]) for kind, p in steps if kind == "bind"]


@functools.lru_cache(maxsize=4)
def _layers(view: View) -> tuple[tuple[str, Path], ...]:
    steps: list[tuple[str, Path]] = []
    done: list[tuple[str, bool]] = []  # (path + "/", shown) of the steps so far, shallowest first
    for rule, shown in view._rules():
        key = str(rule).rstrip("/") + "/"
        before = next((s for p, s in reversed(done) if key.startswith(p)), False)
        if shown != before:
            steps.append(("bind" if shown else "mask", rule))
            done.append((key, shown))
    return tuple(steps)


@functools.lru_cache(maxsize=1)
def view() -> View:
    """The child's view of this machine (memoised: the interpreter and its packages do not change mid-grade)."""
    system = _system()
    site_dirs = _site_dirs()
    stdlib = _stdlib()
    masked = {p for root in system for pattern in PYTHON_PLACES for p in map(Path, glob.glob(str(root / pattern)))}
    masked |= {s for s in site_dirs if s.is_dir() and any(s.is_relative_to(p) for p in (*stdlib, *system))}
    allowed = set(_interpreter()) | set(stdlib) | set(runtime_files())
    allowed = {p for p in allowed if os.path.lexists(p)}
    shown = View(tuple(sorted(system)), tuple(sorted(masked)), tuple(sorted(_outermost(allowed))))
    listed = {s for s in site_dirs if not shown.readable(s) and any(p.parent == s for p in shown.allowed)}
    return View(shown.system, shown.masked, shown.allowed, tuple(sorted(listed)))


def _system() -> list[Path]:
    """/usr and the folders /bin, /lib... are or link to, without nested duplicates."""
    found = [Path("/usr")] + [Path(link).resolve() for link in HOST_LINKS if os.path.isdir(link)]
    return sorted(_outermost(found))


def _outermost(paths: Iterable[Path]) -> set[Path]:
    """`paths` without those inside another one (a link is kept: it is shown as a link, not as its target)."""
    ordered = sorted(set(paths), key=lambda p: len(p.parts))
    kept: set[Path] = set()
    for p in ordered:
        if not any(p.is_relative_to(k) and k.is_dir() and not k.is_symlink() for k in kept):
            kept.add(p)
    return kept


def _stdlib() -> list[Path]:
    """The interpreter's standard library folders (of the base installation: a venv has none of its own)."""
    base = {k: sys.base_prefix for k in ("base", "platbase", "installed_base", "installed_platbase")}
    return sorted({Path(sysconfig.get_path(k, vars=base)) for k in ("stdlib", "platstdlib")})


def _site_dirs() -> list[Path]:
    """Every package folder of this interpreter and of its base (a venv's and the one it was made from)."""
    found = set()
    for prefix in {sys.prefix, sys.base_prefix}:
        found |= {Path(p) for p in site.getsitepackages([prefix])}
    for base in (sys.prefix, sys.base_prefix):
        found |= {Path(sysconfig.get_path(k, vars={"base": base, "platbase": base})) for k in ("purelib", "platlib")}
    return sorted(found)


def _interpreter() -> list[Path]:
    """The interpreter: every link on the way from sys.executable to its file, its shared library, pyvenv.cfg."""
    found = []
    for start in {sys.executable, getattr(sys, "_base_executable", sys.executable)}:
        path = Path(start)
        for _ in range(40):  # a chain of links, each shown as a link
            found.append(path)
            if not path.is_symlink():
                break
            path = (path.parent / os.readlink(path))
    libdir, library = sysconfig.get_config_var("LIBDIR"), sysconfig.get_config_var("INSTSONAME")
    if libdir and library and Path(libdir, library).exists():
        found.append(Path(libdir, library))
        found += [Path(p) for p in glob.glob(str(Path(libdir, library.split(".so")[0] + ".so*")))]
    found.append(Path(sys.prefix) / "pyvenv.cfg")
    return found


def runtime_files() -> list[Path]:
    """The installed files of the run-time distributions and of all they require (folders whole where RECORD lists
    every file beneath them), from CACHE while nothing they were read from has changed (the module docstring)."""
    world = sorted(str(file) for name, file in world_files().items() if name.endswith(".py"))
    searched = [os.path.abspath(p or os.curdir) for p in sys.path]  # where importlib.metadata finds distributions
    key = hashlib.sha256(repr((sys.executable, sys.version, searched, world)).encode()).hexdigest()
    cache = CACHE / f"{key[:32]}.json"
    saved = private_cache.read(cache)
    try:
        if saved is not None and saved["key"] == key and private_cache.unchanged(saved["stamps"]):
            return [Path(p) for p in saved["files"]]
    except (KeyError, TypeError):
        pass
    stamps = [private_cache.stamp(p) for p in [*world, *searched]]
    files = [p for dist in closure(runtime_names()) for p in _installed(dist, stamps)]
    private_cache.write(cache, {"key": key, "stamps": stamps, "files": [str(p) for p in files]})
    return files


def runtime_names() -> list[str]:
    """The distributions the child needs first: RUNTIME and those of the top-level modules the lab's world
    files import (parsed: a world module's own name and the standard library need none)."""
    world = [file for name, file in world_files().items() if name.endswith(".py")]
    own = {p.stem for p in world}
    modules = set()
    for path in world:
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                modules |= {a.name.split(".")[0] for a in node.names}
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                modules.add(node.module.split(".")[0])
    modules -= own | set(sys.stdlib_module_names) | {"__future__"}
    unnamed = [m for m in modules if not _installed_as(m)]  # a module named as its distribution is the rule
    owners = metadata.packages_distributions() if unnamed else {}
    named = [m for m in modules if m not in unnamed]
    return sorted({*RUNTIME, *OPTIONAL, *named, *(d for m in unnamed for d in owners.get(m, []))})


def _installed_as(name: str) -> bool:
    try:
        metadata.distribution(name)
    except metadata.PackageNotFoundError:
        return False
    return True


def closure(names: Iterable[str]) -> list[metadata.Distribution]:
    """The installed distributions `names` and everything they require, recursively (by metadata)."""
    found: dict[str, metadata.Distribution] = {}
    todo = list(names)
    while todo:
        name = todo.pop()
        key = _normal(name)
        if key in found:
            continue
        try:
            dist = metadata.distribution(name)
        except metadata.PackageNotFoundError:
            continue  # a requirement not installed here is not needed here
        found[key] = dist
        todo += [m[1] for m in map(_needed, dist.requires or []) if m]
    return [found[k] for k in sorted(found)]


def _needed(requirement: str) -> re.Match | None:
    """The requirement's name match when it applies here (no extra; its marker true), else None."""
    spec, _, marker = requirement.partition(";")
    if "extra" in marker:
        return None
    if marker.strip() and not _marker_true(marker):
        return None
    return NAME.match(spec)


def _marker_true(marker: str) -> bool:
    """Evaluate an environment marker (PEP 508) with `packaging`, which pytest brings; without it, keep it."""
    try:
        from packaging.markers import InvalidMarker, Marker
    except ImportError:
        return True
    try:
        return Marker(marker).evaluate()
    except InvalidMarker:
        return True


def _normal(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _installed(dist: metadata.Distribution, stamps: list[Stamp]) -> list[Path]:
    """The distribution's installed files, folders whole where RECORD lists every file beneath them; `stamps`
    gets its metadata folder and files and each folder walked, each stamped before it is read."""
    base = os.path.normpath(str(dist.locate_file("")))
    meta = getattr(dist, "_path", None)
    if meta is not None:
        stamps += [private_cache.stamp(meta), *map(private_cache.stamp, sorted(glob.glob(os.path.join(meta, "*"))))]
    stamps.append(private_cache.stamp(base))
    names = listed_names(dist)
    if names is None:  # no RECORD: its top-level names and its metadata folder
        top = (dist.read_text("top_level.txt") or "").split() or [dist.metadata["Name"]]
        return [Path(base, t) for t in top] + [Path(base, f"{t}.py") for t in top] + ([Path(meta)] if meta else [])
    listed = {os.path.normpath(os.path.join(base, name)) for name in names}
    return [Path(p) for p in _coalesce(listed, base, stamps)]


def listed_names(dist: metadata.Distribution) -> list[str] | None:
    """The file names the distribution's RECORD lists (`dist.files`, without a PackagePath for each of torch's
    ~20,000: a third of the view's CPU), else those of its egg-info's lists, else None."""
    record = dist.read_text("RECORD")
    if record is None:
        files = dist.files
        return None if files is None else [str(f) for f in files]
    return [row[0] for row in csv.reader(record.splitlines()) if row]


def _coalesce(listed: set[str], base: str, stamps: list[Stamp]) -> list[str]:
    """`listed` files, replaced by their folder (below `base`) wherever every entry beneath it is listed."""
    prefix = base + os.sep
    tops = {prefix + p[len(prefix):].split(os.sep)[0] for p in listed if p.startswith(prefix)}
    found = [p for p in listed if not p.startswith(prefix)]  # scripts in bin/, outside the package folder
    for top in sorted(tops):
        if os.path.isdir(top) and not os.path.islink(top):
            found += _whole_or_parts(top, listed, stamps)
        elif top in listed:
            found.append(top)
    return found


def _whole_or_parts(folder: str, listed: set[str], stamps: list[Stamp]) -> list[str]:
    """[folder] when every file beneath it is listed, else its listed files and its wholly listed folders; each
    folder walked goes to `stamps`, stamped before it is listed. Iterative (post-order): a deep tree cannot exhaust
    the stack."""
    seen: dict[str, tuple[list[str], list[str]]] = {}  # folder -> (its files, its folders)
    parts: dict[str, list[str] | None] = {}  # folder -> None when whole, else what of it is shown
    todo = [folder]
    unknown: set[str] = set()
    while todo:
        path = todo[-1]
        if path not in seen:
            stamps.append(private_cache.stamp(path))
            try:
                entries = list(os.scandir(path))
            except OSError:  # what it holds cannot be told: never shown whole
                entries, unknown = [], unknown | {path}
            subdirs = [e.path for e in entries if e.is_dir(follow_symlinks=False)]
            seen[path] = ([e.path for e in entries if not e.is_dir(follow_symlinks=False)], subdirs)
            todo += subdirs
            continue
        todo.pop()
        files, subdirs = seen.pop(path)
        inner = [parts.pop(d) for d in subdirs]
        if path not in unknown and all(f in listed for f in files) and all(i is None for i in inner):
            parts[path] = None
        else:
            parts[path] = [f for f in files if f in listed] + [
                p for d, i in zip(subdirs, inner) for p in ([d] if i is None else i)]
    top = parts[folder]
    return [folder] if top is None else top
