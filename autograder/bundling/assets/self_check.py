"""Self-check: grade your code with the visible tests, through the same engine as the real grader.

    python self_check.py              # grades the file you edit (README.md names it), next to this one
    python self_check.py my_copy.py   # or another file (a notebook works too)

It prints the same score table and the same per-test feedback as the grade you get at submission,
and writes report.md / report.html / results.json into self_check_report/. Only the visible tests run
here, on the inputs they show you. When you submit, each visible test also runs on fresh inputs of the same
kind and size that you do not see, and the hidden tests and the end-to-end training tests run too.
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # the bundled grading engine (autograder/) next to this file

from autograder.judge.self_check import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
