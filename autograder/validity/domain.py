"""The reference over its declared domain: every check of the lab, run on the reference itself (in process), with
hypothesis drawing `draws` examples per property check from the check's own strategy (the lab's declared domain:
float32 and float64, every shape and value the strategy draws) instead of the shipped ones, then the check's
chosen examples; rejections and the public checks' fresh twins as in a grade. A failure is the reference breaking
one of its checks' expectations, rejections or properties somewhere in the domain.

    failures = hold(reference, draws=2000)   -> {check id: the CheckFailed's text}
    AUTOGRADER_LAB=labs/lab13 python -m autograder.validity.domain --draws 2000   (exit 1 on a failure)
    ... --entry group_adv.bessel_by_hand   (a bank entry with the reference, on its part's checks)
    ... --module old/posttrain.py          (another file in the reference's place)

The draws are hypothesis's, random from a seed (tools.for_all with `seed`; a grade's are derandomised): fresh,
not the shipped ones, and the same in every run, so a failure in CI reproduces. Derandomised draws are one
fixed sample, and can miss a region: 1000 of them held no float32 group of equal rewards whose mean rounds
(Lab 13's defect), where 1000 random ones from each of seeds 1, 2 and 3 held 10-16. tests/test_reference_domain.py
runs it for every lab (tier slow).
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
import time
from pathlib import Path
from types import ModuleType

from autograder import checks
from autograder.checks import CheckFailed, examples
from autograder.checks.local import load_module, local_context, module_from_source
from autograder.lab import config
from autograder.sandbox.remote import SubmissionError

SEED = 20261203  # the draws' seed: fresh draws, the same in every run


def hold(module: ModuleType, reference: ModuleType, draws: int, seconds: dict[str, float] | None = None,
         part: str | None = None, seed: int = SEED) -> dict[str, str]:
    """Run every check (of `part` only, when given) on `module` (the reference, or a correct variant) against
    `reference`, `draws` hypothesis examples per property check, random from `seed`; check id -> what failed.
    `seconds`, when given, gets each check's CPU time."""
    hypothesis = {**dataclasses.replace(config.load().hypothesis, max_examples=draws), "seed": seed}
    failures: dict[str, str] = {}
    live, examples.LIVE = examples.LIVE, True   # hypothesis draws every time, the shipped lists unused
    try:
        for check in checks.load_all().values():
            if part is not None and check.part != part:
                continue
            started = time.process_time()
            try:
                check.run(local_context(module, reference, hypothesis))
            except CheckFailed as failure:
                failures[check.id] = _text(failure)
            except SubmissionError as exc:
                failures[check.id] = str(exc)
            if seconds is not None:
                seconds[check.id] = time.process_time() - started
    finally:
        examples.LIVE = live
    return failures


def _text(failure: CheckFailed) -> str:
    return "\n".join(part for part in (failure.message, failure.inputs, f"expected {failure.expected}",
                                       f"got {failure.got}") if part)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--draws", type=int, default=2000, help="hypothesis examples per property check")
    parser.add_argument("--module", type=Path, help="hold this file instead of the reference (e.g. an older one)")
    parser.add_argument("--entry", help="hold the reference with this bank entry (part.name) on its part's checks")
    parser.add_argument("--seed", type=int, default=SEED, help="the draws' seed")
    args = parser.parse_args(argv)
    from autograder.lab import bank, registry
    from autograder.lab.reference import load_reference

    registry.lab()
    reference = load_reference()
    held, part = (load_module(args.module) if args.module else reference), None
    if args.entry:
        entry = next(e for e in bank.load_all() if e.id == args.entry)
        held, part = module_from_source(bank.submission_source(entry)), entry.part
    seconds: dict[str, float] = {}
    failures = hold(held, reference, args.draws, seconds, part, args.seed)
    for check_id, text in failures.items():
        print(f"FAIL {check_id}\n{text}\n")
    for check_id, spent in seconds.items():
        print(f"{spent:7.1f} s CPU  {check_id}")
    print(f"{len(seconds)} checks, {args.draws} draws per property check, {len(failures)} failed, "
          f"{sum(seconds.values()):.0f} s CPU")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
