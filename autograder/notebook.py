"""A notebook submission (.ipynb) as the rlhf.py source the grader runs.

    source = notebook_to_source(Path("rlhf.ipynb"))       # str: a module with the notebook's definitions
    path = notebook_to_module_file(Path("rlhf.ipynb"))    # that source written to a temporary rlhf.py
    source = cells_to_source(["import torch", "def f(): ..."], "a kernel's history")   # the same, from cells

From every code cell, in order, it keeps the top-level statements that define things: imports,
function and class definitions, and assignments without calls (constants, aliases). Anything that
runs code at import time is dropped: calls such as `test_gae()` or `print(...)`, loops, and IPython's
magics (`%matplotlib`, `%%time` cells) and shell lines (`!pip install ...`), and imports of the grading
engine (`autograder`, which the nbgrader edition's test cells use; the sandboxed child has none). A cell
that is not valid Python is kept as it is, so the grader reports its syntax error instead of a missing
function.
The same functions as in a .py therefore get the same scores.
"""

from __future__ import annotations

import ast
import atexit
import json
import shutil
import tempfile
from pathlib import Path

KEEP = (ast.Import, ast.ImportFrom, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


class NotebookError(Exception):
    """The file is not a readable Jupyter notebook."""


def code_cells(notebook: dict) -> list[str]:
    """The source of each code cell, in order."""
    cells = []
    for cell in notebook.get("cells", []):
        if cell.get("cell_type") == "code":
            source = cell.get("source", "")
            cells.append("".join(source) if isinstance(source, list) else str(source))
    return cells


def strip_ipython(cell: str) -> str:
    """The cell without IPython-only lines: a `%%` cell magic empties it, `%`/`!` lines become blank."""
    if cell.lstrip().startswith("%%"):
        return ""
    lines = cell.splitlines()
    return "\n".join("" if line.lstrip().startswith(("%", "!")) else line for line in lines)


def definitions(cell: str, keep_invalid: bool = True) -> str:
    """The top-level definitions of one cell (see the module docstring); if it does not parse, the cell
    itself (`keep_invalid`) or nothing."""
    try:
        tree = ast.parse(cell)
    except SyntaxError:
        return cell if keep_invalid else ""
    lines = cell.splitlines()
    kept = []
    for node in tree.body:
        if _imports_engine(node):
            continue
        if isinstance(node, KEEP) or (isinstance(node, (ast.Assign, ast.AnnAssign)) and not _has_call(node)):
            first = min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", [])])
            kept.append("\n".join(lines[first - 1:node.end_lineno]))
    return "\n\n".join(kept)


def _imports_engine(node: ast.AST) -> bool:
    names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
        [node.module or ""] if isinstance(node, ast.ImportFrom) and not node.level else []
    return any(name == "autograder" or name.startswith("autograder.") for name in names)


def _has_call(node: ast.AST) -> bool:
    return any(isinstance(n, (ast.Call, ast.Await, ast.Yield)) for n in ast.walk(node))


def notebook_to_source(path: Path) -> str:
    """The module source of a notebook: its definitions, `from __future__` imports first."""
    try:
        notebook = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise NotebookError(f"{path} is not a readable notebook ({exc})") from None
    if not isinstance(notebook, dict):
        raise NotebookError(f"{path} is not a Jupyter notebook")
    return cells_to_source(code_cells(notebook), Path(path).name)


def cells_to_source(cells: list[str], name: str, keep_invalid: bool = True) -> str:
    """The module source of code cells (in order): their definitions, `from __future__` imports first."""
    future, blocks = [], []
    for number, cell in enumerate(cells, start=1):
        body = definitions(strip_ipython(cell), keep_invalid)
        rest = []
        for line in body.splitlines():
            if line.startswith("from __future__ import"):
                if line not in future:
                    future.append(line)
            else:
                rest.append(line)
        if "".join(rest).strip():
            blocks.append(f"# --- notebook code cell {number}\n" + "\n".join(rest).strip("\n"))
    header = [f'"""Definitions taken from {name} by autograder.notebook."""', *future]
    return "\n".join(header) + "\n\n" + "\n\n\n".join(blocks) + "\n"


def notebook_to_module_file(path: Path) -> Path:
    """Write the notebook's source as rlhf.py in a temporary folder (removed at exit) and return its path."""
    folder = Path(tempfile.mkdtemp(prefix="lab12-notebook-"))
    atexit.register(shutil.rmtree, folder, True)
    module = folder / "rlhf.py"
    module.write_text(notebook_to_source(path), encoding="utf-8")
    return module
