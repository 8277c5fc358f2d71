"""`release [--out DIR]`: build the student bundle, the Gradescope autograder and the nbgrader course."""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from autograder.commands.common import OUTPUT_FOLDERS, check_out_folder, fail, load_config

HELP = "build DIR/student.zip, DIR/autograder.zip (Gradescope) and DIR/nbgrader/ (nbgrader course)"
EXAMPLES = """examples:
  python -m autograder release                     into out/release/LAB (LAB: grading.yaml's `lab`)
  python -m autograder release --out /tmp/grader    somewhere else (a new or empty folder, or a previous release)

Exit 2: a leak check failed (something secret would have shipped) or --out cannot be written."""
INTERRUPTED = "release stopped; --out may hold a partial release: run the same command again to rebuild it"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--out", type=Path, default=None,
                        help="output folder (default: out/release/LAB in the repository, git-ignored)")
    parser.add_argument("--force", action="store_true",
                        help="write into an --out that holds other files too (they are kept, never deleted)")


def default_out() -> Path:
    """Where a release goes without --out: the repository's git-ignored output folder, one folder per lab."""
    from autograder.lab.paths import ROOT
    return ROOT / OUTPUT_FOLDERS[0] / "release" / load_config().lab


def main(args: argparse.Namespace) -> int:
    from autograder.bundling.guard import LeakError
    from autograder.bundling.pipeline import build_release

    out = check_out_folder(args.out or default_out())
    from autograder.lab import lab_problems
    load_config()
    stale = lab_problems.stale_data_files()
    if stale:  # a bundle would ship (or grade with) data that no longer matches its code
        fail(f"release: {', '.join(stale)} {'is' if len(stale) == 1 else 'are'} stale (not computed from today's "
             "checks, world, reference or settings): run `python -m autograder refresh` first")
    started = time.monotonic()
    try:
        outputs = build_release(out, force=args.force)
    except (LeakError, FileNotFoundError, ValueError) as exc:
        fail(f"release: {exc}")
    for name, path in outputs.items():
        size = path.stat().st_size if path.is_file() else sum(p.stat().st_size for p in path.rglob("*") if p.is_file())
        print(f"{name:<16} {path}  {size / 1024:,.0f} KiB")
    print(f"built in {time.monotonic() - started:.1f} s")
    return 0
