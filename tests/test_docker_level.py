"""The Docker level (Gradescope's container): root, namespaces refused, so bubblewrap cannot start.

tests/docker_level.py builds the level (root without CAP_SYS_ADMIN, Docker's namespace seccomp rules).
Here: the grader really falls back to its own uid + Landlock + seccomp there, and the Gradescope bundle,
unpacked in its /autograder layout at that level (the repository hidden, as it is not in Gradescope's
container; this environment's venv bound at /autograder/venv, as setup.sh would make it), gives a
submission that searches the whole disk for the reference 0, and the reference full marks, with Landlock;
with file modes alone (AUTOGRADER_SANDBOX=rlimits turns Landlock off) nothing keeps the child to its
allow-list and the grade is refused. `.ci/run` also runs the adversarial suite at this level.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
import docker_level  # noqa: E402

from autograder.lab.paths import REFERENCE, ROOT, STARTER  # noqa: E402

pytestmark = [pytest.mark.slow, pytest.mark.skipif(docker_level.available() is not None,
                                                   reason=str(docker_level.available()))]
VENV = ROOT / ".venv"
SEARCH = (Path(__file__).parent / "adversarial" / "search_disk.py").read_text()


def test_namespaces_are_refused_and_the_grader_falls_back():
    script = ("import subprocess; from autograder.sandbox.sandbox import isolation\n"
              "nested = subprocess.run(['bwrap', '--dev-bind', '/', '/', 'true'], capture_output=True, text=True)\n"
              "print(nested.returncode, nested.stderr.strip()); print(isolation.detect().describe())")
    done = docker_level.run([str(VENV / "bin" / "python"), "-c", script], capture_output=True, text=True,
                            timeout=120, cwd=ROOT)
    nested, level = done.stdout.strip().splitlines()[-2:]
    assert nested.startswith("1 ") and "Operation not permitted" in nested, done.stdout + done.stderr
    assert level.startswith("no bubblewrap + own uid + Landlock + seccomp"), level


@pytest.fixture(scope="module")
def bundle(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("release")
    done = subprocess.run([str(VENV / "bin" / "python"), "-m", "autograder", "release", "--out", str(out)],
                          cwd=ROOT, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stdout + done.stderr
    return out / "autograder.zip"


def unpack(bundle: Path, tmp_path: Path, submission_text: str) -> Path:
    """The /autograder layout as Gradescope makes it (bound at /autograder by `at_docker_level`)."""
    root = docker_level.gradescope_layout(bundle, tmp_path / "autograder", "rlhf.py", submission_text.encode())
    Path("/autograder").mkdir(exist_ok=True)  # the mount point (the bind itself stays in the namespace)
    return root


def at_docker_level(root: Path, argv: list[str], env: dict | None = None) -> subprocess.CompletedProcess:
    environment = {"PATH": "/autograder/venv/bin:/usr/sbin:/usr/bin:/sbin:/bin", "HOME": "/root",
                   "LANG": "C.UTF-8", **(env or {})}
    return docker_level.run(argv, binds={str(root): "/autograder", str(VENV): "/autograder/venv"},
                            hide=[str(ROOT.parent)], env=environment, capture_output=True, text=True, timeout=1800)


def run_autograder(bundle: Path, tmp_path: Path, submission_text: str, env: dict | None = None) -> dict:
    """Run run_autograder at the Docker level on a fresh layout; its results.json."""
    root = unpack(bundle, tmp_path, submission_text)
    done = at_docker_level(root, ["/autograder/run_autograder"], env)
    assert done.returncode == 0, done.stdout + done.stderr
    results = json.loads((root / "results" / "results.json").read_text())
    assert results["stdout_visibility"] == "hidden"
    return results


def test_the_search_finds_the_reference_when_not_sandboxed(bundle, tmp_path):
    """The control: run by the judge's uid, unconfined, the same search adopts the bundle's reference."""
    root = unpack(bundle, tmp_path, SEARCH)
    done = at_docker_level(root, ["/autograder/venv/bin/python", "/autograder/submission/rlhf.py"])
    assert "ADOPTED /autograder/source/solutions/rlhf.py" in done.stdout, done.stdout + done.stderr


def test_a_disk_searching_stub_scores_zero(bundle, tmp_path):
    results = run_autograder(bundle, tmp_path, STARTER.read_text() + "\n\n" + SEARCH)
    assert results["score"] == 0, results.get("output", "")[:2000]
    assert results.get("tests"), results.get("output", "")[:2000]  # graded (not refused), and found nothing


def test_without_landlock_the_grade_is_refused(bundle, tmp_path):
    """File modes alone cannot keep the child to its allow-list: the preflight refuses, even the reference."""
    results = run_autograder(bundle, tmp_path, REFERENCE.read_text(), {"AUTOGRADER_SANDBOX": "rlimits"})
    assert results["score"] == 0 and not results.get("tests"), results
    assert "the GRADER failed" in results["output"]


def test_the_reference_scores_full_marks(bundle, tmp_path):
    results = run_autograder(bundle, tmp_path, REFERENCE.read_text())
    assert results["score"] == sum(t["max_score"] for t in results["tests"]) > 0, \
        [(t["name"], t.get("output", "")[:300]) for t in results["tests"] if t["score"] < t["max_score"]]


def test_a_grader_that_dies_tells_students_only_a_fixed_sentence(bundle, tmp_path):
    """The judge killed mid-grade (as by the OOM killer) after writing hidden material to stderr:
    results.json holds the fixed sentence only; the stderr goes to stdout, which is staff-only."""
    root = unpack(bundle, tmp_path, REFERENCE.read_text())
    (root / "hook").mkdir()
    (root / "hook" / "sitecustomize.py").write_text(
        "import os, sys\n"
        "if sys.orig_argv[1:4] == ['-m', 'autograder', 'grade']:\n"
        "    sys.stderr.write('HIDDEN-INPUT tensor([[0.25, -1.5]]) and a hidden check line\\n')\n"
        "    sys.stderr.flush()\n"
        "    os.kill(os.getpid(), 9)\n")
    done = at_docker_level(root, ["/autograder/run_autograder"], {"PYTHONPATH": "/autograder/hook"})
    assert done.returncode == 0, done.stdout + done.stderr
    text = (root / "results" / "results.json").read_text()
    results = json.loads(text)
    assert results["score"] == 0 and results["stdout_visibility"] == "hidden"
    assert "the GRADER failed" in results["output"] and "HIDDEN-INPUT" not in text
    assert "HIDDEN-INPUT" in done.stdout and "exit code 137" in done.stdout


def test_a_temp_folder_the_sandbox_cannot_use_is_refused_before_grading():
    """TMPDIR a folder of root's, mode 0700: before, every student was graded "not importable" and grade-all exited
    0; now grade and grade-all each refuse in one sentence, exit 2, and grade nothing."""
    script = ('mkdir -m 700 /tmp/private && mkdir -p /tmp/class/ada && cp "$2" /tmp/class/ada/rlhf.py && '
              'export TMPDIR=/tmp/private && "$1" -m autograder grade /tmp/class/ada/rlhf.py --out /tmp/one; '
              'echo "exit $?"; "$1" -m autograder grade-all /tmp/class --out /tmp/all; echo "exit $?"; ls /tmp/all')
    done = docker_level.run(["sh", "-c", script, "sh", str(VENV / "bin" / "python"), str(REFERENCE)], cwd=ROOT,
                            capture_output=True, text=True, timeout=600)
    errors = done.stderr.strip().splitlines()
    assert done.stdout.split() == ["exit", "2", "exit", "2"], done.stdout + done.stderr
    assert len(errors) == 3 and errors[0] == errors[1] and errors[2].startswith("ls: "), errors  # /tmp/all: never made
    assert errors[0].startswith("error: submissions cannot run in /tmp/private (the temporary folder: TMPDIR): "
                                "/tmp/private is not searchable by the sandbox's uid"), errors
