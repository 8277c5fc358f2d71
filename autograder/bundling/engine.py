"""Step: the engine's code in a bundle, taken from the engine's package wherever it is installed.

The student bundle gets what the self-check and the notebook's test cells need, and nothing hidden: starting from
SELF_CHECK_ENTRY, it follows every `autograder.*` import (found with ast, including imports inside functions) and
adds those modules' files with their packages' `__init__.py`. Modules under NOT_FOR_STUDENTS (the mistake bank, the
diagnosis, the end-to-end tests and their replays, the grader's checks on itself, the contract's derived tests, the
fresh twins and chosen inputs, this bundling code) are never added: the self-check runs without them. Following
imports, rather than listing files, keeps the bundle working when the engine grows a new module. The Gradescope
bundle gets the whole package but this bundling code.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable
from pathlib import Path

from autograder.bundling.collect import collect_files
from autograder.bundling.tree import Tree

PACKAGE = "autograder"
SELF_CHECK_ENTRY = ("autograder.__main__", "autograder.commands.grade", "autograder.judge.grade",
                    "autograder.judge.report",
                    "autograder.judge.results", "autograder.checks.tools", "autograder.judge.notebook_checks",
                    "autograder.judge.self_check",
                    "autograder.checks.derived")  # derived: loaded by name (checks.load_all)
NOT_FOR_STUDENTS = ("autograder.lab.bank", "autograder.judge.diagnosis", "autograder.judge.e2e", "autograder.replay",
                    "autograder.bundling", "autograder.validity", "autograder.checks.local", "autograder.lab.entries",
                    "autograder.checks.contract_tests", "autograder.checks.differential",
                    "autograder.checks.lab_inputs")
DATA = ("templates", "sandbox/child")   # the package's folders the self-check reads whole (report templates, the child)
BUNDLING = "bundling"           # this package: builds bundles, ships in none


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


def self_check_modules(engine: Path) -> list[str]:
    """The engine modules a student bundle holds (`engine`: the package's folder)."""
    return engine_modules(engine.parent, list(SELF_CHECK_ENTRY), list(NOT_FOR_STUDENTS))


def module_paths(modules: Iterable[str]) -> tuple[str, ...]:
    """Bundle paths that hold `modules` ("autograder.judge.e2e" -> "autograder/judge/e2e.py",
    "autograder/judge/e2e/")."""
    return tuple(f"{m.replace('.', '/')}{end}" for m in modules for end in (".py", "/"))


def add_self_check_engine(tree: Tree, engine: Path) -> None:
    """The student bundle's engine: the modules the self-check imports, and its DATA folders."""
    root = engine.parent
    for module in self_check_modules(engine):
        path = module_file(root, module)
        assert path is not None, module  # engine_modules lists only modules it found
        tree.add(path.relative_to(root).as_posix(), path.read_bytes())
    collect_files(tree, root, {f"{PACKAGE}/{folder}": f"{PACKAGE}/{folder}" for folder in DATA})


def add_grader_engine(tree: Tree, engine: Path) -> None:
    """The Gradescope bundle's engine: the whole package but the bundling code."""
    collect_files(tree, engine.parent, {PACKAGE: PACKAGE}, exclude=[f"{PACKAGE}/{BUNDLING}"])
