"""Find the submission a path names: rlhf.py, a notebook, or a folder holding one (or holding one folder that does).

    found = find_submission(Path("lab12"))   # Submission(path=.../rlhf.py, name="lab12/rlhf.py")

Only regular files count: a link is never followed (a rlhf.py that links to the reference must not be
graded as the reference). A notebook becomes a temporary rlhf.py; `name` stays the notebook's path. A
notebook that cannot be converted (autograder/notebook.py) is found all the same, with `problem` saying
why: the submission's failure to import, not the grader's.
"""

from __future__ import annotations

import io
import stat
import tokenize
from dataclasses import dataclass
from pathlib import Path


class SubmissionNotFound(Exception):
    """No gradable file at the given path; the message says what was looked for."""


@dataclass(frozen=True)
class Submission:
    path: Path      # the rlhf.py the sandbox copies (a temporary one for a notebook)
    name: str       # what reports call it: the path the user gave or found
    problem: str = ""  # why a notebook could not be converted, e.g. "code cell 3 is nested too deeply..."


def is_regular(path: Path) -> bool:
    """A regular file itself, not a link to one."""
    try:
        return stat.S_ISREG(path.lstat().st_mode)
    except OSError:
        return False


def _candidates(folder: Path) -> list[Path]:
    return [folder / "rlhf.py", *sorted(folder.glob("*.py")), *sorted(folder.glob("*.ipynb"))]


def _in_folder(folder: Path) -> Path | None:
    """rlhf.py (else another .py, else a notebook) in `folder`, or in its only subfolder (an unpacked zip)."""
    found = next((c for c in _candidates(folder) if is_regular(c)), None)
    if found is None:
        subfolders = [p for p in folder.iterdir() if p.is_dir() and not p.is_symlink()
                      and not p.name.startswith((".", "__"))]
        if len(subfolders) == 1:
            found = next((c for c in _candidates(subfolders[0]) if is_regular(c)), None)
    return found


def find_submission(path: Path) -> Submission:
    """The submission at `path` (see the module docstring); raises SubmissionNotFound."""
    path = Path(path)
    if path.is_symlink():
        raise SubmissionNotFound(f"{path} is a link: give the file itself (links are not followed)")
    found = _in_folder(path) if path.is_dir() else path
    if found is None and (path / "rlhf.py").is_symlink():
        found = path / "rlhf.py"
    if found is None or not is_regular(found):
        what = "a link, not a regular file: links are not followed" if found is not None and found.is_symlink() \
            else "not there"
        raise SubmissionNotFound(f"no submission at {found or path} ({what}): give rlhf.py, a notebook, "
                                 "or a folder that contains one")
    if found.suffix == ".ipynb":
        from autograder.notebook import NotebookError, notebook_to_module_file
        try:
            return Submission(notebook_to_module_file(found), str(found))
        except NotebookError as exc:
            return Submission(found, str(found), problem=f"{found.name} could not be imported: {exc}")
    return Submission(found, str(found))


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
