"""Carry each lab's e2e_mistakes.json over the move, when the move provably changed nothing they were computed from.

The file's fingerprint (autograder/fingerprints.py, `e2e_runs`) hashes the code of the engine's e2e.py and the lab's
e2e tests, import lines included: moving modules changes those lines and stales the file, whose recomputation trains
every bank mistake on 3 seeds (Lab 12: 459 runs, 1.5-3 h on 2 cores). The move renames modules and nothing else, so
the outcomes cannot change; this proves it file by file and then stamps the file with the new layout's fingerprint:

  before the move   the lab's file is current (its fingerprint equals the old layout's `fingerprint()`), else it
                    is left stale for `refresh`;
  after the move    every Python file of the lab folder and the engine's e2e.py has the same code as before once
                    import statements are set aside (ast, docstrings aside as in `code_of`), and its imports bind
                    the same names to the same objects (each old target mapped through the move's table);
  then              the file's "fingerprint" is the new layout's `fingerprint()`; its entries are untouched.

Anything else (a file whose code changed, a lab whose file was already stale) is reported and left for `refresh`.
"""

from __future__ import annotations

import ast
import json
import subprocess
from collections.abc import Callable
from pathlib import Path

LABS = (".", "labs/lab13", "tests/toylab")
DATA = "grading/data/e2e_mistakes.json"
LAB_PARTS = ("grading", "solutions", "assignment")
MODULE = "autograder.validity.mistake_outcomes"  # does not move


def fingerprint(root: Path, lab: str, module: str) -> str:
    """The fingerprint `module` computes for the lab, in a fresh interpreter of `root` (as `--lab` sets it)."""
    env = ["env", f"AUTOGRADER_LAB={(root / lab).resolve()}"]
    code = f"from {module} import fingerprint; print(fingerprint())"
    done = subprocess.run([*env, str(root / ".venv" / "bin" / "python"), "-c", code], cwd=root,
                          capture_output=True, text=True, timeout=600)
    if done.returncode:
        raise RuntimeError(f"{lab}: the fingerprint failed: {done.stderr[-600:]}")
    return done.stdout.strip().splitlines()[-1]


def sources(root: Path, lab: str, e2e: str) -> dict[str, str]:
    """{path relative to root: text} of the lab's Python files (its grading/, solutions/, assignment/) and the
    engine's e2e.py (`e2e`, relative to root)."""
    files = [p for part in LAB_PARTS for p in sorted((root / lab / part).rglob("*.py"))
             if "__pycache__" not in p.parts]
    texts = {str(p.relative_to(root)): p.read_text() for p in files}
    texts[e2e] = (root / e2e).read_text()
    return texts


def _without_docstring(body: list) -> list:
    first = body[0] if body else None
    if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str):
        return body[1:]
    return body


def split(text: str, package: str, rename: Callable[[str], str]) -> tuple[str, list[tuple[str, str]]]:
    """(the code's ast dump without imports and docstrings, sorted [(bound name, target)] of its imports, each
    target renamed by `rename`)."""
    tree = ast.parse(text)
    bound: list[tuple[str, str]] = []
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if not isinstance(body, list):
            continue
        kept = []
        for stmt in _without_docstring(body) if isinstance(node, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef,
                                                                      ast.ClassDef)) else body:
            if isinstance(stmt, ast.ImportFrom):
                base = stmt.module or ""
                if stmt.level:
                    parts = package.split(".")
                    base = ".".join(parts[: len(parts) - stmt.level + 1] + ([stmt.module] if stmt.module else []))
                bound += [(a.asname or a.name, rename(f"{base}.{a.name}")) for a in stmt.names]
            elif isinstance(stmt, ast.Import):
                bound += [(a.asname or a.name.split(".")[0], rename(a.name) if a.asname else a.name.split(".")[0])
                          for a in stmt.names]
            else:
                kept.append(stmt)
        node.body = kept or [ast.Pass()]  # type: ignore[attr-defined]
    return ast.dump(tree), sorted(bound)


def package(rel: str) -> str:
    return ".".join(Path(rel).parts[:-1])


def carry(root: Path, before: dict[str, tuple[bool, dict[str, str]]], moved: dict[str, str],
          rename: Callable[[str], str]) -> list[str]:
    """Stamp each lab's file whose inputs the move provably left alone; what was left, one line each.
    `before`: lab -> (its file was current, its sources before); `moved`: old path -> new path of moved files."""
    left = []
    for lab, (current, old_sources) in before.items():
        if not current:
            left.append(f"{lab}/{DATA}: stale before the move: run refresh")
            continue
        changed = []
        for rel, old in old_sources.items():
            new_rel = moved.get(rel, rel)
            new = (root / new_rel).read_text()
            if split(old, package(rel), rename) != split(new, package(new_rel), lambda t: t):
                changed.append(new_rel)
        if changed:
            left.append(f"{lab}/{DATA}: the move changed code it depends on ({', '.join(changed)}): run refresh")
            continue
        path = root / lab / DATA
        data = json.loads(path.read_text())
        data["fingerprint"] = fingerprint(root, lab, MODULE)
        path.write_text(json.dumps(data, indent=1) + "\n")
        print(f"reorganise: {lab}/{DATA}: carried over ({len(old_sources)} files compared, code unchanged)")
    return left
