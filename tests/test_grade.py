"""The grader end to end on the reference and the starter: scores, results.json, reports, CLI."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from autograder.judge.grade import GraderError, grade
from autograder.judge.report import write_reports
from autograder.lab import config
from autograder.lab.paths import REFERENCE, ROOT, STARTER

CHECK_PARTS = {"rm_loss", "gae", "ppo_clip", "kl"}
GRADESCOPE_VISIBILITY = {"hidden", "after_due_date", "after_published", "visible"}


@pytest.fixture(scope="module")
def reference_grade():
    return grade(REFERENCE, only=CHECK_PARTS)


@pytest.fixture(scope="module")
def starter_grade():
    return grade(STARTER, only=CHECK_PARTS)


def test_reference_gets_full_marks(reference_grade):
    failed = [(t.id, t.message) for t in reference_grade.tests if not t.passed]
    assert not failed
    assert reference_grade.score == reference_grade.max_score == 80


def test_starter_gets_zero_with_one_clear_line_per_part(starter_grade):
    assert starter_grade.score == 0
    for t in starter_grade.tests:
        assert "is not implemented yet" in t.message and "NotImplementedError" in t.message


def test_results_json_follows_gradescope_format(reference_grade, tmp_path):
    write_reports(reference_grade, tmp_path)
    data = json.loads((tmp_path / "results.json").read_text())
    assert data["score"] == sum(t["score"] for t in data["tests"])
    assert {"execution_time", "output", "tests"} <= set(data)
    for t in data["tests"]:
        assert {"name", "score", "max_score", "status", "visibility", "output", "tags"} <= set(t)
        assert t["visibility"] in GRADESCOPE_VISIBILITY and t["status"] in ("passed", "failed")
        assert t["tags"][0] in CHECK_PARTS and len(t["tags"]) == 1
    assert (tmp_path / "results.json").stat().st_size < 1 << 20
    assert "| gae |" in (tmp_path / "report.md").read_text()
    assert "<table>" in (tmp_path / "report.html").read_text()


def test_points_come_from_grading_yaml(reference_grade):
    cfg = config.load()
    for t in reference_grade.tests:
        assert t.max_score == cfg.tests[t.id].points and t.visibility == cfg.tests[t.id].visibility


def test_grading_twice_gives_identical_results(tmp_path):
    source = REFERENCE.read_text()
    assert "for t in reversed(range(T)):" in source
    mistake = tmp_path / "rlhf.py"  # GAE's recursion run forwards in time
    mistake.write_text(source.replace("for t in reversed(range(T)):", "for t in range(T):"))
    outputs = []
    for run in range(2):
        result = grade(mistake, only={"gae"})
        write_reports(result, tmp_path / str(run))
        data = json.loads((tmp_path / str(run) / "results.json").read_text())
        data.pop("execution_time")
        outputs.append(data)
    assert outputs[0] == outputs[1]
    assert outputs[0]["score"] < 20


def test_cli_exit_codes(tmp_path):
    run = lambda *a: subprocess.run([sys.executable, "-m", "autograder", "grade", *a], cwd=ROOT,  # noqa: E731
                                    capture_output=True, text=True, timeout=300)
    missing = run(str(tmp_path / "nothing.py"), "--out", str(tmp_path / "out"))
    assert missing.returncode == 2 and "no submission" in missing.stderr
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "rlhf.py").write_text("def compute_gae(:\n")
    done = run(str(broken), "--out", str(tmp_path / "out"), "--only", "gae")
    assert done.returncode == 0
    data = json.loads((tmp_path / "out" / "results.json").read_text())
    assert data["score"] == 0 and "SyntaxError" in data["tests"][0]["output"]
    assert "partial" in done.stdout


@pytest.mark.slow
def test_full_grade_of_the_reference(tmp_path):
    result = grade(REFERENCE)
    assert [t.id for t in result.tests if not t.passed] == []
    assert result.score == result.max_score == 100
    e2e = [t for t in result.tests if t.tags[0] == "e2e"]
    assert len(e2e) == 4 and all(t.plots for t in e2e if t.id != "e2e.reward_model")


def test_an_empty_file_is_named_as_such(tmp_path):
    (tmp_path / "rlhf.py").write_text("# nothing yet\n\n")
    result = grade(tmp_path / "rlhf.py", only={"gae"})
    assert result.status == "empty" and result.score == 0
    assert all("holds no code" in t.message for t in result.tests)


def test_the_blank_starter_is_not_implemented(starter_grade):
    assert starter_grade.status == "not_implemented"


def test_a_syntax_error_is_not_importable_with_its_line(tmp_path):
    (tmp_path / "rlhf.py").write_text("import torch\n\ndef compute_gae(:\n")
    result = grade(tmp_path / "rlhf.py", only={"gae"})
    assert result.status == "not_importable" and "SyntaxError" in result.status_detail
    assert "line 3" in result.status_detail


def test_rlhf_py_in_a_single_nested_folder_is_found(tmp_path):
    (tmp_path / "lab12").mkdir()
    (tmp_path / "lab12" / "rlhf.py").write_text(REFERENCE.read_text())
    result = grade(tmp_path, only={"gae"})
    assert result.submission.endswith("lab12/rlhf.py") and result.score == 20


def test_a_link_to_the_reference_is_not_graded(tmp_path):
    (tmp_path / "rlhf.py").symlink_to(REFERENCE)
    with pytest.raises(GraderError, match="link"):
        grade(tmp_path, only={"gae"})
    with pytest.raises(GraderError, match="link"):
        grade(tmp_path / "rlhf.py", only={"gae"})
