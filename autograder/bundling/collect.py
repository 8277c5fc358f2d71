"""Step: copy files (path under a root folder -> bundle path) into the tree."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from autograder.bundling.tree import Tree

SKIP_PARTS = {"__pycache__", ".pytest_cache", ".hypothesis"}


def collect_files(tree: Tree, root: Path, mapping: dict[str, str], exclude: Sequence[str] = ()) -> None:
    """Copy each `path under root: bundle path`; a folder is copied file by file (caches and `exclude` skipped).
    A missing path is an error."""
    for source, target in mapping.items():
        path = root / source
        if not path.exists():
            raise FileNotFoundError(f"release: {path} does not exist")
        files = [path] if path.is_file() else sorted(p for p in path.rglob("*") if p.is_file())
        for file in files:
            relative = file.relative_to(root).as_posix()
            if SKIP_PARTS & set(file.parts) or file.suffix == ".pyc" or _excluded(relative, exclude):
                continue
            inner = file.relative_to(path).as_posix() if path.is_dir() else ""
            name = f"{target}/{inner}" if inner else target
            tree.add(name, file.read_bytes(), executable=bool(file.stat().st_mode & 0o111))


def _excluded(relative: str, exclude: Sequence[str]) -> bool:
    return any(relative == e or relative.startswith(e.rstrip("/") + "/") for e in exclude)
