"""`grade-all SUBMISSIONS --out DIR`: grade a class into DIR/<student>/, gradebook.csv, canvas.csv, class_report.html.

Restartable: a rerun grades only what is missing or changed. See docs/class-grading.md.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from autograder.commands.common import (
    FAILURES,
    add_workers,
    check_child_can_work,
    check_input,
    check_only,
    check_out_folder,
    comma_list,
    fail,
    load_config,
)
from autograder.lab import config

HELP = "grade a whole class (a folder or a Gradescope export zip) into a gradebook and a class report"
EXAMPLES = """examples:
  python -m autograder grade-all submissions/ --out grades/               a folder with one entry per student
  python -m autograder grade-all export.zip --out grades/ --workers 4     a Gradescope "Export Submissions" zip
  python -m autograder grade-all submissions/ --out grades/ --only gae,kl a quick partial regrade
  python -m autograder grade-all course/submitted --out grades/ --nbgrader-db course/gradebook.db
  python -m autograder grade-all export.zip --out grades/ --dask tcp://scheduler:8786
  python -m autograder grade-all export.zip --out grades/ --roster roster.csv   every enrolled student gets a row
  python -m autograder grade-all submissions/ --out grades/ --student ada bob   regrade these two only
  python -m autograder grade-all submissions/ --out grades/ --similarity        the most similar pairs (copydetect)

Manual grade overrides: write DIR/overrides.csv (student,target,points,reason); every run applies it.

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
    parser.add_argument("--nbgrader-assignment", default=None, metavar="NAME",
                        help="the nbgrader assignment the grades belong to (default: grading.yaml `lab`)")
    parser.add_argument("--roster", type=Path, default=None, metavar="FILE",
                        help="the enrolled students: a CSV with a student column, a Gradescope roster export, or "
                             "an nbgrader gradebook.db; each gets a row ('no submission' when nothing came in)")
    parser.add_argument("--student", nargs="+", action="extend", default=[], metavar="NAME",
                        help="regrade only these students (their gradebook key); everyone else is kept as is")
    parser.add_argument("--similarity", action="store_true",
                        help="find the most similar pairs of submissions (needs the optional package copydetect: "
                             'pip install -e ".[similarity]")')


def main(args: argparse.Namespace) -> int:
    from autograder.batch.run import CANVAS, CLASS_REPORT, GRADEBOOK, BatchError, grade_all

    check_input(args.submissions, "submissions", ("folder", "zip"))
    only = check_only(args.only, list(load_config(lab=False).parts))  # the lab is checked before grading (batch.run)
    nbgrader = _nbgrader(args, only)
    if args.roster is not None:
        check_input(args.roster, "roster", ("file",))
    check_out_folder(args.out)
    if args.dask is None:  # (Dask workers check their own machine: each grade's preflight)
        check_child_can_work()
    try:
        s = grade_all(args.submissions, args.out, workers=args.workers, force=args.force,
                      only=sorted(only) if only else None, dask=args.dask, retry_failed=args.retry_failed,
                      nbgrader=nbgrader, roster=args.roster, students=args.student or None,
                      similarity=args.similarity)
    except BatchError as exc:
        fail(str(exc))
    print(summary_line(s))
    if not s.students:
        print(f"warning: no student: {args.submissions} holds no submission (one folder or file per student)"
              + (" and the roster lists nobody" if s.enrolled == 0 else "") + ": is it the right folder?",
              file=sys.stderr)
    if s.not_on_roster:
        shown = ", ".join(s.not_on_roster[:10]) + (", ..." if len(s.not_on_roster) > 10 else "")
        print(f"warning: {_count(len(s.not_on_roster), 'submission')} not on the roster: {shown}", file=sys.stderr)
    if s.other_grader:
        print(f"warning: {s.other_grader} grades came from workers running a different grader version; "
              "they will be regraded by the next run")
    print(f"gradebook: {args.out / GRADEBOOK}  canvas: {args.out / CANVAS}  class report: {args.out / CLASS_REPORT}")
    return FAILURES if s.statuses.get("failed") else 0


def summary_line(s) -> str:
    """'3 students (2 graded, 1 no submission): ...', counted right (1 student) and with the roster's numbers."""
    from autograder.batch.gradebook import STATUS
    counts = ", ".join(f"{s.statuses[status]} {label}" for status, label in STATUS.items() if s.statuses.get(status))
    line = f"{_count(s.students, 'student')}" + (f" ({counts})" if counts else "")
    if s.enrolled is not None:
        line += f", {s.enrolled} on the roster"
    line += (f": {s.up_to_date} up to date, {s.graded} graded now, {s.failed} failed to grade"
             + (f", {s.kept} kept as they were (--student)" if s.kept else "")
             + (f", {_count(s.overridden, 'student')} with manual overrides" if s.overridden else "")
             + f", in {s.seconds:.1f} s")
    return line


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" + ("" if n == 1 else "s")


def _nbgrader(args: argparse.Namespace, only: set[str] | None) -> tuple[Path, str] | None:
    """(gradebook.db, assignment) when the grades go into nbgrader too; checked before any grading."""
    if args.nbgrader_db is None:
        return None
    check_input(args.nbgrader_db, "nbgrader gradebook", ("file",))
    if only:
        fail("--nbgrader-db takes full grades: drop --only")
    from autograder.batch.nbgrader_gradebook import NbgraderError, check_assignment
    assignment = args.nbgrader_assignment or config.current().lab
    try:
        check_assignment(args.nbgrader_db, assignment)
    except NbgraderError as exc:
        fail(str(exc))
    return args.nbgrader_db, assignment
