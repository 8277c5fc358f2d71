"""`grade PATH --out DIR [--only PARTS]`: grade one submission into results.json, report.md, report.html."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from autograder.commands.common import (
    check_input,
    check_lab,
    check_only,
    check_out_folder,
    comma_list,
    fail,
    interrupts_after,
    load_config,
)

if TYPE_CHECKING:
    from autograder.judge.discovery import Submission

HELP = "grade one submission (its file, a folder holding it, or a notebook)"
EXAMPLES = """examples:
  python -m autograder grade upload/lab.py --out report/       the full grade (seconds; ~30 s if its e2e runs train)
  python -m autograder grade upload/ --out report/ --only gae  a folder holding it; one part only
  python -m autograder grade lab.ipynb --out report/ --only rm_loss,e2e --quiet
  python -m autograder grade lab.py --out report/ --self-check  the visible checks only (no reference needed)
  python -m autograder grade lab.py --out report/ --metadata submission_metadata.json   grading.yaml's feedback_policy

A grade that finds failing tests is still a finished grade: exit 0 (Gradescope's run_autograder
relies on it). Exit 2 means nothing was graded: the reason is on stderr."""
INTERRUPTED = "grade stopped; its sandboxed child was stopped and no report was written"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("path", type=Path, help="the submission file, a folder that contains it, or an .ipynb")
    parser.add_argument("--out", type=Path, required=True, metavar="DIR",
                        help="folder for results.json, report.md and report.html (created if needed)")
    parser.add_argument("--only", type=comma_list, default=[], metavar="PARTS",
                        help="comma-separated parts to grade (e.g. gae,kl) or e2e; default: everything")
    parser.add_argument("--self-check", action="store_true",
                        help="only the visible checks, which need no reference (what students run; no e2e tests)")
    parser.add_argument("--quiet", action="store_true", help="do not print the score table")
    parser.add_argument("--metadata", type=Path, default=None, metavar="FILE",
                        help="Gradescope's submission_metadata.json: applies grading.yaml's feedback_policy "
                             "(run_autograder passes it); like --out, proved unreadable by the submission")
    parser.add_argument("--no-plots", action="store_true",
                        help="draw no e2e plots in report.html: where no one opens it (Gradescope shows "
                             "results.json only; run_autograder passes it), they cost ~1 s of CPU")


def main(args: argparse.Namespace) -> int:
    check_input(args.path, "submission")
    cfg = load_config(lab=False)
    only = check_only(args.only, list(cfg.parts), list(cfg.tests))
    check_out_folder(args.out)
    if args.metadata is not None:
        check_input(args.metadata, "--metadata file", kinds=("file",))
    mode: Literal["full", "self_check"] = "self_check" if args.self_check else "full"  # judge/grade.py's Mode
    from autograder.judge import early
    from autograder.sandbox import sandbox
    found = early.start_for(args.path, cfg, mode)  # the children's imports overlap the judge's (torch: check_lab)
    try:
        return _graded(args, cfg, only, mode, found)
    finally:
        sandbox.discard_early()  # a lab problem stopped the command before the grade: its children die too


def _graded(args: argparse.Namespace, cfg, only: set[str] | None, mode: Literal["full", "self_check"],
            found: Submission | None = None) -> int:
    """The grade of `found` (the submission early.start_for found at args.path), else of args.path."""
    with interrupts_after():  # torch's import: a Ctrl-C meanwhile must not be lost in it
        check_lab(cfg, grading=True)
        from autograder.judge.grade import GraderError, grade
        from autograder.judge.report import summary_lines, write_reports
        from autograder.judge.results import write_results

    def progress(so_far) -> None:  # results.json after each test: a platform's timeout keeps the tests already run
        try:
            args.out.mkdir(mode=0o700, parents=True, exist_ok=True)  # made mid-grade: the child's uid cannot read it
            write_results(so_far, args.out / "results.json", cfg.leaderboard)
        except OSError:
            pass  # the final write reports the problem
    try:
        result = grade(found or args.path, only=only, cfg=cfg, mode=mode,
                       secrets=[args.out, *([args.metadata] if args.metadata is not None else [])],
                       progress=progress, plots=not args.no_plots)
    except GraderError as exc:
        fail(str(exc))
    if args.metadata is not None:
        from autograder.judge import feedback_policy
        problem = feedback_policy.apply(result, cfg.feedback_policy, args.metadata)
        if problem:
            print(f"warning: {problem}", file=sys.stderr)
    try:
        write_reports(result, args.out, with_leaderboard=cfg.leaderboard)
    except OSError as exc:
        fail(f"the reports could not be written to {args.out}: {exc}")
    if not args.quiet:
        print(f"{result.submission}")
        print("\n".join(summary_lines(result)))
        if result.notice:
            print(result.notice)
        print(f"sandbox: {result.isolation}")
        print(f"reports: {args.out / 'report.html'}  {args.out / 'report.md'}  {args.out / 'results.json'}  "
              f"(staff: {args.out / 'staff.md'})")
    return 0
