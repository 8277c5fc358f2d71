"""A hint is shown once per report, listing the tests it explains; each of them refers to it (issue 22). results.json
keeps each test self-contained: Gradescope shows its tests one by one, each at its own visibility."""

from __future__ import annotations

import json

from autograder.judge.outcome import Finding, GradeResult, TestResult, hint_groups
from autograder.judge.report import write_reports

FORWARD = "the recursion must run backwards in time (t = T-1 down to 0): A_t needs A_{t+1} (looks like: forward)"
MASK = "whether V_{t+1} counts depends on mask[:, t+1], not on mask[:, t] (looks like: mask_off_by_one)"
FAILED_BY_FORWARD = ("gae.known_values", "gae.matches_reference", "gae.shapes", "gae.ragged", "gae.lam_zero",
                     "gae.gamma_one")


def _test(test_id: str, hint: str, visibility: str = "visible", passed: bool = False) -> TestResult:
    finding = Finding() if passed else Finding(message=f"{test_id} differs from the reference", hint=hint)
    return TestResult(test_id, f"title of {test_id}", [test_id.split(".")[0]], 4, 4 if passed else 0, visibility,
                      "visible", finding)


def _grade() -> GradeResult:
    tests = [_test(t, FORWARD) for t in FAILED_BY_FORWARD]
    tests += [_test("gae.mask_case", MASK), _test("gae.hidden_case", FORWARD, visibility="after_published"),
              _test("kl.known_values", "", passed=True)]
    return GradeResult("rlhf.py", tests, partial=False, execution_time=1.0)


def test_hints_are_grouped_in_order_with_the_tests_they_explain():
    groups = hint_groups(_grade().tests)
    assert groups == [(FORWARD, [*FAILED_BY_FORWARD, "gae.hidden_case"]), (MASK, ["gae.mask_case"])]
    assert hint_groups(_grade().shown(student=True))[0][1] == list(FAILED_BY_FORWARD), "shown tests only"


def test_each_report_shows_a_hint_once_and_each_test_refers_to_it(tmp_path):
    write_reports(_grade(), tmp_path)
    for name in ("report.md", "report.html", "staff.md"):
        text = (tmp_path / name).read_text()
        assert text.count("the recursion must run backwards in time") == 1, name
        assert text.count("whether V_{t+1} counts depends") == 1, name
        assert text.count("Hint: hint 1 under Hints above") == len(FAILED_BY_FORWARD) + (name == "staff.md"), name
        assert text.count("Hint: hint 2 under Hints above") == 1, name
        explained = ", ".join(FAILED_BY_FORWARD) if name == "report.md" else FAILED_BY_FORWARD[-1]
        assert explained in text, name
    md = (tmp_path / "report.md").read_text()
    assert "It explains these 6 tests: " + ", ".join(FAILED_BY_FORWARD) + "." in md
    assert "It explains this test: gae.mask_case." in md
    assert "gae.hidden_case" not in md, "a hidden test is not listed before its release"
    html = (tmp_path / "report.html").read_text()
    assert all(f'<a href="#{t}">{t}</a>' in html for t in FAILED_BY_FORWARD)


def test_results_json_keeps_each_tests_hint_in_full():
    from autograder.judge.results import results_json
    entries = {e["name"].split(":")[0]: e for e in results_json(_grade())["tests"]}
    for test_id in (*FAILED_BY_FORWARD, "gae.hidden_case"):
        assert f"Hint: {FORWARD}" in entries[test_id]["output"]
        assert "under Hints above" not in entries[test_id]["output"]
    assert json.dumps(results_json(_grade())).count(FORWARD.replace("\\", "\\\\")) == len(FAILED_BY_FORWARD) + 1
