"""`grade-all SUBMISSIONS --out DIR`: grade a class into DIR/<student>/, gradebook.csv, canvas.csv, class_report.html.

Restartable: a rerun grades only what is missing or changed. See docs/class-grading.md.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from autograder.commands.common import (
    FAILURES,
    add_workers,
    check_input,
    check_only,
    check_out_folder,
    comma_list,
    fail,
    load_config,
)

HELP = "grade a whole class (a folder or a Gradescope export zip) into a gradebook and a class report"
EXAMPLES = """examples:
  python -m autograder grade-all submissions/ --out grades/               a folder with one entry per student
  python -m autograder grade-all export.zip --out grades/ --workers 4     a Gradescope "Export Submissions" zip
  python -m autograder grade-all submissions/ --out grades/ --only gae,kl a quick partial regrade
  python -m autograder grade-all course/submitted --out grades/ --nbgrader-db course/gradebook.db
  python -m autograder grade-all export.zip --out grades/ --dask tcp://scheduler:8786

Run the same command again after a stop: finished grades are kept. DIR belongs to one class: another
class's grades, or files grade-all did not write, are refused unless --force.
Exit 1: some submissions failed to grade (the grader's failure: see the gradebook's detail column, then
--retry-failed). A student's own failure (not importable, empty...) is a grade: exit 0."""
INTERRUPTED = "grade-all stopped; every finished grade is saved: run the same command to continue"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("submissions", type=Path,
                        help="a folder with one entry per student, or a Gradescope 'export submissions' zip")
    parser.add_argument("--out", type=Path, required=True, metavar="DIR", help="output folder (reused by reruns)")
    add_workers(parser, "local grading processes")
    parser.add_argument("--force", action="store_true",
                        help="grade into an --out that holds another class's grades or other files (grade-all "
                             "removes only what it wrote there), and regrade every submission")
    parser.add_argument("--retry-failed", action="store_true",
                        help="regrade the submissions that failed to grade (a worker died or ran out of time)")
    parser.add_argument("--only", type=comma_list, default=[], metavar="PARTS",
                        help="comma-separated parts to grade (e.g. gae,kl) or e2e; default: everything")
    parser.add_argument("--dask", metavar="ADDRESS", default=None,
                        help="grade on an existing Dask distributed cluster, e.g. tcp://scheduler:8786")
    parser.add_argument("--nbgrader-db", type=Path, default=None, metavar="GRADEBOOK",
                        help="also write the full grades into this nbgrader gradebook.db (a full grade only)")
    parser.add_argument("--nbgrader-assignment", default="lab12", metavar="NAME",
                        help="the nbgrader assignment the grades belong to (default: lab12)")


def main(args: argparse.Namespace) -> int:
    from autograder.batch.gradebook import STATUS
    from autograder.batch.run import CANVAS, CLASS_REPORT, GRADEBOOK, BatchError, grade_all

    check_input(args.submissions, "submissions", ("folder", "zip"))
    only = check_only(args.only, list(load_config().parts))
    nbgrader = _nbgrader(args, only)
    check_out_folder(args.out)
    try:
        s = grade_all(args.submissions, args.out, workers=args.workers, force=args.force,
                      only=sorted(only) if only else None, dask=args.dask, retry_failed=args.retry_failed,
                      nbgrader=nbgrader)
    except BatchError as exc:
        fail(str(exc))
    counts = ", ".join(f"{n} {STATUS[status]}" for status, n in sorted(s.statuses.items()))
    print(f"{s.students} students ({counts}): {s.up_to_date} up to date, {s.graded} graded now, "
          f"{s.failed} failed to grade, in {s.seconds:.1f} s")
    if s.other_grader:
        print(f"warning: {s.other_grader} grades came from workers running a different grader version; "
              "they will be regraded by the next run")
    print(f"gradebook: {args.out / GRADEBOOK}  canvas: {args.out / CANVAS}  class report: {args.out / CLASS_REPORT}")
    return FAILURES if s.statuses.get("failed") else 0


def _nbgrader(args: argparse.Namespace, only: set[str] | None) -> tuple[Path, str] | None:
    """(gradebook.db, assignment) when the grades go into nbgrader too; checked before any grading."""
    if args.nbgrader_db is None:
        return None
    check_input(args.nbgrader_db, "nbgrader gradebook", ("file",))
    if only:
        fail("--nbgrader-db takes full grades: drop --only")
    from autograder.batch.nbgrader_gradebook import NbgraderError, check_assignment
    try:
        check_assignment(args.nbgrader_db, args.nbgrader_assignment)
    except NbgraderError as exc:
        fail(str(exc))
    return args.nbgrader_db, args.nbgrader_assignment
