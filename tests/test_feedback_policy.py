"""grading.yaml's feedback_policy against oracle use (issue 22), with Gradescope metadata files in their documented
format (tests/fixtures/gradescope/): at most N detailed feedbacks on hidden tests per rolling window; beyond, the
score and the visible tests only; the score always counts; off by default."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from autograder.judge import feedback_policy
from autograder.judge.outcome import Finding, GradeResult, TestResult
from autograder.judge.report import write_reports
from autograder.judge.results import results_json
from autograder.lab import config
from autograder.lab.config import FeedbackPolicy
from autograder.lab.paths import ROOT

FIXTURES = Path(__file__).with_name("fixtures") / "gradescope"
POLICY = FeedbackPolicy(max_detailed=3, window_hours=24)
MST = timezone(timedelta(hours=-7))


def metadata(name: str) -> dict:
    return json.loads((FIXTURES / name).read_text())


@pytest.mark.parametrize("name, detailed, used", [
    ("first_submission.json", True, 0),
    ("three_in_window.json", False, 3),    # the fourth, 25 h old, is outside the window
    ("one_was_limited.json", True, 2),     # a limited submission does not use up the window
    ("window_freed.json", True, 2),        # 3 hours later the oldest (24.5 h) has left it
])
def test_the_window_counts_earlier_detailed_feedbacks(name, detailed, used):
    decision = feedback_policy.decide(POLICY, metadata(name))
    assert (decision.detailed, decision.used) == (detailed, used)


def test_a_limited_submission_is_told_when_the_window_frees():
    decision = feedback_policy.decide(POLICY, metadata("three_in_window.json"))
    assert decision.frees_at == datetime(2026, 12, 2, 12, 30, 15, 500000, tzinfo=MST)  # oldest in the window + 24 h
    assert "3 detailed feedbacks on hidden tests in the last 24 hours" in decision.notice
    assert "Its score counts as usual" in decision.notice and "2026-12-02 12:30" in decision.notice
    assert feedback_policy.decide(FeedbackPolicy(1, 2.5), metadata("three_in_window.json")).frees_at == \
        datetime(2026, 12, 2, 10, 40, 42, 987654, tzinfo=MST)


def test_times_are_read_as_gradescope_writes_them():
    assert feedback_policy.parse_time("2018-07-01T14:22:32.365935-07:00", "k") == \
        datetime(2018, 7, 1, 14, 22, 32, 365935, tzinfo=timezone(timedelta(hours=-7)))
    assert feedback_policy.parse_time("2018-07-01T21:22:32.3Z", "k").utcoffset() == timedelta(0)
    with pytest.raises(feedback_policy.MetadataError, match="created_at"):
        feedback_policy.decide(POLICY, metadata("not_metadata.json"))


# ---------------------------------------------------------------- the gate
HIDDEN_HINT = "the recursion must run backwards in time (looks like: forward_recursion)"


def graded() -> GradeResult:
    public = TestResult("gae.known_values", "GAE on known values", ["gae"], 4, 0, "visible", "visible",
                        Finding(message="compute_gae differs on the shown input", inputs="rewards=[[1.0]]",
                                hint="a public hint"))
    hidden = TestResult("gae.matches_reference", "GAE matches the reference", ["gae"], 6, 0, "visible",
                        "after_due_date", Finding(message="advantages differ from the reference", inputs="x=SECRET",
                                                  hint=HIDDEN_HINT, details="measured 0.137"))
    e2e = TestResult("e2e.kl_penalty", "PPO raises gold", ["e2e", "gae"], 5, 5, "visible", "after_due_date",
                     Finding(details="gold gain 0.461", plots=[("gold per iteration", b"PNGDATA")],
                             metrics={"gold_gain": 0.461}))
    return GradeResult("rlhf.py", [public, hidden, e2e], partial=False, execution_time=3.0)


def limited() -> GradeResult:
    result = graded()
    assert feedback_policy.apply(result, POLICY, FIXTURES / "three_in_window.json") == ""
    return result


def test_limited_results_json_shows_scores_and_visible_tests_only():
    data = results_json(limited(), with_leaderboard=True)
    full = results_json(graded(), with_leaderboard=True)
    assert data["score"] == full["score"] == 5, "the score always counts"
    assert data["extra_data"] == {"autograder_feedback": "limited"} and "extra_data" not in full
    assert data["output"].startswith("You already had 3 detailed feedbacks")
    now = [e for e in data["tests"] if e["visibility"] == "visible"]
    text = json.dumps(now)
    assert "compute_gae differs on the shown input" in text and "a public hint" in text, "visible tests in full"
    for secret in ("advantages differ", HIDDEN_HINT, "measured 0.137", "gold gain 0.461", "SECRET"):
        assert secret not in text and secret not in data["output"], secret
    assert data["leaderboard"] == [] and full["leaderboard"]
    hidden = next(e for e in now if e["name"].startswith("gae.matches_reference"))
    assert (hidden["score"], hidden["max_score"], hidden["status"]) == (0, 6, "failed")
    assert "details withheld" in hidden["output"]
    later = [e for e in data["tests"] if e["visibility"] == "after_due_date"]
    assert any(HIDDEN_HINT in e["output"] and "SECRET" in e["output"] for e in later), "shown after the due date"


def test_limited_reports_hold_no_hidden_detail_and_staff_see_all(tmp_path):
    write_reports(limited(), tmp_path)
    for name in ("report.md", "report.html"):
        text = (tmp_path / name).read_text()
        assert "compute_gae differs on the shown input" in text and "You already had 3" in text, name
        for secret in ("advantages differ", HIDDEN_HINT, "measured 0.137", "gold gain 0.461", "UE5HREFUQQ"):
            assert secret not in text, (name, secret)  # UE5HREFUQQ: the plot's base64
    staff = (tmp_path / "staff.md").read_text()
    assert "advantages differ" in staff and HIDDEN_HINT in staff and "gold gain 0.461" in staff


def test_a_detailed_submission_under_the_policy_is_marked_and_counted():
    result = graded()
    feedback_policy.apply(result, POLICY, FIXTURES / "one_was_limited.json")
    data = results_json(result)
    assert data["extra_data"] == {"autograder_feedback": "detailed"}
    assert data["output"].startswith("Detailed feedback on hidden tests: 3 of 3 per 24 hours")
    assert "advantages differ" in json.dumps(data["tests"])


def test_the_policy_is_off_by_default_and_unreadable_metadata_gives_detailed_feedback():
    assert config.load().feedback_policy.max_detailed == 0
    result = graded()
    assert feedback_policy.apply(result, config.load().feedback_policy, FIXTURES / "three_in_window.json") == ""
    assert results_json(result) == results_json(graded())
    problem = feedback_policy.apply(result, POLICY, FIXTURES / "not_metadata.json")
    assert problem.startswith("feedback_policy not applied (detailed feedback given)") and not result.feedback


@pytest.mark.parametrize("edit, message", [
    ("feedback_policy: {max_detailed: -1}", r"grading.yaml:\d+: feedback_policy.max_detailed: must be 0"),
    ("feedback_policy: {max_detailed: 3, window_hours: 0}", r"grading.yaml:\d+: feedback_policy.window_hours: must"),
    ("feedback_policy: {max_detailed: 3, window: 24}", r"grading.yaml:\d+: feedback_policy.window: unknown key"),
])
def test_bad_policies_are_refused_with_file_and_line(tmp_path, edit, message):
    bad = tmp_path / "grading.yaml"
    bad.write_text((ROOT / "grading.yaml").read_text() + "\n" + edit + "\n")
    with pytest.raises(config.ConfigError, match=message):
        config.load(bad)
    good = tmp_path / "good.yaml"
    good.write_text((ROOT / "grading.yaml").read_text() + "\nfeedback_policy: {max_detailed: 3, window_hours: 12}\n")
    assert config.load(good).feedback_policy == FeedbackPolicy(3, 12.0)

