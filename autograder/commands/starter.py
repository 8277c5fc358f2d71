"""`starter [--check]`: regenerate the starter in assignment/ from the reference in solutions/ (or check it)."""

from __future__ import annotations

import argparse
import sys

from autograder.commands.common import FAILURES, check_input

HELP = "generate the student starter from the reference (--check: fail if the committed one differs)"
EXAMPLES = """examples:
  python -m autograder starter           rewrite the starter from the reference
  python -m autograder starter --check   exit 1 if the starter is out of date (CI)"""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--check", action="store_true", help="only compare; exit 1 when out of date")


def main(args: argparse.Namespace) -> int:
    from autograder.lab.paths import REFERENCE, STARTER
    from autograder.lab.starter import strip_solutions

    fresh = strip_solutions(check_input(REFERENCE, "reference", ("file",)).read_text())
    if args.check:
        if not STARTER.exists() or STARTER.read_text() != fresh:
            print(f"{STARTER} is out of date: run `python -m autograder starter`", file=sys.stderr)
            return FAILURES
        print(f"{STARTER} is in sync with {REFERENCE}")
        return 0
    STARTER.write_text(fresh)
    print(f"wrote {STARTER}")
    return 0
