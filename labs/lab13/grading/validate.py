"""Lab 13's validation: the reference gets full marks, the starter 0, every null 0 in every check and every e2e
test, every bank mistake loses points in its own part (a hint, when given, is its own), every variant full marks.

    python -m labs.lab13.grading.validate [--e2e] [--seeds-e2e N]

Checks run in process (trusted code only: the reference, the bank, the nulls); a mistake is graded on its own
part's checks (the other parts call no function it replaces). With --e2e the nulls and every mistake also
run through the e2e tests of their parts (the reference for the other parts).
"""

from __future__ import annotations

import argparse
import sys
import types

import torch

from . import world
from .bank import load_all, submission_source
from .local import config, run_checks, run_e2e
from .nulls import NULLS, null_module


def _module(source: str, name: str) -> types.ModuleType:
    module = types.ModuleType(name)
    exec(compile(source, f"<{name}>", "exec"), module.__dict__)  # noqa: S102 - trusted bank text
    return module


def _score(results: dict) -> tuple[float, float]:
    return sum(r[0] for r in results.values()), sum(r[1] for r in results.values())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--e2e", action="store_true")
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    reference = world.load_reference()
    problems = []
    got, total = _score(run_checks(reference, reference))
    print(f"reference: checks {got:g}/{total:g}")
    problems += [] if got == total else ["the reference loses points"]
    starter = world.load_module(world.STARTER, "starter")
    got, _ = _score(run_checks(starter, reference, diagnose=False))
    print(f"starter: checks {got:g}")
    problems += [] if got == 0 else ["the starter earns points"]
    for null in NULLS.values():
        module = null_module(null)
        got, _ = _score(run_checks(module, reference, diagnose=False))
        line = f"null {null.name}: checks {got:g}"
        if got:
            problems.append(f"null {null.name} earns {got:g} points in the checks")
        if args.e2e:
            e2e = run_e2e(module, reference)
            passed = [name for name, r in e2e.items() if r[0] > 0]
            line += f"; e2e passed: {', '.join(passed) or 'none'}"
            problems += [f"null {null.name} passes e2e {', '.join(passed)}"] if passed else []
        print(line)
    cfg = config()
    for entry in load_all():
        module = _module(submission_source(entry), entry.id)
        results = run_checks(module, reference, (entry.part,))
        got, total = _score(results)
        failed = [cid for cid, r in results.items() if r[0] < r[1]]
        hints = {r[3] for r in results.values() if r[3]}
        wrong_hints = hints - {entry.hint}
        line = (f"{'mistake' if entry.is_mistake else 'variant'} {entry.id}: {entry.part} {got:g}/{total:g}, "
                f"fails {len(failed)} ({', '.join(failed[:3])}{'...' if len(failed) > 3 else ''}); "
                f"hint {'named' if entry.hint in hints else '-'}")
        if entry.is_mistake and got == total:
            problems.append(f"mistake {entry.id} loses no points")
        if not entry.is_mistake and got < total:
            problems.append(f"variant {entry.id} loses points: {failed}")
        if wrong_hints:
            problems.append(f"{entry.id} got a wrong hint: {wrong_hints}")
        if args.e2e and entry.is_mistake:
            tests = tuple(n for n, spec in cfg["e2e"].items() if entry.part in spec["parts"])
            e2e = run_e2e(module, reference, tests)
            line += "; e2e failed: " + (", ".join(n for n, r in e2e.items() if r[0] == 0) or "none")
        print(line)
    for p in problems:
        print("PROBLEM:", p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
