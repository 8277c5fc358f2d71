"""The three outputs of a release, each a short pipeline of the steps in this package.

    outputs = build_release(Path("out/release"))
    # {"student": .../student.zip, "gradescope": .../autograder.zip, "nbgrader": .../nbgrader.zip}

Inputs: the reference in solutions/ (the one source of the starter, the handout and the notebook), assignment/,
grading.yaml, and the recipes and templates in release/.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import yaml

from autograder.bundling import guard
from autograder.bundling.collect import collect_files
from autograder.bundling.deterministic_zip import zip_bytes
from autograder.bundling.engine import add_engine
from autograder.bundling.handout import add_handout, environment, file_rows, handout_context
from autograder.bundling.outline import Outline, read_outline
from autograder.bundling.output import write_release
from autograder.bundling.public_config import add_public_config, secrets
from autograder.bundling.scripts import add_scripts
from autograder.bundling.source_notebook import add_source_notebook, check_titles, source_notebook
from autograder.bundling.starter import add_starter
from autograder.bundling.tree import Tree
from autograder.paths import ROOT
from autograder.secret_files import grader_roots
from autograder.starter import strip_solutions

ENGINE_ONLY_PATHS = ("autograder/e2e.py", "autograder/bundling/")  # what the self-check never needs


@dataclass
class Sources:
    """Everything a release reads, loaded once."""

    root: Path
    recipes: dict
    raw: dict           # grading.yaml
    reference: Path
    lab: Outline
    torch: str          # the pinned torch version (from release/requirements.txt)

    @classmethod
    def load(cls, root: Path = ROOT) -> "Sources":
        release = root / "release"
        reference = root / "solutions" / yaml.safe_load((root / "grading.yaml").read_text())["submission"]
        pin = re.search(r"^torch==(\S+)", (release / "requirements.txt").read_text(), re.M)
        if pin is None:
            raise ValueError("release/requirements.txt must pin torch (torch==X.Y.Z)")
        return cls(root, yaml.safe_load((release / "recipes.yaml").read_text()),
                   yaml.safe_load((root / "grading.yaml").read_text()), reference,
                   read_outline(reference.read_text()), pin.group(1))

    @property
    def templates(self) -> Path:
        return self.root / "release" / "templates"

    def context(self, tree: Tree, folder: str) -> dict:
        """What the handout and the notebook's introduction show about a release holding `tree`."""
        return handout_context(self.lab, self.raw, self.recipes["e2e_descriptions"], self.torch,
                               has_experiments="run_experiments.py" in tree.files, folder=folder,
                               files=file_rows(tree, self.recipes["files"]))

    def forbidden(self) -> dict[str, list[str]]:
        """What no student-facing file may contain (see guard.py)."""
        checks = self.root / "grading" / "checks"
        engine = self.root / "autograder" / "checks"
        given = [*sorted((checks / "public").glob("*.py")), engine / "tools.py", engine / "__init__.py",
                 *sorted((self.root / "assignment").rglob("*.py"))]
        public = [p.read_text() for p in given]  # lines shared with public code are not hidden material
        starter = strip_solutions(self.reference.read_text())
        return {"solution line": guard.solution_lines(self.reference.read_text(), starter),
                "hidden check code": guard.hidden_check_lines(checks / "hidden", public),
                "grading.yaml secret": secrets(self.raw)}


def student_tree(src: Sources) -> Tree:
    recipe = src.recipes["student"]
    tree = Tree()
    add_starter(tree, src.reference, recipe["starter"])
    collect_files(tree, src.root, recipe["copy"], optional=recipe.get("optional", []))
    add_engine(tree, src.root, **recipe["engine"])
    add_public_config(tree, src.raw, recipe["public_config"])
    context = src.context(tree, folder=recipe["folder"])
    add_handout(tree, src.templates, recipe["handout"]["template"], recipe["handout"]["to"], context)
    check_student_files(src, tree.files)
    return tree


def check_student_files(src: Sources, files: dict[str, bytes]) -> None:
    """Raise guard.LeakError when student-facing files hold grader-only paths or material."""
    secret = tuple(str(p.relative_to(src.root)) + ("/" if p.is_dir() else "") for p in grader_roots(src.root)
                   if p.name != "grading.yaml")  # the bundle's grading.yaml is the public one (its content is checked)
    paths = [name for name in files if name.startswith(secret) or name.startswith(ENGINE_ONLY_PATHS)]
    if paths:
        raise guard.LeakError(f"refusing to release grader-only files to students: {', '.join(paths)}")
    guard.check_no_leaks(files, src.forbidden())


def gradescope_tree(src: Sources) -> Tree:
    recipe = src.recipes["gradescope"]
    tree = Tree()
    collect_files(tree, src.root, recipe["copy"], exclude=recipe.get("exclude", []))
    add_scripts(tree, src.templates, recipe["scripts"], {"torch": src.torch, "submission": src.raw["submission"]})
    return tree


def nbgrader_tree(src: Sources, student: Tree) -> Tree:
    """The course folder: source/<assignment>/ holds the student bundle's files minus those the notebook
    replaces (so the same engine runs its test cells, self_check.py and run_experiments.py), and the notebook."""
    recipe = src.recipes["nbgrader"]
    name = src.raw["lab"]
    given = Tree()
    for path, data in student.files.items():
        if path.split("/")[0] not in recipe["without"]:
            given.add(path, data, executable=path in student.executable)
    env = environment(src.templates)
    intro = env.get_template(recipe["intro"]).render(**src.context(given, folder=name), notebook=recipe["notebook"])
    tree = Tree()
    for path, data in given.files.items():
        tree.add(f"source/{name}/{path}", data, executable=path in given.executable)
    titles = check_titles(src.root / "grading" / "checks" / "public")
    add_source_notebook(tree, f"source/{name}/{recipe['notebook']}", source_notebook(src.lab, src.raw, titles, intro))
    tree.add("nbgrader_config.py", env.get_template(recipe["config"]).render(assignment=name, course=name))
    tree.add(recipe["feedback"], (src.root / "release" / recipe["feedback"]).read_bytes())
    return tree


def build_release(out: Path, root: Path = ROOT, force: bool = False) -> dict[str, Path]:
    """Build the three outputs into `out` (see output.py: what it refuses, what --force allows);
    returns the path of each zip (and DIR/nbgrader/, the course)."""
    src = Sources.load(root)
    files = Tree()
    student = student_tree(src)
    files.add("student.zip", zip_bytes(student, prefix=src.recipes["student"]["folder"]))
    files.add("autograder.zip", zip_bytes(gradescope_tree(src)))
    course = nbgrader_tree(src, student)
    files.add("nbgrader.zip", zip_bytes(course, prefix="nbgrader"))
    for path, data in course.files.items():
        files.add(f"nbgrader/{path}", data, executable=path in course.executable)
    write_release(out, files, force=force)
    return {"student": out / "student.zip", "gradescope": out / "autograder.zip",
            "nbgrader": out / "nbgrader.zip", "nbgrader_course": out / "nbgrader"}
