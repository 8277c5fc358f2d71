"""What students see: only visible outcomes in summaries, hidden inputs and the submission's own error text
withheld until their visibility, and text from the child never breaks a report."""

from __future__ import annotations

import json

from autograder.judge.outcome import Finding, GradeResult, TestResult
from autograder.judge.report import write_reports

SECRET_INPUT = "rewards=tensor([[0.123456789, 9.87654321]])"
SECRET_TEXT = "shape mismatch for tensor([[0.123456789"


def _result(visibility: str, inputs_visibility: str, **finding) -> TestResult:
    return TestResult("gae.matches_reference", "GAE matches", ["gae"], 5, 0, visibility, inputs_visibility,
                      Finding(**finding))


def _grade(*tests: TestResult, output: str = "") -> GradeResult:
    return GradeResult("rlhf.py", list(tests), partial=False, execution_time=1.0, output=output,
                       isolation="no bubblewrap + own uid")


def _files(tmp_path, result: GradeResult) -> dict[str, str]:
    write_reports(result, tmp_path)
    return {p.name: p.read_text() for p in tmp_path.iterdir()}


def test_a_hidden_input_waits_for_its_visibility(tmp_path):
    t = _result("visible", "after_due_date", message="advantages differ", inputs=SECRET_INPUT,
                submission_text=SECRET_TEXT, expected="1.0", got="2.0", hint="the recursion runs forwards")
    files = _files(tmp_path, _grade(t))
    for name in ("report.md", "report.html"):
        assert SECRET_INPUT not in files[name] and SECRET_TEXT not in files[name]
        assert "advantages differ" in files[name] and "recursion runs forwards" in files[name]
    data = json.loads(files["results.json"])
    visible = [e for e in data["tests"] if e["visibility"] == "visible"]
    assert all(SECRET_INPUT not in e["output"] and SECRET_TEXT not in e["output"] for e in visible)
    assert SECRET_INPUT not in data["output"] and SECRET_TEXT not in data["output"]
    later = [e for e in data["tests"] if e["visibility"] == "after_due_date"]
    assert len(later) == 1 and SECRET_INPUT in later[0]["output"] and later[0]["max_score"] == 0
    assert SECRET_INPUT in files["staff.md"] and SECRET_TEXT in files["staff.md"]


def test_the_summary_and_reports_hold_only_visible_outcomes(tmp_path):
    hidden = _result("after_due_date", "after_due_date", message="a secret outcome")
    files = _files(tmp_path, _grade(hidden))
    data = json.loads(files["results.json"])
    assert "a secret outcome" not in data["output"]
    assert "a secret outcome" not in files["report.md"] and "a secret outcome" not in files["report.html"]
    assert "a secret outcome" in files["staff.md"]


def test_printed_output_is_as_visible_as_the_least_visible_input(tmp_path):
    t = _result("visible", "after_due_date", message="wrong")
    data = json.loads(_files(tmp_path, _grade(t, output="I print my inputs: " + SECRET_INPUT))["results.json"])
    printed = [e for e in data["tests"] if e["name"] == "what your code printed"]
    assert printed and printed[0]["visibility"] == "after_due_date"
    assert SECRET_INPUT not in (tmp_path / "report.html").read_text()


def test_isolation_level_is_for_staff_only(tmp_path):
    files = _files(tmp_path, _grade(_result("visible", "visible")))
    assert "bubblewrap" not in files["results.json"] + files["report.md"] + files["report.html"]
    assert "bubblewrap" in files["staff.md"]


def test_surrogates_and_control_characters_never_break_a_report(tmp_path):
    t = _result("visible", "visible", message="compute_gae raised ValueError", submission_text="bad \ud800 \x1b[2J",
                inputs="x \udfff")
    files = _files(tmp_path, _grade(t, output="\ud83d printed \x00"))
    json.loads(files["results.json"])
    assert "\x1b" not in files["report.md"] and "\ud800" not in files["report.md"]


def test_leaderboard_entries_only_when_asked():
    from autograder.judge.results import results_json
    e2e = TestResult("e2e.kl_penalty", "PPO", ["e2e", "gae"], 5, 5, "visible", "after_due_date",
                     Finding(metrics={"gold_gain": 0.4567, "malformed": 0.0}))
    rm = TestResult("e2e.reward_model", "RM", ["e2e", "rm_loss"], 5, 5, "visible", "after_due_date",
                    Finding(metrics={"accuracy": 0.91234}))
    result = _grade(e2e, rm)
    assert "leaderboard" not in results_json(result)
    board = results_json(result, with_leaderboard=True)["leaderboard"]
    assert {(e["name"], e["value"], e["order"]) for e in board} == {
        ("gold gain (your PPO pieces)", 0.4567, "desc"), ("reward model held-out accuracy", 0.9123, "desc")}


def _channels(tmp_path, result: GradeResult) -> tuple[str, str]:
    """(what students see at once: results.json's summary and visible entries, report.md, report.html; the rest)."""
    files = _files(tmp_path, result)
    data = json.loads(files["results.json"])
    now = [data["output"]] + [e["output"] for e in data["tests"] if e["visibility"] == "visible"]
    later = [e["output"] for e in data["tests"] if e["visibility"] != "visible"]
    return "\n".join(now + [files["report.md"], files["report.html"]]), "\n".join(later + [files["staff.md"]])


COMPARED = "expected a float32 tensor of shape (1, 2), got a float32 tensor of shape (1, 2)"


def test_expected_and_got_of_a_hidden_input_wait_with_it_and_their_kind_is_shown(tmp_path):
    """Values computed from a hidden input are as secret as the input: Expected and Got wait with it, the kind
    and shape compared are shown with the outcome."""
    t = _result("visible", "after_due_date", message="advantages differ", inputs=SECRET_INPUT, compared=COMPARED,
                expected="[[0.123456789, 9.87654321]]", got="[[0.123456789, 0.5]]")
    now, later = _channels(tmp_path, _grade(t))
    assert "0.123456789" not in now and "advantages differ" in now and COMPARED in now
    assert "Got:      [[0.123456789, 0.5]]" in later and "Expected: [[0.123456789" in later


def test_a_public_tests_input_expected_and_got_are_shown_at_once(tmp_path):
    t = _result("visible", "visible", message="advantages differ", inputs=SECRET_INPUT, got="[[0.123456789]]",
                submission_text="line 12: bad")
    now, _ = _channels(tmp_path, _grade(t))
    assert SECRET_INPUT in now and "Got:      [[0.123456789]]" in now and "From your code: line 12: bad" in now


def test_a_private_input_of_a_public_test_waits_for_the_default_inputs_visibility(tmp_path):
    """A finding on an input other than the public test's shown one (drawn afresh, or an earlier test's) follows
    grading.yaml's default_inputs_visibility, in every channel."""
    t = TestResult("gae.known_values", "GAE", ["gae"], 4, 0, "visible", "visible",
                   Finding(message="compute_gae exited", submission_text=SECRET_TEXT, inputs=SECRET_INPUT,
                           private_inputs=True), private_inputs_visibility="after_due_date")
    now, later = _channels(tmp_path, _grade(t, output="printed " + SECRET_INPUT))
    assert SECRET_INPUT not in now and SECRET_TEXT not in now and "compute_gae exited" in now
    data = json.loads((tmp_path / "results.json").read_text())
    assert {e["visibility"] for e in data["tests"]} == {"visible", "after_due_date"}
    assert SECRET_INPUT in later and SECRET_TEXT in later
