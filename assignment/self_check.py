"""Self-check: grade your rlhf.py with the visible tests, through the same engine as the real grader.

    python self_check.py              # grades rlhf.py next to this file
    python self_check.py my_copy.py   # or another file (a notebook works too)

It prints the same score table and the same per-test feedback as the grade you get at submission,
and writes report.md / report.html / results.json into self_check_report/. Only the visible tests run
here, on the inputs they show you. When you submit, each visible test also runs on fresh inputs of the same
kind and size that you do not see, and the hidden tests and the end-to-end training tests run too.
"""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))  # the bundled grading engine (autograder/) next to this file

from autograder.grade import GraderError, grade  # noqa: E402
from autograder.report import summary_lines, test_text, write_reports  # noqa: E402


def main(argv: list[str]) -> int:
    submission = Path(argv[0]) if argv else HERE / "rlhf.py"
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
    out = HERE / "self_check_report"
    write_reports(result, out)
    print(f"\nreports: {out / 'report.md'}  {out / 'report.html'}")
    print(result.notice + " See the README for what each part is worth.")
    return 0 if result.tests and all(t.passed for t in result.tests) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
