"""`python -m autograder release`: what each output holds, what it must never hold, reproducibility."""

from __future__ import annotations

import ast
import json
import subprocess
import zipfile
from pathlib import Path

import pytest
import yaml

from autograder.bundling import guard
from autograder.bundling.engine import self_check_modules
from autograder.bundling.pipeline import Sources, build_release, check_student_files
from autograder.bundling.public_config import visible_tests
from autograder.lab import config
from autograder.lab.paths import ENGINE, REFERENCE, ROOT

CONTRACT = config.load().functions


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> dict[str, Path]:
    return build_release(tmp_path_factory.mktemp("release"))


@pytest.fixture(scope="module")
def raw() -> dict:
    return yaml.safe_load((ROOT / "grading.yaml").read_text())


def read_zip(path: Path) -> dict[str, bytes]:
    with zipfile.ZipFile(path) as archive:
        return {info.filename: archive.read(info) for info in archive.infolist()}


def student_files(built) -> dict[str, bytes]:
    return {name.removeprefix("lab12/"): data for name, data in read_zip(built["student"]).items()}


# ------------------------------------------------------------------ the student bundle
def test_student_bundle_holds_the_lab(built):
    files = student_files(built)
    for name in ("rlhf.py", "tinylm.py", "lab_helpers.py", "training.py", "sft.pt", "self_check.py",
                 "requirements.txt", "README.md", "grading.yaml", "autograder/judge/grade.py",
                 "autograder/sandbox/child/worker.py", "grading/checks/public/gae.py", "tests/test_gae.py"):
        assert name in files, name
    assert (ROOT / "assignment" / "run_experiments.py").exists() <= ("run_experiments.py" in files)
    assert b"torch==2.13.0" in files["requirements.txt"]
    assert all(name.startswith("lab12/") for name in read_zip(built["student"]))


def test_student_starter_is_generated_from_the_reference(built):
    starter = student_files(built)["rlhf.py"].decode()
    assert starter == (ROOT / "assignment" / "rlhf.py").read_text()
    assert starter.count("raise NotImplementedError") == len(CONTRACT)


def test_student_bundle_holds_no_grader_only_file(built):
    names = student_files(built)
    for forbidden in ("grading/checks/hidden/", "grading/bank/", "autograder/judge/diagnosis.py",
                      "autograder/judge/e2e.py", "autograder/bundling/", "grading/data/", "grading/replays.py",
                      "autograder/replay/", "solutions/"):
        assert not [n for n in names if n.startswith(forbidden)], forbidden


@pytest.mark.parametrize("kind", ["solution line", "hidden check code", "grading.yaml secret"])
def test_student_bundle_holds_no_solution_hidden_check_or_secret(built, kind):
    forbidden = Sources.load().forbidden()
    assert forbidden[kind], f"nothing to look for: the {kind} list is empty"
    assert guard.find_leaks(student_files(built), {kind: forbidden[kind]}) == []


def test_the_guard_catches_a_leak():
    src = Sources.load()
    reference = {"rlhf.py": REFERENCE.read_bytes()}
    with pytest.raises(guard.LeakError, match="solution line"):
        check_student_files(src, reference)
    with pytest.raises(guard.LeakError, match="grader-only files"):
        check_student_files(src, {"grading/checks/hidden/gae.py": b""})


def test_shipped_grading_yaml_has_only_the_visible_tests(built, raw):
    shipped = yaml.safe_load(student_files(built)["grading.yaml"])
    assert shipped["tests"] == visible_tests(raw) and len(visible_tests(raw)) >= 8
    assert shipped["e2e"] == {}
    assert shipped["limits"] == raw["limits"] and shipped["hypothesis"] == raw["hypothesis"]


def test_engine_follows_imports_but_never_into_hidden_modules():
    modules = self_check_modules(ENGINE)
    assert {"autograder.judge.grade", "autograder.sandbox.remote", "autograder.sandbox.sandbox",
            "autograder.sandbox.notebook"} <= set(modules)
    assert not [m for m in modules if m.startswith(("lab12.checks.hidden", "autograder.lab.bank",
                                                    "autograder.judge.diagnosis", "autograder.judge.e2e"))]


def test_handout_teaches_every_function_and_its_points(built, raw):
    readme = student_files(built)["README.md"].decode()
    reference = ast.parse(REFERENCE.read_text())
    for node in reference.body:
        if isinstance(node, ast.FunctionDef):
            assert f"def {node.name}(" in readme
            assert ast.get_docstring(node).splitlines()[0] in readme  # the math and shapes, from the docstring
    for part in config.load().parts:
        points = sum(spec["points"] for t, spec in raw["tests"].items() if t.startswith(part + "."))
        assert f"`{part}`: " in readme and f"({points:g} points" in readme
    for name in raw["e2e"]:
        assert f"| `{name}` |" in readme
    for command in ("python -m pytest tests", "python self_check.py", "python run_experiments.py"):
        assert command in readme
    assert "blind spot" in readme and "run only when you submit" in readme
    intro = Sources.load().outline.intro
    assert readme.count(intro) == 1 and readme.count("Shapes:") == 1, "the lab's intro and its shapes are shown once"
    assert read_zip(built["student"]) and "`cd lab12`" in readme, "the handout names the folder the zip unpacks to"
    assert "withheld until after the due date" in readme and "worth 0 points" in readme  # the feedback policy


def test_public_tests_mirror_the_visible_tests_one_to_one(raw):
    tests = ROOT / "assignment" / "tests"
    found = {f"{path.stem.removeprefix('test_')}.{node.name.removeprefix('test_')}"
             for path in tests.glob("test_*.py") for node in ast.parse(path.read_text()).body
             if isinstance(node, ast.FunctionDef) and node.name.startswith("test_")}
    assert found == set(visible_tests(raw))


# ------------------------------------------------------------------ reproducibility
def test_building_twice_gives_byte_identical_zips(built, tmp_path):
    again = build_release(tmp_path)
    for name in ("student", "gradescope", "nbgrader"):
        assert built[name].read_bytes() == again[name].read_bytes(), name


@pytest.mark.parametrize("name", ["student", "gradescope", "nbgrader"])
def test_zips_have_sorted_entries_fixed_times_and_relative_paths(built, name):
    with zipfile.ZipFile(built[name]) as archive:
        infos = archive.infolist()
    names = [i.filename for i in infos]
    assert names == sorted(names)
    assert {i.date_time for i in infos} == {(1980, 1, 1, 0, 0, 0)}
    assert not [n for n in names if n.startswith("/") or ".." in n.split("/") or "__pycache__" in n]


def test_no_file_mentions_the_build_machine(built):
    for name in ("student", "gradescope", "nbgrader"):
        for path, data in read_zip(built[name]).items():
            assert str(ROOT).encode() not in data, f"{name}:{path} holds an absolute path of this machine"


# ------------------------------------------------------------------ the Gradescope autograder
def test_gradescope_zip_has_the_scripts_and_the_whole_grader(built):
    with zipfile.ZipFile(built["gradescope"]) as archive:
        modes = {i.filename: i.external_attr >> 16 for i in archive.infolist()}
        files = {i.filename: archive.read(i) for i in archive.infolist()}
    for script in ("setup.sh", "run_autograder"):
        assert modes[script] & 0o111, f"{script} is not executable"
    setup = files["setup.sh"].decode()
    assert "torch==2.13.0 --index-url https://download.pytorch.org/whl/cpu" in setup and "bubblewrap" in setup
    assert "-m autograder grade /autograder/submission --out /autograder/results" in files["run_autograder"].decode()
    for name in ("solutions/rlhf.py", "grading.yaml", "grading/checks/hidden/gae.py", "assignment/sft.pt",
                 "grading/data/replays.bin", "requirements.txt"):
        assert name in files, name
    assert not [n for n in files if n.startswith("autograder/bundling/")]


# ------------------------------------------------------------------ the nbgrader source notebook
def test_nbgrader_source_notebook_cells(built, raw):
    course = built["nbgrader_course"]
    assert (course / "nbgrader_config.py").is_file() and (course / "grader_feedback.py").is_file()
    notebook = json.loads((course / "source" / "lab12" / "rlhf.ipynb").read_text())
    cells = [(c["cell_type"], c["metadata"]["nbgrader"], "".join(c["source"])) for c in notebook["cells"]]
    solutions = {meta["grade_id"]: src for _, meta, src in cells if meta["solution"]}
    assert set(solutions) == set(CONTRACT)
    assert all("### BEGIN SOLUTION" in s and "### END SOLUTION" in s for s in solutions.values())
    graded = {meta["grade_id"]: (meta["points"], src) for _, meta, src in cells if meta["grade"]}
    public = visible_tests(raw)
    assert {k: v[0] for k, v in graded.items()} == {t.replace(".", "_"): s["points"] for t, s in public.items()}
    for test_id in public:  # each runs the grader's check of that id, not a copy of it
        assert graded[test_id.replace(".", "_")][1].endswith(f"visible_test({test_id!r})\n")
    given = [meta for kind, meta, _ in cells if not meta["solution"]]
    assert all(meta["locked"] for meta in given), "given and test cells are read-only"


def test_the_nbgrader_folder_is_the_student_bundle_with_the_notebook_for_rlhf_py(built):
    source = built["nbgrader_course"] / "source" / "lab12"
    shipped = {p.relative_to(source).as_posix() for p in source.rglob("*") if p.is_file()}
    student = {n for n in student_files(built) if n.split("/")[0] not in ("rlhf.py", "README.md", "tests")}
    assert shipped == student | {"rlhf.ipynb"}
    assert "autograder/judge/notebook_checks.py" in shipped and "self_check.py" in shipped


def test_the_notebook_is_made_from_the_reference_not_a_copy(built):
    """Each solution cell is the reference's function verbatim: one source for both editions."""
    notebook = json.loads((built["nbgrader_course"] / "source" / "lab12" / "rlhf.ipynb").read_text())
    reference = REFERENCE.read_text()
    for cell in notebook["cells"]:
        if cell["metadata"]["nbgrader"]["solution"]:
            assert "".join(cell["source"]) in reference


def test_the_default_output_folder_is_git_ignored_and_accepted():
    from autograder.commands.common import check_out_folder
    from autograder.commands.release import default_out
    out = default_out()
    assert out == ROOT / "out" / "release" / "lab12" and check_out_folder(out) == out
    ignored = subprocess.run(["git", "check-ignore", "-q", str(out / "student.zip")], cwd=ROOT)
    assert ignored.returncode == 0, "built bundles are never committed"


def test_release_command_prints_sizes_and_time(tmp_path, capsys):
    from autograder.__main__ import main
    assert main(["release", "--out", str(tmp_path)]) == 0
    printed = capsys.readouterr().out
    assert "student.zip" in printed and "KiB" in printed and "built in" in printed
    assert (tmp_path / "student.zip").stat().st_size > 0


# ------------------------------------------------------------------ the --out folder
def test_a_release_rebuilds_into_its_own_folder_and_removes_only_its_stale_files(tmp_path):
    from autograder.bundling.output import MANIFEST, write_release
    from autograder.bundling.tree import Tree
    old, new = Tree(), Tree()
    old.add("a.zip", b"1")
    old.add("nbgrader/source/lab12/gone.py", b"2")
    new.add("a.zip", b"3")
    write_release(tmp_path, old)
    write_release(tmp_path, new)  # everything there is its own: no --force needed
    assert (tmp_path / "a.zip").read_bytes() == b"3"
    assert not (tmp_path / "nbgrader").exists(), "a stale output and its emptied folders are removed"
    assert json.loads((tmp_path / MANIFEST).read_text())["files"].keys() == {"a.zip"}


def test_release_refuses_a_folder_holding_other_files_and_force_keeps_them(tmp_path):
    from autograder.bundling.output import ReleaseError
    staff = tmp_path / "nbgrader" / "source" / "lab12" / "notes.md"
    staff.parent.mkdir(parents=True)
    staff.write_text("staff notes")
    with pytest.raises(ReleaseError, match=r"holds 1 file.*notes\.md.*--force"):
        build_release(tmp_path)
    assert not (tmp_path / "student.zip").exists(), "nothing is written when it refuses"
    build_release(tmp_path, force=True)
    assert staff.read_text() == "staff notes" and (tmp_path / "student.zip").is_file()
    build_release(tmp_path, force=True)  # a rebuild keeps the staff file again
    assert staff.read_text() == "staff notes"


def test_release_refuses_to_overwrite_a_changed_output_or_a_file(tmp_path):
    from autograder.bundling.output import ReleaseError
    outputs = build_release(tmp_path / "out")
    notebook = outputs["nbgrader_course"] / "source" / "lab12" / "rlhf.ipynb"
    notebook.write_text("edited by staff")
    with pytest.raises(ReleaseError, match="changed since"):
        build_release(tmp_path / "out")
    assert notebook.read_text() == "edited by staff"
    (tmp_path / "file").write_text("x")
    with pytest.raises(ReleaseError, match="is a file"):
        build_release(tmp_path / "file")


def test_force_never_overwrites_a_file_no_release_wrote(tmp_path):
    from autograder.bundling.output import ReleaseError
    (tmp_path / "student.zip").write_text("someone else's zip")
    with pytest.raises(ReleaseError, match="move it away"):
        build_release(tmp_path, force=True)
    assert (tmp_path / "student.zip").read_text() == "someone else's zip"


# ------------------------------------------------------------------ the lab's recipe, the engine's part
def test_the_labs_recipe_declares_only_the_labs_files():
    from autograder.bundling.recipes import ENGINE_FILES, load
    recipes = load(ROOT)
    assert set(recipes.copy) == {"assignment/run_experiments.py", "assignment/tests"}
    assert not set(recipes.files) & set(ENGINE_FILES), "the engine describes its own files"
    assert not [name for name in recipes.copy if name.startswith(("autograder", "release/", "solutions/"))]


@pytest.mark.parametrize("text, message", [
    ("student: {engine: {entry: [autograder.judge.grade]}}\n", "student.engine"),
    ("gradescope: {copy: {grading: grading}}\n", "gradescope"),
    ("student: {copy: {../../release/requirements.txt: requirements.txt}}\n", "leaves the lab's folder"),
])
def test_a_recipe_of_the_engines_part_or_outside_the_lab_is_refused(tmp_path, text, message):
    from autograder.bundling.recipes import load
    (tmp_path / "release").mkdir()
    (tmp_path / "release" / "recipes.yaml").write_text(text)
    with pytest.raises(ValueError, match=message):
        load(tmp_path)


def test_the_handouts_e2e_descriptions_are_the_declarations():
    """One declaration of an e2e test's description: `@e2e_test(..., description)`, read without importing the lab."""
    from autograder.bundling.declarations import e2e_descriptions
    from autograder.judge import e2e
    from autograder.lab import registry
    from autograder.lab.paths import GRADING
    registry.lab()
    declared = {name: test.description for name, test in e2e.REGISTRY.items()}
    assert e2e_descriptions(GRADING) == declared and len(declared) == 4


def test_the_references_sections_must_hold_the_contracts_parts(raw):
    """The handout's and the notebook's parts are the reference's sections: they must agree with the contract."""
    from autograder.bundling.outline import read_outline
    from autograder.bundling.pipeline import check_parts
    source = REFERENCE.read_text()
    check_parts(read_outline(source), raw["contract"])
    merged = source.replace(" Part kl: ", " Part ppo_clip: ")
    with pytest.raises(ValueError, match=r"sections disagree with grading.yaml's contract: \w+ \(grading.yaml: kl"):
        check_parts(read_outline(merged), raw["contract"])
