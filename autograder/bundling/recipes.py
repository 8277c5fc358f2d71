"""What each output of a release holds: the engine's part, declared here for every lab, and the lab's part, its
`release/recipes.yaml` (read and checked by `load`).

The engine's part: its code (engine.py), the files in assets/ (the self-check's launcher, the pinned requirements,
Gradescope's setup.sh and run_autograder, nbgrader's config and feedback preprocessor, the notebook's introduction,
a handout any lab may use or extend), and what follows from the lab folder's layout (docs/labs.md): the starter
generated from solutions/<submission>, the world (grading.yaml `world`, from assignment/), the lab's public checks
(paths.PUBLIC_GRADING) and the public grading.yaml for students; the whole grading/, the reference and grading.yaml
for Gradescope. The lab's part: its other student files, its own handout template if it has one, which student
files the notebook edition leaves out, and what each of its files is.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

import yaml

ASSETS = Path(__file__).resolve().parent / "assets"
RECIPES = Path("release") / "recipes.yaml"   # in the lab's folder

HANDOUT = "handout.md.j2"  # the engine's handout; a lab's own may extend it: {% extends "engine/handout.md.j2" %}
STUDENT_ASSETS = {"self_check.py": "self_check.py", "requirements.txt": "requirements.txt"}  # bundle path: asset
GRADESCOPE_ASSETS = {"requirements.txt": "requirements.txt"}
GRADESCOPE_SCRIPTS = {"setup.sh.j2": "setup.sh", "run_autograder.j2": "run_autograder"}  # template: bundle path
NBGRADER_CONFIG = "nbgrader_config.py.j2"   # the course folder's nbgrader_config.py
NBGRADER_INTRO = "notebook_intro.md.j2"     # the notebook's first cell
NBGRADER_FEEDBACK = "grader_feedback.py"    # the course folder's: grade-all's report in `nbgrader generate_feedback`
# What the engine's files in a student bundle are (the handout's and the notebook's tables), after the lab's own.
ENGINE_FILES = {
    "self_check.py": "the self-check: the public graded tests, through the real grader, with its report",
    "autograder/": "the part of the grading engine the self-check and the test cells use (you need not read it)",
    "grading/": "the lab's public checks, which the self-check runs (you need not read them)",
    "grading.yaml": "the public part of the grading configuration (the public tests and their points)",
    "requirements.txt": "the pinned Python packages (`pip install -r requirements.txt`, after the CPU build of torch)",
}
SECTIONS = {"student": {"copy", "handout"}, "nbgrader": {"without"}, "files": None}  # None: any key


@dataclass(frozen=True)
class LabRecipes:
    """The lab's part of its bundles (paths relative to the lab's folder, bundle paths relative to the bundle)."""

    copy: dict[str, str]          # student files besides the starter and the world: lab path -> bundle path
    handout: str | None           # the lab's handout template (under release/), or None: the engine's
    notebook_without: tuple[str, ...]  # top-level student files the notebook edition leaves out (beside the starter)
    files: dict[str, str]         # top-level name of each of the lab's student files -> what it is


def load(lab: Path) -> LabRecipes:
    """The lab's release/recipes.yaml; ValueError (naming the file and the key) when it is malformed."""
    path = lab / RECIPES
    if not path.is_file():  # nothing but the starter and the world: each described by default
        return LabRecipes({}, None, (), default_files(lab))
    raw = yaml.safe_load(path.read_text()) or {}
    unknown = sorted(set(raw) - set(SECTIONS)) if isinstance(raw, dict) else ["(not a mapping)"]
    for section, keys in SECTIONS.items():
        value = raw.get(section) if isinstance(raw, dict) else None
        if value is not None and not isinstance(value, dict):
            unknown.append(f"{section} (not a mapping)")
        elif value and keys is not None:
            unknown += [f"{section}.{key}" for key in sorted(set(value) - keys)]
    if unknown:
        raise ValueError(f"{path}: unknown or malformed {', '.join(unknown)} (a recipe has student: {{copy, handout}}, "
                         "nbgrader: {without}, files)")
    student, nbgrader = raw.get("student") or {}, raw.get("nbgrader") or {}
    copy = {str(k): str(v) for k, v in (student.get("copy") or {}).items()}
    outside = [name for pair in copy.items() for name in pair
               if PurePosixPath(name).is_absolute() or ".." in PurePosixPath(name).parts]
    if outside:
        raise ValueError(f"{path}: student.copy: {outside[0]} leaves the lab's folder (a lab is one folder)")
    files = {str(k): str(v) for k, v in (raw.get("files") or {}).items()}
    return LabRecipes(copy, student.get("handout"), tuple(nbgrader.get("without") or ()), files)


def default_files(lab: Path) -> dict[str, str]:
    """What a lab without a recipe says of its student files: the submission is the student's code; a world file is
    what its module docstring's first line says."""
    raw = yaml.safe_load((lab / "grading.yaml").read_text()) or {}
    files = {str(raw.get("submission")): "**your code**: the functions to implement, each a stub raising "
             "`NotImplementedError`"}
    for entry in raw.get("world") or ():
        path = lab / "assignment" / entry if "/" not in entry else lab / entry
        doc = ast.get_docstring(ast.parse(path.read_text())) if path.suffix == ".py" and path.is_file() else None
        files[PurePosixPath(entry).name] = (doc or "part of the given world").splitlines()[0].rstrip(".")
    return files
