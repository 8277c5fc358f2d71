"""`grade PATH --out DIR [--only TAGS]`: grade one submission into results.json, report.md, report.html."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

HELP = "grade one submission (rlhf.py, a folder holding it, or a notebook)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("path", type=Path, help="rlhf.py, a folder that contains it, or an .ipynb")
    parser.add_argument("--out", type=Path, required=True, help="folder for results.json and the reports")
    parser.add_argument("--only", default="", help="comma-separated first tags to run, e.g. gae,kl or e2e")
    parser.add_argument("--quiet", action="store_true", help="do not print the score table")


def main(args: argparse.Namespace) -> int:
    from autograder.config import ConfigError
    from autograder.grade import GraderError, grade
    from autograder.report import summary_lines, write_reports

    only = {tag.strip() for tag in args.only.split(",") if tag.strip()} or None
    try:
        result = grade(args.path, only=only)
    except (GraderError, ConfigError) as exc:
        print(f"grader error: {exc}", file=sys.stderr)
        return 2
    write_reports(result, args.out)
    if not args.quiet:
        print(f"{result.submission}")
        print("\n".join(summary_lines(result)))
        print(f"sandbox: {result.isolation}")
        print(f"reports: {args.out / 'report.md'}  {args.out / 'report.html'}  {args.out / 'results.json'}")
    return 0
