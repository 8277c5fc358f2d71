"""`refresh [--check]`: rewrite the lab's shipped data files that are stale, in the order they depend on each other.

Each data file the lab ships and computes from its own code (the hidden checks' drawn examples, the reference's
baseline, its recorded trainings) is declared once, by the lab (registry.Lab.data_files), with a fingerprint
of what it depends on. A stale file only costs time in a grade; `refresh --check` (the tests, CI) makes it an
error. The calibration's files (reference_band.json, e2e_mistakes.json) come from `calibrate`, which runs the
reference over many seeds (docs/calibration.md).
"""

from __future__ import annotations

import argparse
import sys
import time

from autograder.commands.common import FAILURES

HELP = "rewrite the lab's shipped data files that are stale (examples, baseline, replays); --check: only list them"
EXAMPLES = """examples:
  python -m autograder refresh            rewrite every stale data file, in order (a few minutes when all are)
  python -m autograder refresh --check    exit 1 listing the stale ones, writing nothing

Exit 1 with --check: a data file does not match the code, world or settings it is computed from."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--check", action="store_true", help="write nothing; exit 1 when a data file is stale")


def main(args: argparse.Namespace) -> int:
    import torch

    from autograder import registry
    from autograder.paths import LAB
    torch.set_num_threads(1)
    stale = []
    for data in registry.lab().data_files:
        name = data.path.relative_to(LAB) if data.path.is_relative_to(LAB) else data.path
        if data.is_current():
            print(f"{name}: current")
            continue
        if args.check:
            stale.append(str(name))
            print(f"{name}: STALE")
            continue
        started = time.monotonic()
        data.write()
        if not data.is_current():
            print(f"{name}: written, yet still not current (its fingerprint depends on something that changed "
                  "while it was computed)", file=sys.stderr)
            return FAILURES
        print(f"{name}: rewritten in {time.monotonic() - started:.0f} s")
    if stale:
        print(f"stale: {', '.join(stale)}: run `python -m autograder refresh`", file=sys.stderr)
        return FAILURES
    return 0
