"""Lab 13's bundles, built by `python -m autograder --lab labs/lab13 release` (a fresh process), tested as Lab 12's
are: what the student bundle, the Gradescope autograder and the nbgrader course hold and never hold (fast); the
student bundle in a fresh interpreter, the Gradescope bundle in its /autograder layout, the course with real
nbgrader (slow)."""

from __future__ import annotations

import ast
import csv
import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
import yaml
from test_lab13 import CFG, LAB13, REFERENCE, in_lab13, run

from autograder.bundling import guard
from autograder.bundling.declarations import e2e_descriptions
from autograder.bundling.pipeline import Sources
from autograder.bundling.public_config import visible_tests
from autograder.lab.paths import ROOT

RAW = yaml.safe_load((LAB13 / "grading.yaml").read_text())
STARTER = LAB13 / "assignment" / "posttrain.py"
ROOT_AND_UNSHARE = pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("unshare"),
                                      reason="binding a folder at /autograder needs root and unshare")


@pytest.fixture(scope="module")
def released(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("lab13-release")
    done = run("release", "--out", str(out))
    assert done.returncode == 0, done.stdout + done.stderr
    return out


def zip_files(path: Path, prefix: str = "") -> dict[str, bytes]:
    with zipfile.ZipFile(path) as archive:
        return {i.filename.removeprefix(prefix): archive.read(i) for i in archive.infolist()}


def student_files(released: Path) -> dict[str, bytes]:
    return zip_files(released / "student.zip", "lab13/")


# ------------------------------------------------------------------ the student bundle
def test_the_student_bundle_holds_the_lab_and_its_self_check(released):
    files = student_files(released)
    assert {"posttrain.py", "tinylm.py", "lab_helpers.py", "training.py", "sft.pt", "run_experiments.py",
            "tests/test_public.py", "self_check.py", "requirements.txt", "README.md", "grading.yaml",
            "autograder/checks/derived.py", "autograder/judge/self_check.py", "autograder/judge/grade.py"} <= set(files)
    assert files["posttrain.py"] == STARTER.read_bytes()
    world = {"tinylm.py": ROOT / "assignment", "lab_helpers.py": ROOT / "assignment", "sft.pt": ROOT / "assignment",
             "training.py": LAB13 / "assignment"}  # Lab 12's shared files, Lab 13's own
    assert all(files[name] == (folder / name).read_bytes() for name, folder in world.items())
    assert yaml.safe_load(files["grading.yaml"])["world"] == ["tinylm.py", "lab_helpers.py", "sft.pt", "training.py"]
    shipped = yaml.safe_load(files["grading.yaml"])
    assert shipped["tests"] == visible_tests(RAW) and shipped["e2e"] == {} and shipped["submission"] == "posttrain.py"


def test_the_student_bundle_holds_no_grader_only_file_and_no_secret(released):
    files = student_files(released)
    assert not [n for n in files if n.startswith(("solutions/", "grading/checks/hidden", "grading/bank",
                                                  "grading/data", "grading/lab.py", "grading/e2e_tests.py",
                                                  "autograder/judge/e2e.py", "autograder/lab/bank.py",
                                                  "autograder/bundling"))]
    forbidden = Sources.load(LAB13).forbidden()
    for kind, texts in forbidden.items():
        assert texts, f"nothing to look for: the {kind} list is empty"
        assert guard.find_leaks(files, {kind: texts}) == [], kind


def test_the_handout_teaches_every_function_its_points_and_the_e2e_tests_declarations(released):
    readme = student_files(released)["README.md"].decode()
    for node in ast.parse(REFERENCE.read_text()).body:
        if isinstance(node, ast.FunctionDef):
            assert f"def {node.name}(" in readme and ast.get_docstring(node).splitlines()[0] in readme, node.name
    for part in CFG.parts:
        points = sum(spec.points for t, spec in CFG.tests.items() if t.startswith(part + "."))
        assert f"### Part `{part}`: " in readme and f"({points:g} points" in readme, part
    descriptions = e2e_descriptions(LAB13 / "grading")
    for name in RAW["e2e"]:
        assert f"| `{name}` |" in readme and descriptions[name] in readme, name
    total = sum(spec.points for spec in CFG.tests.values())
    assert f"## How it is graded ({total:g} points)" in readme and "`cd lab13`" in readme
    assert "## Why these five functions" in readme and "python run_experiments.py" in readme


def test_the_handouts_e2e_descriptions_are_the_labs_declarations():
    declared = json.loads(in_lab13("import json\nfrom autograder.judge import e2e\n"
                                   "from autograder.lab import registry\nregistry.lab()\n"
                                   "print(json.dumps({n: t.description for n, t in e2e.REGISTRY.items()}))\n"))
    assert e2e_descriptions(LAB13 / "grading") == declared and set(declared) == set(RAW["e2e"])


# ------------------------------------------------------------------ the Gradescope autograder, the nbgrader course
def test_the_gradescope_zip_holds_the_whole_grader_and_its_scripts(released):
    with zipfile.ZipFile(released / "autograder.zip") as archive:
        modes = {i.filename: i.external_attr >> 16 for i in archive.infolist()}
        files = {i.filename: archive.read(i) for i in archive.infolist()}
    assert modes["setup.sh"] & 0o111 and modes["run_autograder"] & 0o111
    assert "it grades posttrain.py, or a notebook" in files["run_autograder"].decode()
    assert {"solutions/posttrain.py", "grading.yaml", "grading/checks/hidden/dpo.py", "grading/bank/dpo.py",
            "grading/e2e_tests.py", "assignment/training.py", "assignment/sft.pt", "requirements.txt"} <= set(files)
    assert files["grading.yaml"] == (LAB13 / "grading.yaml").read_bytes()
    assert not [n for n in files if n.startswith("autograder/bundling/")]


def test_the_nbgrader_notebook_has_a_solution_cell_per_function_and_a_test_cell_per_public_test(released):
    source = released / "nbgrader" / "source" / "lab13"
    notebook = json.loads((source / "posttrain.ipynb").read_text())
    metas = [(c["metadata"]["nbgrader"], "".join(c["source"])) for c in notebook["cells"]]
    assert {meta["grade_id"] for meta, _ in metas if meta["solution"]} == set(CFG.contract)
    graded = {meta["grade_id"]: meta["points"] for meta, _ in metas if meta["grade"]}
    assert graded == {t.replace(".", "_"): spec["points"] for t, spec in visible_tests(RAW).items()}
    shipped = {p.relative_to(source).as_posix() for p in source.rglob("*") if p.is_file()}
    student = {n for n in student_files(released) if n.split("/")[0] not in ("posttrain.py", "README.md", "tests")}
    assert shipped == student | {"posttrain.ipynb"}


# ------------------------------------------------------------------ slow: the bundles run
@pytest.fixture(scope="module")
def fresh(released, tmp_path_factory) -> tuple[Path, Path]:
    """(the unpacked lab13/ folder, a fresh interpreter that cannot import the repository)."""
    from test_release_bundle import fresh_python
    base = tmp_path_factory.mktemp("lab13-student")
    with zipfile.ZipFile(released / "student.zip") as archive:
        archive.extractall(base / "unpacked")
    return base / "unpacked" / "lab13", fresh_python(base / "venv")


@pytest.mark.slow
def test_the_student_bundle_fails_the_starter_clearly_and_passes_the_reference(fresh, tmp_path):
    from test_release_bundle import run as run_in
    folder, python = fresh
    tests = run_in(python, ["-m", "pytest", "-q", "-p", "no:cacheprovider", "tests"], folder)
    assert tests.returncode == 1 and "NotImplementedError" in tests.stdout, tests.stdout[-3000:]
    check = run_in(python, ["self_check.py"], folder)
    assert check.returncode == 1 and "is not implemented yet" in check.stdout and "[PASS]" not in check.stdout
    copy = tmp_path / "lab13"
    shutil.copytree(folder, copy)
    shutil.copy(REFERENCE, copy / "posttrain.py")
    assert run_in(python, ["-m", "pytest", "-q", "-p", "no:cacheprovider", "tests"], copy).returncode == 0
    check = run_in(python, ["self_check.py"], copy)
    assert check.returncode == 0 and "[FAIL]" not in check.stdout, check.stdout + check.stderr
    visible = sum(spec["points"] for spec in visible_tests(RAW).values())
    total = next(line.split() for line in check.stdout.splitlines() if line.startswith("total"))
    assert total[:4] == ["total", f"{visible:.1f}", "/", f"{visible:g}"], total


@pytest.fixture(scope="module")
def gradescope(released, tmp_path_factory):
    """(autograder.zip, the fresh venv's bin folder), as test_release_gradescope's `setup`."""
    from test_release_bundle import fresh_python
    from test_release_gradescope import MOUNT
    python = fresh_python(tmp_path_factory.mktemp("lab13-gradescope") / "venv")
    created = not MOUNT.exists()
    MOUNT.mkdir(exist_ok=True)
    yield released / "autograder.zip", python.parent
    if created:
        MOUNT.rmdir()


@pytest.mark.slow
@ROOT_AND_UNSHARE
def test_the_gradescope_bundle_grades_the_reference_to_full_marks(gradescope, tmp_path):
    """The whole grade, end-to-end training included, in Gradescope's layout (about a minute on 2 loaded cores)."""
    from test_release_gradescope import run_autograder
    results = run_autograder(gradescope, tmp_path, REFERENCE)
    assert [t["name"] for t in results["tests"] if t["status"] != "passed"] == []
    assert results["score"] == sum(spec.points for spec in CFG.tests.values()) == 84
    assert {t["name"].split(":")[0] for t in results["tests"]} == set(CFG.tests), "the hidden and e2e tests ran"


@pytest.mark.slow
@ROOT_AND_UNSHARE
def test_the_gradescope_bundle_grades_the_starter_zero(gradescope, tmp_path):
    from test_release_gradescope import run_autograder
    results = run_autograder(gradescope, tmp_path, STARTER)
    assert results["score"] == 0 and results["tests"] and all(t["status"] == "failed" for t in results["tests"])


@pytest.mark.slow
def test_real_nbgrader_autogrades_the_public_tests(released, tmp_path):
    """`nbgrader generate_assignment lab13` then `autograde`: the reference notebook gets every public point,
    the starter none (each test cell runs the grader's public check of its id); in the released folder, which has
    only the notebook, self_check.py and run_experiments.py take it."""
    from test_release_nbgrader import NBGRADER, cells, grade_id, nbgrader
    from test_release_nbgrader import run as run_in
    if not NBGRADER.exists():
        pytest.skip("nbgrader is not installed next to this interpreter")
    course = tmp_path / "course"
    shutil.copytree(released / "nbgrader", course)
    printed = nbgrader(course, "generate_assignment", "lab13", "--force")
    assert "not recognized" not in printed and "Outdated config" not in printed, printed[-3000:]
    solved = {grade_id(c): "".join(c["source"]) for c in cells(course / "source" / "lab13" / "posttrain.ipynb")}
    for student in ("reference", "starter"):
        data = json.loads((course / "release" / "lab13" / "posttrain.ipynb").read_text())
        for cell in data["cells"]:
            if student == "reference" and cell["metadata"].get("nbgrader", {}).get("solution"):
                cell["source"] = solved[grade_id(cell)]
        folder = course / "submitted" / student / "lab13"
        folder.mkdir(parents=True)
        (folder / "posttrain.ipynb").write_text(json.dumps(data))
    nbgrader(course, "autograde", "lab13", "--create", "--force")
    nbgrader(course, "export")
    with open(course / "grades.csv") as f:
        rows = {row["student_id"]: row for row in csv.DictReader(f)}
    visible = sum(spec["points"] for spec in visible_tests(RAW).values())
    assert float(rows["reference"]["score"]) == float(rows["reference"]["max_score"]) == visible
    assert float(rows["starter"]["score"]) == 0
    folder = tmp_path / "lab13"
    shutil.copytree(course / "release" / "lab13", folder)
    shutil.copy(course / "submitted" / "reference" / "lab13" / "posttrain.ipynb", folder)
    check = run_in(course, sys.executable, "self_check.py", "posttrain.ipynb", cwd=folder)
    assert "[FAIL]" not in check and check.count("[PASS]") == len(visible_tests(RAW)), check[-2000:]
    shutil.copy(course / "release" / "lab13" / "posttrain.ipynb", folder)  # the starter: it stops before training
    experiments = subprocess.run([sys.executable, "run_experiments.py"], cwd=folder, capture_output=True, text=True,
                                 timeout=600)
    assert experiments.returncode == 1 and "implement these first: group_advantages" in experiments.stdout, (
        experiments.stdout + experiments.stderr)
