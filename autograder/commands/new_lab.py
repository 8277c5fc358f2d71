"""`new-lab DIR [--from FILE]`: write a working lab folder from a reference file (or from a two-function template)."""

from __future__ import annotations

import argparse
from pathlib import Path

from autograder.commands.common import CommandError

HELP = "write a new lab folder from a reference file: grading.yaml, starter, checks, hooks, recipe"
EXAMPLES = """examples:
  python -m autograder new-lab labs/returns --from returns.py   a lab grading the functions of returns.py
  python -m autograder new-lab labs/demo                        a lab from the two-function template
  python -m autograder --lab labs/returns grade labs/returns/solutions/returns.py --out out/ref   full marks"""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("folder", type=Path, help="the new lab's folder (absent or empty)")
    parser.add_argument("--from", dest="reference", type=Path, metavar="FILE",
                        help="the reference solution: a Python file of typed, documented functions "
                             "(default: a two-function template)")


def main(args: argparse.Namespace) -> int:
    from autograder.lab.new_lab import TEMPLATE, NewLabError, write_lab

    if args.reference is not None and not args.reference.is_file():
        raise CommandError(f"new-lab: {args.reference} is not a file")
    source = args.reference.read_text() if args.reference else TEMPLATE
    name = args.reference.name if args.reference else "lab.py"
    try:
        written = write_lab(args.folder, source, name)
    except NewLabError as exc:
        raise CommandError(f"new-lab: {exc}") from None
    print(f"wrote {len(written)} files in {args.folder}:")
    for path in written:
        print(f"  {path}")
    print(f"next: python -m autograder --lab {args.folder} grade {args.folder}/solutions/{name} --out out/reference\n"
          f"      python -m autograder --lab {args.folder} validate")
    return 0
