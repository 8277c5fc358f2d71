"""The three outputs of a release of one lab, each a short pipeline of the steps in this package.

    outputs = build_release(Path("out/release/mylab"), lab=Path("labs/mylab"))
    # {"student": .../student.zip, "gradescope": .../autograder.zip, "nbgrader": .../nbgrader.zip, ...}

The engine's part of each output comes from the engine's package, wherever it is (its code: engine.py; its files
and what each output gets: recipes.py, assets/); the lab's part from the lab's folder: the reference in solutions/
(the one source of the starter, the handout and the notebook), the world and other files in assignment/,
grading.yaml, grading/ and release/recipes.yaml (with the lab's own handout template, if it has one).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

import jinja2
import yaml

from autograder.bundling import guard
from autograder.bundling.collect import collect_files
from autograder.bundling.declarations import check_titles, declared_titles, e2e_descriptions
from autograder.bundling.deterministic_zip import zip_bytes
from autograder.bundling.engine import NOT_FOR_STUDENTS, add_grader_engine, add_self_check_engine, module_paths
from autograder.bundling.handout import add_handout, environment, file_rows, handout_context
from autograder.bundling.outline import Outline, read_outline
from autograder.bundling.output import write_release
from autograder.bundling.public_config import add_public_config, secrets
from autograder.bundling.recipes import (
    ASSETS,
    ENGINE_FILES,
    GRADESCOPE_ASSETS,
    GRADESCOPE_SCRIPTS,
    HANDOUT,
    NBGRADER_CONFIG,
    NBGRADER_FEEDBACK,
    NBGRADER_INTRO,
    STUDENT_ASSETS,
    LabRecipes,
)
from autograder.bundling.recipes import load as load_recipes
from autograder.bundling.scripts import add_scripts
from autograder.bundling.source_notebook import add_source_notebook, source_notebook
from autograder.bundling.starter import add_starter
from autograder.bundling.tree import Tree
from autograder.lab import paths
from autograder.lab.starter import strip_solutions
from autograder.sandbox.secret_files import grader_roots


def _place(lab: Path, folder: Path) -> Path:
    """A folder of the lab layout (paths.py: solutions/, assignment/, grading/) in the lab folder `lab`."""
    return lab / folder.relative_to(paths.LAB)


@dataclass
class Sources:
    """Everything a release reads, loaded once."""

    lab: Path           # the lab's folder
    engine: Path        # the engine's package folder
    recipes: LabRecipes
    raw: dict           # grading.yaml
    reference: Path
    outline: Outline
    e2e: dict[str, str]  # each e2e test's description, from its @e2e_test declaration
    torch: str          # the pinned torch version (from the engine's requirements.txt)
    env: jinja2.Environment

    @classmethod
    def load(cls, lab: Path = paths.LAB, engine: Path = paths.ENGINE) -> "Sources":
        raw = yaml.safe_load((lab / "grading.yaml").read_text())
        reference = _place(lab, paths.SOLUTIONS) / raw["submission"]
        pin = re.search(r"^torch==(\S+)", (ASSETS / "requirements.txt").read_text(), re.M)
        if pin is None:
            raise ValueError(f"{ASSETS / 'requirements.txt'} must pin torch (torch==X.Y.Z)")
        outline = read_outline(reference.read_text())
        check_parts(outline, raw["contract"])
        return cls(lab, engine, load_recipes(lab), raw, reference, outline,
                   e2e_descriptions(_place(lab, paths.GRADING)), pin.group(1), environment(lab / "release"))

    @property
    def folder(self) -> str:
        """The student zip's top folder and the nbgrader assignment: the lab's name."""
        return self.raw["lab"]

    @property
    def world(self) -> dict[str, str]:
        """The given world (grading.yaml `world`): its files, as paths from the lab's folder (another lab's file
        starts with ../) -> the names students get them under."""
        files = paths.world_files(tuple(self.raw["world"]), self.lab)
        return {os.path.relpath(file, self.lab): name for name, file in files.items()}

    def context(self, tree: Tree) -> dict:
        """What the handout and the notebook's introduction show about a release whose student files are `tree`."""
        both = set(self.recipes.files) & set(ENGINE_FILES)
        if both:
            raise ValueError(f"release/recipes.yaml: `files` describes the engine's {', '.join(sorted(both))}")
        rows = file_rows(tree, {**self.recipes.files, **ENGINE_FILES})
        return handout_context(self.outline, self.raw, self.e2e, self.torch, tree, self.folder, rows)

    def forbidden(self) -> dict[str, list[str]]:
        """What no student-facing file may contain (see guard.py)."""
        checks = _place(self.lab, paths.GRADING) / "checks"
        engine = self.engine / "checks"
        given = [*sorted((checks / "public").glob("*.py")), engine / "tools.py", engine / "__init__.py",
                 *sorted(_place(self.lab, paths.ASSIGNMENT).rglob("*.py"))]
        public = [p.read_text() for p in given]  # lines shared with public code are not hidden material
        starter = strip_solutions(self.reference.read_text())
        return {"solution line": guard.solution_lines(self.reference.read_text(), starter),
                "hidden check code": guard.hidden_check_lines(checks / "hidden", public),
                "grading.yaml secret": secrets(self.raw)}


def check_parts(outline: Outline, contract: dict) -> None:
    """The reference's `# ==== Part NAME` sections hold each contract function under its part (grading.yaml)."""
    found = {fn.name: part.name for part in outline.parts for fn in part.functions}
    wrong = [f"{name} (grading.yaml: {spec['part']}, the reference's section: {found.get(name, 'none')})"
             for name, spec in contract.items() if found.get(name) != spec["part"]]
    if wrong:
        raise ValueError("the reference's `# ==== Part NAME: title` sections disagree with grading.yaml's contract: "
                         + "; ".join(wrong))


def add_assets(tree: Tree, assets: dict[str, str]) -> None:
    """The engine's files (bundle path: name in assets/), as they are."""
    for target, name in assets.items():
        tree.add(target, (ASSETS / name).read_bytes())


def student_tree(src: Sources) -> Tree:
    tree = Tree()
    add_starter(tree, src.reference, src.raw["submission"])
    collect_files(tree, src.lab, {**src.world, **src.recipes.copy})
    grading = _place(src.lab, paths.GRADING).relative_to(src.lab).as_posix()
    collect_files(tree, src.lab, {f"{grading}/{p}": f"grading/{p}" for p in paths.PUBLIC_GRADING
                                  if (src.lab / grading / p).exists()})  # a lab of declared checks has none
    add_self_check_engine(tree, src.engine)
    add_assets(tree, STUDENT_ASSETS)
    add_public_config(tree, src.raw, "grading.yaml")
    template = f"lab/{src.recipes.handout}" if src.recipes.handout else f"engine/{HANDOUT}"
    add_handout(tree, src.env, template, "README.md", src.context(tree))
    check_student_files(src, tree.files)
    return tree


def check_student_files(src: Sources, files: dict[str, bytes]) -> None:
    """Raise guard.LeakError when student-facing files hold grader-only paths or material."""
    secret = tuple(p.relative_to(src.lab).as_posix() + ("/" if p.is_dir() else "") for p in grader_roots(src.lab)
                   if p.name != "grading.yaml")  # the bundle's grading.yaml is the public one (its content is checked)
    refused = [name for name in files if name.startswith(secret) or name.startswith(module_paths(NOT_FOR_STUDENTS))]
    if refused:
        raise guard.LeakError(f"refusing to release grader-only files to students: {', '.join(refused)}")
    guard.check_no_leaks(files, src.forbidden())


def gradescope_tree(src: Sources) -> Tree:
    """The whole grader: the engine, the lab's grading/, reference, grading.yaml and world, and Gradescope's scripts."""
    tree = Tree()
    add_grader_engine(tree, src.engine)
    lab_files = ["grading.yaml", *(p.relative_to(src.lab).as_posix() for p in (_place(src.lab, paths.GRADING),
                                                                            src.reference))]
    assignment = _place(src.lab, paths.ASSIGNMENT).relative_to(src.lab).as_posix()
    collect_files(tree, src.lab, {**{name: name for name in lab_files},
                                  **{path: f"{assignment}/{name}" for path, name in src.world.items()}})
    add_assets(tree, GRADESCOPE_ASSETS)
    add_scripts(tree, src.env, {f"engine/{t}": target for t, target in GRADESCOPE_SCRIPTS.items()},
                {"torch": src.torch, "submission": src.raw["submission"]})
    return tree


def nbgrader_tree(src: Sources, student: Tree) -> Tree:
    """The course folder: source/<assignment>/ holds the student bundle's files minus those the notebook
    replaces (so the same engine runs its test cells, self_check.py and run_experiments.py), and the notebook."""
    name, notebook = src.folder, Path(src.raw["submission"]).with_suffix(".ipynb").name
    without = {src.raw["submission"], "README.md", *src.recipes.notebook_without}
    given = Tree()
    for path, data in student.files.items():
        if path.split("/")[0] not in without:
            given.add(path, data, executable=path in student.executable)
    intro = src.env.get_template(f"engine/{NBGRADER_INTRO}").render(**src.context(given), notebook=notebook)
    tree = Tree()
    for path, data in given.files.items():
        tree.add(f"source/{name}/{path}", data, executable=path in given.executable)
    titles = {**declared_titles(src.raw), **check_titles(_place(src.lab, paths.GRADING) / "checks" / "public")}
    add_source_notebook(tree, f"source/{name}/{notebook}", source_notebook(src.outline, src.raw, titles, intro))
    tree.add("nbgrader_config.py", src.env.get_template(f"engine/{NBGRADER_CONFIG}").render(assignment=name,
                                                                                            course=name))
    add_assets(tree, {NBGRADER_FEEDBACK: NBGRADER_FEEDBACK})
    return tree


def build_release(out: Path, lab: Path = paths.LAB, force: bool = False) -> dict[str, Path]:
    """Build the lab's three outputs into `out` (see output.py: what it refuses, what --force allows);
    returns the path of each zip (and DIR/nbgrader/, the course)."""
    src = Sources.load(lab)
    files = Tree()
    student = student_tree(src)
    files.add("student.zip", zip_bytes(student, prefix=src.folder))
    files.add("autograder.zip", zip_bytes(gradescope_tree(src)))
    course = nbgrader_tree(src, student)
    files.add("nbgrader.zip", zip_bytes(course, prefix="nbgrader"))
    for path, data in course.files.items():
        files.add(f"nbgrader/{path}", data, executable=path in course.executable)
    write_release(out, files, force=force)
    return {"student": out / "student.zip", "gradescope": out / "autograder.zip",
            "nbgrader": out / "nbgrader.zip", "nbgrader_course": out / "nbgrader"}
