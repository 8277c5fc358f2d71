"""What a lab declares in its decorators, read with ast: a release never imports the lab's code (nor torch).

    check_titles(folder)       {check id: title} of the `@check("id", "title", ...)` decorators in `folder`
    e2e_descriptions(grading)  {test name: description} of the `@e2e_test(name, title, description, ...)`
                               decorators anywhere in the lab's grading/ package (autograder/judge/e2e.py)

An argument read here is a string (implicitly joined literals count), or a name bound to one at the top of its
module, or imported by name from a sibling module that binds it so (`from .baseline import RM_TEST`).
"""

from __future__ import annotations

import ast
from pathlib import Path

from autograder.lab.domain_spec import KNOWN_VALUES_TITLE, derived_test_id


def _module_strings(path: Path) -> dict[str, str]:
    """The module's top-level `NAME = "text"` bindings."""
    found: dict[str, str] = {}
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            found.update({t.id: node.value.value for t in node.targets if isinstance(t, ast.Name)})
    return found


def _names(path: Path, tree: ast.Module) -> dict[str, str]:
    """The strings a module's decorators may name: its own bindings and those it imports from sibling modules."""
    found = _module_strings(path)
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and node.level == 1 and node.module:
            sibling = path.parent.joinpath(*node.module.split(".")).with_suffix(".py")
            if sibling.is_file():
                theirs = _module_strings(sibling)
                found.update({alias.asname or alias.name: theirs[alias.name] for alias in node.names
                              if alias.name in theirs})
    return found


def _calls(path: Path, decorator: str) -> list[tuple[ast.Call, dict[str, str]]]:
    tree = ast.parse(path.read_text(), filename=str(path))
    names = _names(path, tree)
    return [(node, names) for node in ast.walk(tree) if isinstance(node, ast.Call)
            and (getattr(node.func, "id", None) == decorator or getattr(node.func, "attr", None) == decorator)]


def _argument(call: ast.Call, position: int, keyword: str, names: dict[str, str]) -> str | None:
    node = call.args[position] if len(call.args) > position else next(
        (k.value for k in call.keywords if k.arg == keyword), None)
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.Name):
        return names.get(node.id)
    return None


def _sources(folder: Path) -> list[Path]:
    return sorted(p for p in folder.rglob("*.py") if "__pycache__" not in p.parts)


def check_titles(folder: Path) -> dict[str, str]:
    """{check id: title} of the `@check` decorators of the modules in `folder` (the lab's public checks)."""
    titles: dict[str, str] = {}
    for path in sorted(folder.glob("*.py")):
        for call, names in _calls(path, "check"):
            test_id, title = _argument(call, 0, "id", names), _argument(call, 1, "title", names)
            if test_id is not None and title is not None:
                titles[test_id] = title
    return titles


def declared_titles(raw: dict) -> dict[str, str]:
    """{check id: title} of the public checks the contract declares (its worked examples: checks/derived.py)."""
    contract = raw.get("contract") or {}
    parts = {name: str(spec["part"]) for name, spec in contract.items()}
    return {derived_test_id(parts, name, "known_values"): KNOWN_VALUES_TITLE.format(function=name)
            for name, spec in contract.items() if spec.get("examples")}


def e2e_descriptions(grading: Path) -> dict[str, str]:
    """{test name: description} of every `@e2e_test` under the lab's grading/ package; ValueError when a
    declaration's name or description is not a string this module can read."""
    found: dict[str, str] = {}
    for path in _sources(grading):
        for call, names in _calls(path, "e2e_test"):
            name, description = _argument(call, 0, "name", names), _argument(call, 2, "description", names)
            if name is None or description is None:
                raise ValueError(f"{path}:{call.lineno}: @e2e_test's name and description must be strings (or "
                                 "names bound to a string at the top of a module of the lab)")
            found[name] = description
    return found
