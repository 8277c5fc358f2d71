"""`release [--out DIR]`: build the student bundle, the Gradescope autograder and the nbgrader course."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

HELP = "build DIR/student.zip, DIR/autograder.zip (Gradescope) and DIR/nbgrader/ (nbgrader course)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--out", type=Path, default=None, help="output folder (default: release/out)")
    parser.add_argument("--force", action="store_true",
                        help="write into an --out that holds other files too (they are kept, never deleted)")


def main(args: argparse.Namespace) -> int:
    from autograder.paths import ROOT
    from autograder.release.guard import LeakError
    from autograder.release.pipeline import build_release

    out = args.out or ROOT / "release" / "out"
    started = time.monotonic()
    try:
        outputs = build_release(out, force=args.force)
    except (LeakError, FileNotFoundError, ValueError) as exc:
        print(f"release error: {exc}", file=sys.stderr)
        return 1
    for name, path in outputs.items():
        size = path.stat().st_size if path.is_file() else sum(p.stat().st_size for p in path.rglob("*") if p.is_file())
        print(f"{name:<16} {path}  {size / 1024:,.0f} KiB")
    print(f"built in {time.monotonic() - started:.1f} s")
    return 0
