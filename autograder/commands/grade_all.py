"""`grade-all SUBMISSIONS --out DIR [--workers N] [--force] [--retry-failed] [--only TAGS] [--dask ADDRESS]`.

Writes DIR/<student>/ (the reports of `grade` plus grade.json), DIR/gradebook.csv and
DIR/class_report.html. Restartable: a rerun grades only what is missing or changed.
See docs/class-grading.md.
"""

from __future__ import annotations

import argparse
import signal
import sys
from pathlib import Path

HELP = "grade a whole class (a folder or a Gradescope export zip) into a gradebook and a class report"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("submissions", type=Path,
                        help="a folder with one entry per student, or a Gradescope 'export submissions' zip")
    parser.add_argument("--out", type=Path, required=True, help="output folder (reused by reruns)")
    parser.add_argument("--workers", type=int, default=None, help="local worker processes (default: one per core)")
    parser.add_argument("--force", action="store_true", help="regrade every submission, even unchanged ones")
    parser.add_argument("--retry-failed", action="store_true",
                        help="regrade the submissions that failed to grade (a worker died or ran out of time)")
    parser.add_argument("--only", default="", help="comma-separated first tags to run, e.g. gae,kl or e2e")
    parser.add_argument("--dask", metavar="ADDRESS", default=None,
                        help="grade on an existing Dask distributed cluster, e.g. tcp://scheduler:8786")


def main(args: argparse.Namespace) -> int:
    from autograder.batch.run import CLASS_REPORT, GRADEBOOK, BatchError, grade_all

    if args.workers is not None and args.workers < 1:
        print("grade-all: --workers must be at least 1", file=sys.stderr)
        return 2
    only = [tag.strip() for tag in args.only.split(",") if tag.strip()] or None
    signal.signal(signal.SIGTERM, _interrupt)  # `kill` stops the workers cleanly, like Ctrl-C
    try:
        s = grade_all(args.submissions, args.out, workers=args.workers, force=args.force, only=only, dask=args.dask,
                      retry_failed=args.retry_failed)
    except BatchError as exc:
        print(f"grade-all: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("grade-all: stopped; every finished grade is saved, run the same command to continue",
              file=sys.stderr)
        return 130
    print(f"{s.students} students: {s.up_to_date} up to date, {s.graded} graded, {s.failed} failed to grade "
          f"in {s.seconds:.1f} s")
    if s.other_grader:
        print(f"warning: {s.other_grader} grades came from workers running a different grader version; "
              "they will be regraded by the next run", file=sys.stderr)
    print(f"gradebook: {args.out / GRADEBOOK}  class report: {args.out / CLASS_REPORT}")
    return 0


def _interrupt(signum, frame) -> None:
    raise KeyboardInterrupt
