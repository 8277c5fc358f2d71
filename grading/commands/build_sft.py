"""`build-sft`: rebuild the lab's SFT checkpoint (assignment/sft.pt), deterministically."""

from __future__ import annotations

import argparse
import hashlib
import time

from autograder.commands.common import DONE, FAILURES

HELP = "rebuild assignment/sft.pt (seeded SFT on one CPU thread; bit-for-bit reproducible)"
EXAMPLES = """examples:
  python -m autograder build-sft           retrain and overwrite assignment/sft.pt (a few minutes)
  python -m autograder build-sft --check   retrain into a temporary file; exit 1 if it differs from the committed one"""
INTERRUPTED = "build-sft stopped; assignment/sft.pt was not changed"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--check", action="store_true",
                        help="rebuild into a temporary file and compare with the committed checkpoint")


def main(args: argparse.Namespace) -> int:
    import tempfile
    from pathlib import Path

    from autograder.lab.paths import use_world
    use_world()
    import tinylm

    target = tinylm.SFT_CHECKPOINT
    with tempfile.TemporaryDirectory() as tmp:
        fresh = Path(tmp) / "sft.pt"
        t0 = time.perf_counter()
        model = tinylm.load_or_train_sft(fresh)
        seconds = time.perf_counter() - t0
        digest = hashlib.sha256(fresh.read_bytes()).hexdigest()
        print(f"SFT: {tinylm.SFT_STEPS} steps, seed {tinylm.SFT_SEED}, {seconds:.1f} s, "
              f"{fresh.stat().st_size / 1024:.0f} KiB, sha256 {digest[:16]}")
        print(f"greedy accuracy {tinylm.accuracy(model):.3f}, sampled {tinylm.accuracy(model, greedy=False):.3f}")
        if args.check:
            same = target.exists() and target.read_bytes() == fresh.read_bytes()
            print(f"{target} {'matches' if same else 'DIFFERS from'} the rebuild")
            return DONE if same else FAILURES
        target.write_bytes(fresh.read_bytes())
        print(f"wrote {target}")
    return 0
