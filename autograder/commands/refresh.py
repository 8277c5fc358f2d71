"""`refresh [--check]`: rewrite the lab's shipped data files that are stale, in the order they depend on each other.

Each data file the lab ships and computes from its own code (the hidden checks' drawn examples, the reference's
baseline, its recorded trainings) is declared once, by the lab (registry.Lab.data_files), with a fingerprint
of what it depends on. The engine adds one of its own: which bank mistakes fail which e2e tests
(e2e_mistakes.json, autograder/validity/mistake_outcomes.py), whose stale entries `refresh` runs again (a
calibration of those mistakes: minutes each). A stale file only costs time in a grade, or leaves `validate --e2e`
unable to hold a mistake to its e2e tests; `refresh --check` (the tests, CI) makes it an error. The reference's
band for the plots (reference_band.json) comes from `calibrate` over many seeds (docs/calibration.md).
"""

from __future__ import annotations

import argparse
import sys
import time

from autograder.commands.common import FAILURES, add_workers, load_config

HELP = "rewrite the lab's shipped data files that are stale (examples, baseline, replays); --check: only list them"
EXAMPLES = """examples:
  python -m autograder refresh            rewrite every stale data file, in order (a few minutes when all are)
  python -m autograder refresh --check    exit 1 listing the stale ones, writing nothing

Exit 1 with --check: a data file does not match the code, world or settings it is computed from."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--check", action="store_true", help="write nothing; exit 1 when a data file is stale")
    add_workers(parser, "calibration runs of stale bank mistakes")


def main(args: argparse.Namespace) -> int:
    import torch

    from autograder.lab import registry
    from autograder.lab.paths import LAB
    torch.set_num_threads(1)
    load_config()  # the lab folder complete and consistent before anything is computed
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
    if not _mistake_outcomes(args, stale):
        return FAILURES
    if stale:
        print(f"stale: {', '.join(stale)}: run `python -m autograder refresh`", file=sys.stderr)
        return FAILURES
    return 0


def _mistake_outcomes(args: argparse.Namespace, stale: list[str]) -> bool:
    """Check (or, without --check, compute) the mistakes' e2e outcomes; False when computing them failed."""
    from autograder.lab.paths import LAB
    from autograder.validity import mistake_outcomes
    if not mistake_outcomes.tracked():  # no e2e test trains with a bank mistake's part
        return True
    name = mistake_outcomes.DATA_FILE.relative_to(LAB)
    missing = mistake_outcomes.stale()
    if not missing:
        print(f"{name}: current")
    elif args.check:
        stale.append(str(name))
        shown = ", ".join(missing[:5]) + (f" and {len(missing) - 5} more" if len(missing) > 5 else "")
        print(f"{name}: STALE for {len(missing)} bank mistake(s): {shown}")
    else:
        started = time.monotonic()
        print(f"{name}: running {len(missing)} bank mistake(s) through the e2e tests of their part, "
              f"{mistake_outcomes.SEEDS} seeds each, on {args.workers} workers", flush=True)

        def progress(done: int, total: int, runs: list) -> None:
            what = ", ".join(f"{r.test}[{r.index}]/{r.entry}{' fails' if r.message else ''}" for r in runs)
            print(f"  {done}/{total} {time.monotonic() - started:5.0f} s  {what}", flush=True)
        mistake_outcomes.refresh(args.workers, progress)
        if mistake_outcomes.stale():
            print(f"{name}: written, yet still stale", file=sys.stderr)
            return False
        print(f"{name}: rewritten in {time.monotonic() - started:.0f} s")
    return True
