"""A notebook submission (.ipynb) as the module source the grader runs.

    source = notebook_to_source(Path("lab.ipynb"))        # str: a module with the notebook's definitions
    path, cells = notebook_to_module_file(Path("lab.ipynb"))   # written to a temporary submission file; its line map
    source = cells_to_source(["import torch", "def f(): ..."], "a kernel's history")   # the same, from cells

From every code cell, in order, it keeps the top-level statements that define things: imports,
function and class definitions, and assignments without calls (constants, aliases). Anything that
runs code at import time is dropped: calls such as `test_gae()` or `print(...)`, loops, and IPython's
magics (`%matplotlib`, `%%time` cells) and shell lines (`!pip install ...`), and imports of the grading
engine (`autograder`, which the nbgrader edition's test cells use; the sandboxed child has none). A cell
that is not valid Python is kept as it is, so the grader reports its syntax error instead of a missing
function.
The same functions as in a .py therefore get the same scores.

The grader converts a notebook only in a bounded subprocess (`notebook_to_module_file`: this file run
with `python -I -S`, the notebook's bytes on stdin, the module source on stdout, under CPU, memory and
wall-time limits): JSON nested 5,000 deep or a cell `x = (1+1+...+1)` of 200,000 terms exhausts that
process, not the judge, and is the submission's NotebookError ("not importable"). `notebook_to_source`
and `cells_to_source` stay plain functions for a student's own process (run_experiments.py, a kernel).
"""

from __future__ import annotations

import ast
import atexit
import json
import os
import signal
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

KEEP = (ast.Import, ast.ImportFrom, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
MAX_BYTES = 64 << 20     # largest notebook read (outputs and images included)
CPU_SECONDS = 20         # the converting subprocess's limits (a real notebook takes ~50 ms)
WALL_SECONDS = 60
MEMORY_MB = 1024         # its address space (Python itself: ~30 MB)


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
    return "\n".join(text for _, text in kept_lines(cell, keep_invalid))


def kept_lines(cell: str, keep_invalid: bool = True) -> list[tuple[int | None, str]]:
    """definitions(cell) line by line: (its line number in the cell, or None for a blank separator; text)."""
    lines = cell.splitlines()
    try:
        tree = ast.parse(cell)
    except SyntaxError:
        return list(enumerate(lines, start=1)) if keep_invalid else []
    kept: list[tuple[int | None, str]] = []
    for node in tree.body:
        if _imports_engine(node):
            continue
        if isinstance(node, KEEP) or (isinstance(node, (ast.Assign, ast.AnnAssign)) and not _has_call(node)):
            first = min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", [])])
            if kept:
                kept.append((None, ""))
            kept += [(n, lines[n - 1]) for n in range(first, (node.end_lineno or node.lineno) + 1)]
    return kept


def _imports_engine(node: ast.AST) -> bool:
    names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
        [node.module or ""] if isinstance(node, ast.ImportFrom) and not node.level else []
    return any(name == "autograder" or name.startswith("autograder.") for name in names)


def _has_call(node: ast.AST) -> bool:
    return any(isinstance(n, (ast.Call, ast.Await, ast.Yield)) for n in ast.walk(node))


@dataclass(frozen=True)
class Converted:
    """A notebook's module source and where each of its lines came from: `cells[i]` is (code cell, line in
    that cell) for line i + 1 of `source`, None for a line the conversion added."""
    source: str
    cells: tuple[tuple[int, int] | None, ...]


def notebook_to_source(path: Path) -> str:
    """The module source of a notebook, in this process: its definitions, `from __future__` imports first."""
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise NotebookError(f"{path}: not a readable notebook ({exc.strerror})") from None
    try:
        return convert(data, Path(path).name).source
    except NotebookError as exc:
        raise NotebookError(f"{path}: {exc}") from None


def source_of(data: bytes, name: str) -> str:
    """The module source of a notebook's bytes (`name`: its file name); NotebookError says why there is none."""
    return convert(data, name).source


def convert(data: bytes, name: str) -> Converted:
    """source_of(data, name) with its line map."""
    try:
        notebook = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise NotebookError(f"not a readable notebook ({exc})") from None
    except RecursionError:
        raise NotebookError("not a readable notebook (its JSON is nested too deeply)") from None
    if not isinstance(notebook, dict):
        raise NotebookError("not a Jupyter notebook")
    return convert_cells(code_cells(notebook), name)


def cells_to_source(cells: list[str], name: str, keep_invalid: bool = True) -> str:
    """The module source of code cells (in order): their definitions, `from __future__` imports first."""
    return convert_cells(cells, name, keep_invalid).source


def convert_cells(cells: list[str], name: str, keep_invalid: bool = True) -> Converted:
    """cells_to_source(cells, name, keep_invalid) with its line map."""
    future: list[tuple[tuple[int, int] | None, str]] = []
    blocks: list[list[tuple[tuple[int, int] | None, str]]] = []
    for number, cell in enumerate(cells, start=1):
        try:
            kept = kept_lines(strip_ipython(cell), keep_invalid)
        except (RecursionError, MemoryError):
            if not keep_invalid:  # a kernel could not have run it either: it defined nothing
                continue
            raise NotebookError(f"code cell {number} is nested too deeply or too large to parse") from None
        rest: list[tuple[tuple[int, int] | None, str]] = []
        for line, text in kept:
            where = (number, line) if line is not None else None
            if text.startswith("from __future__ import"):
                if text not in (t for _, t in future):
                    future.append((where, text))
            else:
                rest.append((where, text))
        while rest and not rest[0][1].strip():
            rest.pop(0)
        while rest and not rest[-1][1].strip():
            rest.pop()
        if rest:
            blocks.append([(None, f"# --- notebook code cell {number}"), *rest])
    lines: list[tuple[tuple[int, int] | None, str]] = [
        (None, f'"""Definitions taken from {name} by autograder.sandbox.notebook."""'), *future, (None, "")]
    for i, block in enumerate(blocks):
        lines += ([(None, ""), (None, "")] if i else []) + block
    return Converted("\n".join(t for _, t in lines) + "\n", tuple(w for w, _ in lines))


def notebook_to_module_file(path: Path) -> tuple[Path, tuple[tuple[int, int] | None, ...]]:
    """Convert the notebook in a bounded subprocess (the module docstring), write its source as the submission file
    in a temporary folder (removed at exit) and return that path with its line map (`Converted.cells`: which code
    cell and line each line of the file comes from). NotebookError says why it could not."""
    converted = bounded_convert(Path(path))
    folder = Path(tempfile.mkdtemp(prefix="autograder-notebook-"))
    from autograder.lab import config  # here, not at the top: the bounded conversion runs this file with -I -S
    from autograder.sandbox.filetree import remove_tree
    atexit.register(remove_tree, folder)
    module = folder / config.current().submission
    module.write_text(converted.source, encoding="utf-8")
    return module, converted.cells


def bounded_source(path: Path) -> str:
    """source_of(the notebook's bytes), computed in the bounded subprocess (bounded_convert)."""
    return bounded_convert(path).source


def bounded_convert(path: Path) -> Converted:
    """convert(the notebook's bytes), computed by `python -I -S notebook.py` under CPU_SECONDS,
    MEMORY_MB and WALL_SECONDS; whatever exhausts it is the notebook's NotebookError."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
        with os.fdopen(fd, "rb") as f:
            data = f.read(MAX_BYTES + 1)
    except OSError as exc:
        raise NotebookError(f"not a readable notebook ({exc.strerror})") from None
    if len(data) > MAX_BYTES:
        raise NotebookError(f"too large to read (over {MAX_BYTES >> 20} MB)")
    try:
        done = subprocess.run([sys.executable, "-I", "-S", str(Path(__file__).resolve()), path.name], input=data,
                              capture_output=True, timeout=WALL_SECONDS, env={"LANG": "C.UTF-8"})
    except subprocess.TimeoutExpired:
        raise NotebookError(f"too slow to read (over {WALL_SECONDS} s)") from None
    if done.returncode == 0:
        data = json.loads(done.stdout.decode("utf-8"))  # the grader's own conversion: {"source", "cells"}
        return Converted(data["source"], tuple(tuple(w) if w else None for w in data["cells"]))
    lines = done.stderr.decode("utf-8", errors="replace").strip().splitlines()
    if done.returncode == 1 and lines and lines[-1].startswith(REASON):
        raise NotebookError(lines[-1][len(REASON):][:300])
    if -done.returncode in (signal.SIGXCPU, signal.SIGKILL):
        raise NotebookError(f"too slow to read (over {CPU_SECONDS} s of CPU time)")
    raise NotebookError(f"not a readable notebook (reading it failed with exit code {done.returncode})")


REASON = "notebook: "  # how the subprocess's last line of stderr starts when it gives a reason


def main() -> None:
    """The bounded conversion (argv: the notebook's file name): its bytes on stdin, the module source and its
    line map on stdout (JSON: {"source", "cells"}); else exit 1 with REASON + why on stderr."""
    import resource
    for limit, value in ((resource.RLIMIT_CPU, CPU_SECONDS), (resource.RLIMIT_AS, MEMORY_MB << 20),
                         (resource.RLIMIT_FSIZE, 0), (resource.RLIMIT_CORE, 0)):
        try:
            resource.setrlimit(limit, (value, value))
        except (ValueError, OSError):
            pass  # a system without that limit: the wall-time limit still holds
    try:
        converted = convert(sys.stdin.buffer.read(), sys.argv[1])
        source = json.dumps({"source": converted.source, "cells": converted.cells}).encode("utf-8")
    except NotebookError as exc:
        sys.exit(f"{REASON}{exc}")
    except MemoryError:
        sys.exit(f"{REASON}too large to read (over {MEMORY_MB} MB of memory)")
    except Exception as exc:  # noqa: BLE001 - any other failure to read is the notebook's too
        sys.exit(f"{REASON}not a Jupyter notebook ({type(exc).__name__})")
    sys.stdout.buffer.write(source)


if __name__ == "__main__":
    main()
