"""Step: the grading engine the student self-check needs, and nothing hidden.

Starting from the entry modules, it follows every `autograder.*` import (found with ast, including
imports inside functions) and adds those modules' files with their packages' `__init__.py`. Modules
under an `exclude` prefix (hidden checks, the mistake bank, the diagnosis, the end-to-end tests, the
release code) are never added: the engine already runs without them. Following imports, rather than
listing files, keeps the bundle working when the engine grows a new module.
"""

from __future__ import annotations

import ast
from pathlib import Path

from autograder.bundling.collect import collect_files
from autograder.bundling.tree import Tree


def module_file(root: Path, module: str) -> Path | None:
    base = root.joinpath(*module.split("."))
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def imported_modules(path: Path, module: str) -> set[str]:
    """The `autograder...` modules that the file imports (absolute or relative, anywhere in it)."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parent = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(parent + ([base] if base else []))
            found.add(base)
            found.update(f"{base}.{alias.name}" for alias in node.names)  # `from pkg import module`
    return {m for m in found if m.split(".")[0] == "autograder"}


def _is_excluded(module: str, exclude: list[str]) -> bool:
    return any(module == e or module.startswith(e + ".") for e in exclude)


def engine_modules(root: Path, entry: list[str], exclude: list[str]) -> list[str]:
    """Every module reachable from `entry` by imports, minus the excluded ones (a package entry brings all
    its modules)."""
    todo, seen = list(entry), set()
    while todo:
        module = todo.pop()
        if module in seen or _is_excluded(module, exclude):
            continue
        path = module_file(root, module)
        if path is None:
            continue  # `from pkg import name` where name is not a module
        seen.add(module)
        parts = module.split(".")
        todo += [".".join(parts[:i]) for i in range(1, len(parts))]  # the packages' __init__.py
        todo += sorted(imported_modules(path, module))
        if path.name == "__init__.py" and module in entry:
            todo += [f"{module}.{p.stem}" for p in sorted(path.parent.glob("*.py")) if p.stem != "__init__"]
    return sorted(seen)


def add_engine(tree: Tree, root: Path, entry: list[str], exclude: list[str], data: dict[str, str]) -> None:
    """Add the engine's modules (paths as in the repository) and its data folders (templates, child)."""
    for module in engine_modules(root, entry, exclude):
        path = module_file(root, module)
        assert path is not None, module  # engine_modules lists only modules it found
        tree.add(path.relative_to(root).as_posix(), path.read_bytes())
    collect_files(tree, root, data)
