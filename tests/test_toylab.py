"""A second lab on the same engine: tests/toylab/, the smallest lab folder, graded through the commands a user
runs (`python -m autograder --lab tests/toylab ...`), in fresh processes: the engine knows no lab (issue 21)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
import yaml

from autograder.lab.paths import ROOT

TOYLAB = ROOT / "tests" / "toylab"


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "autograder", "--lab", str(TOYLAB), *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=900)


def graded(out: Path) -> dict[str, float]:
    return {t["name"].split(":")[0]: t["score"] for t in json.loads((out / "results.json").read_text())["tests"]}


HAND_WRITTEN = ("solutions/toy.py", "grading.yaml", "grading/e2e_tests.py", "grading/bank.py")


def test_the_toy_lab_is_four_hand_written_files_under_120_lines():
    """Everything else is the given world, or computed: the starter (`starter`), the data files (`refresh`); its
    checks, twins, probe and confirmation inputs, nulls and hooks are derived from grading.yaml (issue 31)."""
    computed = {"assignment/toy.py", "grading/data/e2e_mistakes.json", "grading/checks/hidden/examples.json"}
    world = {f"assignment/{name}" for name in yaml.safe_load((TOYLAB / "grading.yaml").read_text())["world"]}
    files = {p.relative_to(TOYLAB).as_posix() for p in TOYLAB.rglob("*")
             if p.is_file() and "__pycache__" not in p.parts}
    assert files - computed - world == set(HAND_WRITTEN)
    assert sum(len((TOYLAB / name).read_text().splitlines()) for name in HAND_WRITTEN) < 120


def test_the_toy_labs_reference_gets_full_marks_and_its_starter_nothing(tmp_path):
    ref = run("grade", str(TOYLAB / "solutions" / "toy.py"), "--out", str(tmp_path / "ref"))
    assert ref.returncode == 0, ref.stderr
    results = json.loads((tmp_path / "ref" / "results.json").read_text())
    assert results["score"] == 40 and "total        40.0 / 40" in ref.stdout, ref.stdout
    assert "Toy lab: masked means: grade 40.0 / 40" in (tmp_path / "ref" / "report.md").read_text()
    starter = run("grade", str(TOYLAB / "assignment" / "toy.py"), "--out", str(tmp_path / "starter"))
    assert starter.returncode == 0, starter.stderr
    assert json.loads((tmp_path / "starter" / "results.json").read_text())["score"] == 0


def test_the_toy_labs_self_check_and_its_mistake(tmp_path):
    (tmp_path / "toy.py").write_text((TOYLAB / "solutions" / "toy.py").read_text().replace(
        "return (x * mask).sum() / mask.sum()", "return (x * mask).mean()"))
    mistake = run("grade", str(tmp_path / "toy.py"), "--out", str(tmp_path / "out"), "--only", "mean,scale")
    assert mistake.returncode == 0, mistake.stderr
    scores = json.loads((tmp_path / "out" / "results.json").read_text())["score"]
    assert scores == 15  # scale's 15 points only: the mistake costs points in its own part
    check = run("grade", str(TOYLAB / "solutions" / "toy.py"), "--out", str(tmp_path / "self"), "--self-check")
    assert check.returncode == 0 and json.loads((tmp_path / "self" / "results.json").read_text())["score"] == 20


def test_an_input_blind_answer_that_diverges_the_training_earns_nothing_end_to_end(tmp_path):
    """masked_mean answering 0 whose gradient is nan at the padded positions: every answer is finite, yet the
    trained weights turn nan where the world's error multiplies them by the mask's 0, so the judged error is nan,
    which compares false with max_loss. It scored 10/10 on e2e.fit; a metric that is not a number now fails."""
    (tmp_path / "toy.py").write_text((TOYLAB / "solutions" / "toy.py").read_text().replace(
        "return (x * mask).sum() / mask.sum()",
        "return torch.where(mask > 0, x * 0, torch.sqrt(torch.nan_to_num(x) * 0 + mask)).sum() / mask.sum()"))
    done = run("grade", str(tmp_path / "toy.py"), "--out", str(tmp_path / "out"), "--only", "e2e")
    assert done.returncode == 0, done.stderr
    assert graded(tmp_path / "out")["e2e.fit"] == 0
    assert "final loss not a number (needs <= 0.01: failed)" in (tmp_path / "out" / "report.md").read_text()


@pytest.mark.slow
def test_the_toy_lab_validates(tmp_path):
    """Its nulls score 0 on every test (checks and e2e), its mistake is caught in its own part, its variant full."""
    done = run("validate", "--e2e")
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "every expectation holds" in done.stdout


@pytest.mark.slow
def test_the_toy_lab_grades_a_class(tmp_path):
    """grade-all: one row per student, each part's points from the toy lab's grading.yaml."""
    for student, source in (("ada", TOYLAB / "solutions" / "toy.py"), ("bob", TOYLAB / "assignment" / "toy.py")):
        (tmp_path / "class" / student).mkdir(parents=True)
        (tmp_path / "class" / student / "toy.py").write_text(source.read_text())
    done = run("grade-all", str(tmp_path / "class"), "--out", str(tmp_path / "grades"), "--workers", "1")
    assert done.returncode == 0, done.stderr
    rows = (tmp_path / "grades" / "gradebook.csv").read_text().splitlines()
    assert rows[0].startswith("student,name,email,sid,mean,scale,e2e,total,max_total,status")
    assert rows[1].startswith("ada,,,,15,15,10,40,40,graded") and rows[2].startswith("bob,,,,0,0,0,0,40,")


@pytest.fixture(scope="module")
def released(tmp_path_factory) -> Path:
    """The toy lab's three outputs, built by the command a user runs (a fresh process)."""
    out = tmp_path_factory.mktemp("toylab-release")
    done = run("release", "--out", str(out))
    assert done.returncode == 0, done.stdout + done.stderr
    return out


def zip_files(path: Path, prefix: str = "") -> dict[str, bytes]:
    with zipfile.ZipFile(path) as archive:
        return {i.filename.removeprefix(prefix): archive.read(i) for i in archive.infolist()}


def test_the_toy_lab_releases_through_the_same_command(released):
    """Its recipe names only what its files are: the engine adds the starter, the world, the self-check and its
    engine, the public checks and grading.yaml; the guard finds no secret in the student bundle."""
    from autograder.bundling import guard
    from autograder.bundling.pipeline import Sources
    student = zip_files(released / "student.zip", "toylab/")
    assert {"toy.py", "toyworld.py", "self_check.py", "README.md", "grading.yaml", "requirements.txt",
            "autograder/checks/derived.py", "autograder/judge/grade.py",
            "autograder/judge/self_check.py"} <= set(student)
    assert student["toy.py"] == (TOYLAB / "assignment" / "toy.py").read_bytes()
    assert not [n for n in student if n.startswith(("solutions/", "grading/", "autograder/judge/e2e"))]
    public = yaml.safe_load(student["grading.yaml"])
    assert public["e2e"] == {} and public["contract"]["scale"]["examples"], "the declared worked examples ship"
    forbidden = Sources.load(TOYLAB).forbidden()
    assert forbidden["solution line"] and guard.find_leaks(student, forbidden) == []
    readme = student["README.md"].decode()
    assert "| `fit` | mean, scale | gradient descent on a masked squared error" in readme, "its @e2e_test's words"
    gradescope = zip_files(released / "autograder.zip")
    assert {"setup.sh", "run_autograder", "solutions/toy.py", "grading.yaml", "grading/bank.py", "grading/e2e_tests.py",
            "grading/checks/hidden/examples.json", "assignment/toyworld.py", "requirements.txt"} <= set(gradescope)
    assert not [n for n in gradescope if n.startswith("autograder/bundling/")]
    assert (released / "nbgrader" / "source" / "toylab" / "toy.ipynb").is_file()


def test_a_release_into_the_lab_folder_is_refused():
    done = run("release", "--out", str(TOYLAB / "out"))
    assert done.returncode == 2 and "is inside the lab's folder" in done.stderr, done.stderr
    assert not (TOYLAB / "out").exists()


@pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("unshare"),
                    reason="binding a folder at /autograder needs root and unshare")
def test_the_toy_labs_gradescope_bundle_grades_its_reference_to_full_marks(released, tmp_path):
    """run_autograder in Gradescope's layout (tests/test_release_gradescope.py), with a fresh interpreter that
    cannot import the repository (~20 s)."""
    from test_release_bundle import fresh_python
    from test_release_gradescope import MOUNT, run_autograder
    python = fresh_python(tmp_path / "venv")
    created = not MOUNT.exists()
    MOUNT.mkdir(exist_ok=True)
    try:
        results = run_autograder((released / "autograder.zip", python.parent), tmp_path,
                                 TOYLAB / "solutions" / "toy.py")
    finally:
        if created:
            MOUNT.rmdir()
    assert results["score"] == 40 and all(t["status"] == "passed" for t in results["tests"]), results
    assert {t["name"].split(":")[0] for t in results["tests"]} >= {"mean.matches_reference", "e2e.fit"}
