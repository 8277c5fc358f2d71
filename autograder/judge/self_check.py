"""The self-check of a student bundle (its `self_check.py` runs `main`): the visible tests, through the same engine
as the real grade, with the same feedback and reports.

    python self_check.py              # grades the lab's submission file (grading.yaml `submission`) next to it
    python self_check.py my_copy.py   # or another file (a notebook works too)

Only the visible tests run, on the inputs they show; at submission each also runs on fresh inputs of the same kind
and size, and the hidden and end-to-end tests run too. Reports go to self_check_report/ beside the bundle's files.
"""

from __future__ import annotations

import sys
from pathlib import Path

from autograder.judge.grade import GraderError, grade
from autograder.judge.report import summary_lines, test_text, write_reports
from autograder.lab import config
from autograder.lab.paths import LAB

REPORTS = "self_check_report"


def main(argv: list[str]) -> int:
    """Grade `argv[0]` (default: the submission file beside the bundle's engine); 0 when every test passed."""
    submission = Path(argv[0]) if argv else LAB / config.current().submission
    try:
        result = grade(submission, mode="self_check")
    except GraderError as exc:
        print(f"self-check error: {exc}", file=sys.stderr)
        return 2
    for test in result.tests:
        print(f"[{'PASS' if test.passed else 'FAIL'}] {test.id} ({test.score:g}/{test.max_score:g}): {test.title}")
        if not test.passed:
            print("    " + test_text(test).replace("\n", "\n    "))
    print()
    print("\n".join(summary_lines(result)))
    out = LAB / REPORTS
    write_reports(result, out)
    print(f"\nreports: {out / 'report.md'}  {out / 'report.html'}")
    print(result.notice + " See the README for what each part is worth.")
    return 0 if result.tests and all(t.passed for t in result.tests) else 1
