"""Which file of a submission is graded: one rule for `grade`, `grade-all`, Gradescope's run_autograder
and the self-check.

    contract = Contract.of(cfg)                         # grading.yaml: `submission` and the `parts`' functions
    found = find_submission(Path("upload"), contract)   # Submission(path=.../lab.py, name="upload/lab.py")
    member = choose(listing, contract)                  # the same rule on a listing (a class entry, a zip)

A file given by name is graded as it is. In a folder (anywhere inside it, the shallowest first;
dotfiles, `__MACOSX/`, `__pycache__/` and the like are skipped):
1. grading.yaml's `submission` (lab.py, say) wins, else the notebook of that name (lab.ipynb);
2. otherwise the one .py or .ipynb file that defines a contract function at its top level (a `def`
   or an assignment), decided by parsing it with `ast`, never by importing it; a file with a syntax
   error counts by its `def` lines at column 0, so it is graded (and reported not importable);
3. otherwise nothing is graded: SubmissionNotFound says in one sentence what the folder holds and what
   it needs. Two candidates at step 1's shallowest depth, or two files at step 2, are refused too:
   the grader never guesses.
Bounds: a folder is listed up to MAX_LISTED files; at most MAX_INSPECTED files of at most
MAX_FILE_BYTES each, MAX_TOTAL_BYTES in all, are parsed (about 2 s of CPU at worst).

Only regular files count: a link is never followed (a submission that links to the reference must not be
graded as the reference). A notebook becomes a temporary submission file; `name` stays the notebook's path. A
notebook that cannot be converted (autograder/sandbox/notebook.py) is found all the same, with `problem` saying
why: the submission's failure to import, not the grader's.
"""

from __future__ import annotations

import ast
import io
import json
import os
import re
import stat
import tokenize
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Callable

SUFFIXES = (".py", ".ipynb")
MAX_LISTED = 10_000            # files listed in a folder given to `grade`
MAX_INSPECTED = 64             # files parsed to find the contract functions
MAX_FILE_BYTES = 1 << 20       # largest .py parsed (a notebook: its code cells)
MAX_NOTEBOOK_BYTES = 16 << 20  # largest .ipynb read (outputs included)
MAX_TOTAL_BYTES = 8 << 20      # read in all, per submission
TOP_LEVEL_DEF = re.compile(r"^(?:async[ \t]+)?def[ \t]+([A-Za-z_]\w*)", re.M)


class SubmissionNotFound(Exception):
    """No file to grade at the given path; the message says what it holds and what it needs."""


class AmbiguousSubmission(SubmissionNotFound):
    """Several files could be the submission: the message lists them."""


@dataclass(frozen=True)
class Submission:
    path: Path      # the file the sandbox copies (a temporary one for a notebook)
    name: str       # what reports call it: the path the user gave or found
    problem: str = ""  # why a notebook could not be converted, e.g. "code cell 3 is nested too deeply..."
    cells: tuple[tuple[int, int] | None, ...] | None = None  # a notebook's: (code cell, line) of each line of `path`


@dataclass(frozen=True)
class Contract:
    submission: str                # the file name that wins: grading.yaml `submission`
    functions: tuple[str, ...]     # the contract functions: grading.yaml `parts`

    @classmethod
    def of(cls, cfg) -> Contract:
        """The contract of a loaded grading.yaml (autograder.lab.config.Config)."""
        return cls(cfg.submission, tuple(cfg.contract))

    @property
    def notebook(self) -> str:
        return PurePosixPath(self.submission).stem + ".ipynb"


@dataclass
class Listing:
    """The files of a submission: posix paths relative to its root."""
    files: dict[str, int]                      # regular file -> size in bytes
    read: Callable[[str], bytes]               # a regular file's bytes
    links: dict[str, str] = field(default_factory=dict)  # link or other non-regular entry -> its target
    truncated: bool = False                    # more than MAX_LISTED files: not all were listed


def is_regular(path: Path) -> bool:
    """A regular file itself, not a link to one."""
    try:
        return stat.S_ISREG(path.lstat().st_mode)
    except OSError:
        return False


def skipped(name: str) -> bool:
    """Clutter that is never a submission: dotfiles and dot-folders (.ipynb_checkpoints), __MACOSX, __pycache__."""
    return any(part.startswith((".", "__")) for part in PurePosixPath(name).parts)


def find_submission(path: Path, contract: Contract | None = None) -> Submission:
    """The submission at `path` (see the module docstring); raises SubmissionNotFound. `contract`: grading.yaml's
    (loaded when None)."""
    path = Path(path)
    if contract is None:
        from autograder.lab import config
        contract = Contract.of(config.load())
    if path.is_symlink():
        raise SubmissionNotFound(f"{path} is a link: give the file itself (links are not followed)")
    if path.is_dir():
        found = path / choose(list_folder(path, contract), contract, str(path))
    elif is_regular(path):
        found = path
    else:
        raise SubmissionNotFound(f"no submission at {path} (not there): give {contract.submission}, a notebook, "
                                 "or a folder that contains one")
    if found.suffix == ".ipynb":
        from autograder.sandbox.notebook import NotebookError, notebook_to_module_file
        try:
            module, cells = notebook_to_module_file(found)
            return Submission(module, str(found), cells=cells)
        except NotebookError as exc:
            return Submission(found, str(found), problem=f"{found.name} could not be imported: {exc}")
    return Submission(found, str(found))


def list_folder(folder: Path, contract: Contract) -> Listing:
    """The folder's files, breadth first, without following links; it stops after the first level holding a
    file named like the submission (nothing deeper can win) or after MAX_LISTED files."""
    files: dict[str, int] = {}
    links: dict[str, str] = {}
    level: list[Path] = [Path(".")]
    wanted = {contract.submission}
    while level and len(files) <= MAX_LISTED:
        deeper = []
        for rel in level:
            try:
                entries = sorted(os.scandir(folder / rel), key=lambda e: e.name)
            except OSError:
                continue
            for entry in entries:
                name = (rel / entry.name).as_posix()
                if skipped(name):
                    continue
                if entry.is_symlink():
                    links[name] = os.readlink(entry.path)
                elif entry.is_dir(follow_symlinks=False):
                    deeper.append(rel / entry.name)
                elif entry.is_file(follow_symlinks=False):
                    files[name] = entry.stat(follow_symlinks=False).st_size
                else:
                    links[name] = "not a regular file"
        if any(PurePosixPath(n).name in wanted for n in (*files, *links)):
            break
        level = deeper
    return Listing(files, lambda name: read_regular(folder, name), links, truncated=len(files) > MAX_LISTED)


def choose(listing: Listing, contract: Contract, where: str = "the submission") -> str:
    """The file of `listing` to grade (see the module docstring); raises SubmissionNotFound, whose message
    starts with `where`."""
    names = [*listing.files, *listing.links]
    for wanted in (contract.submission, contract.notebook):
        named = _shallowest([n for n in names if PurePosixPath(n).name == wanted])
        if len(named) > 1:
            defining = [n for n in named if n in listing.files and _defined(listing, n, contract)[0]]
            if len(defining) != 1:
                raise AmbiguousSubmission(f"{where} holds {len(named)} files named {wanted} at the same depth "
                                          f"({', '.join(named)}): keep only the one to grade")
            named = defining
        if named:
            if named[0] in listing.links:
                raise SubmissionNotFound(link_problem(named[0], listing.links[named[0]]))
            return named[0]
    return _by_contract(listing, contract, where)


def link_problem(member: str, target: str) -> str:
    what = "not a regular file" if target == "not a regular file" else f"a symbolic link to {target}"
    return f"{member} is {what}: only regular files are graded, so nothing was graded"


def _by_contract(listing: Listing, contract: Contract, where: str) -> str:
    """Step 2: the one file defining a contract function, else a refusal saying what the folder holds."""
    budget = [MAX_TOTAL_BYTES]
    candidates = sorted((n for n in listing.files if PurePosixPath(n).suffix in SUFFIXES),
                        key=lambda n: (n.count("/"), n))
    defining: dict[str, int] = {}
    notes: dict[str, str] = {}
    for n in candidates[:MAX_INSPECTED]:
        count, note = _defined(listing, n, contract, budget)
        if count:
            defining[n] = count
        elif note:
            notes[n] = note
    if len(defining) == 1:
        return next(iter(defining))
    needs = (f"it needs {contract.submission}, or one .py or .ipynb file defining "
             f"{', '.join(contract.functions)}")
    if defining:
        found = ", ".join(f"{n}: {k} of {len(contract.functions)}" for n, k in defining.items())
        raise AmbiguousSubmission(f"{where} holds no {contract.submission}, and {len(defining)} files define "
                                  f"contract functions ({found}): rename the one to grade to {contract.submission}")
    if not names_of(listing):
        raise SubmissionNotFound(f"{where} is empty (no file at all): {needs}")
    if listing.truncated:
        raise SubmissionNotFound(f"{where} holds more than {MAX_LISTED} files and no {contract.submission} among "
                                 f"the first: {needs}")
    unread = len(candidates) - MAX_INSPECTED
    held = _shown([f"{n} ({notes[n]})" if n in notes else n for n in names_of(listing)])
    more = f"; {unread} more .py/.ipynb files were not inspected" if unread > 0 else ""
    raise SubmissionNotFound(f"{where} holds no {contract.submission} or notebook, and no file that defines a "
                             f"contract function (it holds: {held}{more}): {needs}")


def names_of(listing: Listing) -> list[str]:
    return sorted([*listing.files, *listing.links], key=lambda n: (n.count("/"), n))


def _shown(names: list[str], at_most: int = 8) -> str:
    return ", ".join(names[:at_most]) + (f", ... ({len(names) - at_most} more)" if len(names) > at_most else "")


def _shallowest(names: list[str]) -> list[str]:
    if not names:
        return []
    depth = min(n.count("/") for n in names)
    return sorted(n for n in names if n.count("/") == depth)


def _defined(listing: Listing, name: str, contract: Contract, budget: list[int] | None = None) -> tuple[int, str]:
    """(how many contract functions `name` defines at its top level, why it could not be read or "")."""
    size = listing.files[name]
    limit = MAX_NOTEBOOK_BYTES if name.endswith(".ipynb") else MAX_FILE_BYTES
    if size > limit or (budget is not None and size > budget[0]):
        return 0, "too large to inspect"
    if budget is not None:
        budget[0] -= size
    try:
        data = listing.read(name)
    except OSError:
        return 0, "unreadable"
    if name.endswith(".ipynb"):
        cells = _notebook_cells(data)
        if cells is None:
            return 0, "not a readable notebook"
    else:
        cells = [data.decode("utf-8", errors="replace")]
    if sum(len(c) for c in cells) > MAX_FILE_BYTES:
        return 0, "too large to inspect"
    names: set[str] = set()
    for cell in cells:
        names |= top_level_names(cell)
    return len(names & set(contract.functions)), ""


def top_level_names(source: str) -> set[str]:
    """The names a module's top level defines (functions and assignments), by parsing; a source that does
    not parse gives the names of its `def` lines at column 0."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return set(TOP_LEVEL_DEF.findall(source))
    found: set[str] = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            found.add(node.name)
        elif isinstance(node, ast.Assign):
            found.update(t.id for t in node.targets if isinstance(t, ast.Name))
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            found.add(node.target.id)
    return found


def _notebook_cells(data: bytes) -> list[str] | None:
    """A notebook's code cells without IPython's magics and shell lines, or None when it is not a notebook."""
    from autograder.sandbox.notebook import code_cells, strip_ipython
    try:
        notebook = json.loads(data)
    except (ValueError, RecursionError):
        return None
    if not isinstance(notebook, dict) or not isinstance(notebook.get("cells", []), list):
        return None
    try:
        return [strip_ipython(cell) for cell in code_cells(notebook)]
    except (AttributeError, TypeError):
        return None


def code_of(filename: str, data: bytes) -> str:
    """The code of a submitted file: a .py's text, a notebook's code cells (ValueError: not a notebook)."""
    if not filename.endswith(".ipynb"):
        return data.decode("utf-8", errors="replace")
    cells = _notebook_cells(data)
    if cells is None:
        raise ValueError(f"{filename} is not a readable notebook")
    return "\n\n".join(cells)


def read_regular(root: Path, member: str) -> bytes:
    """The bytes of `root/member`, opened without following a link at its last step, nor reading
    anything outside `root` through a linked folder."""
    path = Path(root) / member
    if path.parent.resolve() != (Path(root).resolve() / member).parent:
        raise OSError(f"{member}: a folder on its path is a link")
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
    with os.fdopen(fd, "rb") as f:
        if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):
            raise OSError(f"{member} is not a regular file")
        return f.read()


def is_empty(path: Path) -> bool:
    """True when the file holds no code at all: only blank lines, comments or a docstring."""
    try:
        source = path.read_bytes()
    except OSError:
        return False
    try:
        kinds = {t.type for t in tokenize.tokenize(io.BytesIO(source).readline)}
    except (tokenize.TokenError, SyntaxError):
        return False
    return kinds <= {tokenize.ENCODING, tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.ENDMARKER,
                     tokenize.STRING, tokenize.INDENT, tokenize.DEDENT}


def unwritten(path: Path, functions: tuple[str, ...] | list[str]) -> bool:
    """True when the file (a .py, or a notebook's converted code cells) defines every contract function once, each
    a body that only raises NotImplementedError (after its docstring): the blank starter's shape. Read with `ast`,
    never run, so it only plans the grade (one lane: a second would start a child only to hear
    NotImplementedError); the calls decide every score."""
    try:
        tree = ast.parse(path.read_bytes())
    except (OSError, SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    defined = [node for node in tree.body if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))]
    names = [node.name for node in defined]
    return all(names.count(f) == 1 for f in functions) and all(
        _only_raises_not_implemented(node) for node in defined if node.name in functions)


def _only_raises_not_implemented(function: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    body = function.body
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
            and isinstance(body[0].value.value, str):
        body = body[1:]
    if len(body) != 1 or not isinstance(body[0], ast.Raise) or body[0].exc is None:
        return False
    exc = body[0].exc.func if isinstance(body[0].exc, ast.Call) else body[0].exc
    return isinstance(exc, ast.Name) and exc.id == "NotImplementedError"
