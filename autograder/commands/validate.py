"""`validate [--parts ...] [--e2e]`: grade the reference, the starter, the null submissions (derived from the
contract and the lab's own), the contract mutants and the mistake bank, measure hint precision/recall and domain
coverage; exit 1 on any miss."""

from __future__ import annotations

import argparse
import importlib.util
import sys
import time

from autograder.commands.common import FAILURES, add_workers, check_names, comma_list, fail, load_config, positive_int

HELP = ("check the grader against the mistake bank: null submissions 0, every mistake and contract mutant caught "
        "in its own part, variants at full marks, every hint right, the valid domain reached")
EXAMPLES = """examples:
  python -m autograder validate                          every part (about 10 minutes on 2 CPUs)
  python -m autograder validate --parts gae --verbose    one part, every test of every subject
  python -m autograder validate --entries gae.forward_recursion,gae.no_done_mask
  python -m autograder validate --e2e                    also the e2e tests (CI's own step; slow)
  python -m autograder validate --mutation               also the mutants of the reference (mutmut's operators)

Exit 1: a mistake or a contract mutant was not caught in its own part (or cost points elsewhere), a
variant or the reference lost points, the starter or a null submission scored, a hint named the wrong
mistake (also with the graded mistake left out of the bank), two mistakes a diagnosis weighs answer alike
on every confirmation input of their function, a function's differential check missed a region of its
valid domain or a possible pair of its factors' levels, or (--mutation) a mutant of the reference passed
every check yet answers some draw of the declared domain differently (a gap)."""
INTERRUPTED = "validate stopped; its grading processes were stopped"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--parts", type=comma_list, default=[], help="comma-separated parts to validate (default: all)")
    parser.add_argument("--entries", type=comma_list, default=[],
                        help="comma-separated bank entry ids (default: all of the parts)")
    add_workers(parser, "grades")
    parser.add_argument("--elsewhere-examples", type=int, default=5,
                        help="hypothesis examples per property test when grading a bank entry on the OTHER "
                             "parts (its own part always runs at grading.yaml's settings); 0 skips them")
    parser.add_argument("--e2e", action="store_true",
                        help="also run the e2e tests: the reference, every null submission (0 points) and every "
                             "variant (full marks), and the mistakes that calibration found to fail e2e tests "
                             "(the lab's grading/data/e2e_mistakes.json); slow")
    parser.add_argument("--no-nulls", action="store_true",
                        help="skip the null submissions (answers that ignore their input, derived from the contract "
                             "and the lab's own; each must score 0)")
    parser.add_argument("--no-mutants", action="store_true",
                        help="skip the contract mutants (the reference with one clause of its contract broken: "
                             "output detached, cast to float32, an argument written into, mask or argument ignored; "
                             "each must lose points in its own part)")
    parser.add_argument("--no-coverage", action="store_true",
                        help="skip measuring which regions of the valid domain the checks reach")
    parser.add_argument("--mutation", action="store_true",
                        help="also grade the mutants mutmut's operators make of the reference's solution regions on "
                             "the unit checks, and classify each survivor on fresh draws: equivalent, or a gap "
                             "(exit 1); docs/validity.md, Mutation")
    parser.add_argument("--mutation-sample", type=positive_int, default=None, metavar="N",
                        help="grade a seeded sample of N mutants (default: every one)")
    parser.add_argument("--mutation-draws", type=positive_int, default=1000, metavar="N",
                        help="fresh draws per function and dtype that classify a survivor (default 1000)")
    parser.add_argument("--verbose", action="store_true", help="print every subject's tests")


def main(args: argparse.Namespace) -> int:
    from autograder.validity import validation as val

    cfg = load_config()
    if args.mutation and importlib.util.find_spec("mutmut") is None:
        fail("--mutation needs mutmut, the mutation library (pyproject's dev extra): pip install -e '.[dev]'")
    check_parts = list(cfg.parts)
    parts = check_names("--parts", args.parts, check_parts) or check_parts
    e2e_outcomes = None
    if args.e2e:
        from autograder.validity import mistake_outcomes
        e2e_outcomes = mistake_outcomes.current()
        uncalibrated = [m for m in mistake_outcomes.stale() if m.split(".")[0] in parts]
    subjects = val.subjects_for(parts, check_parts, args.elsewhere_examples, e2e_outcomes, nulls=not args.no_nulls,
                               mutants=not args.no_mutants)
    if args.entries:
        keep = set(args.entries)
        subjects = [s for s in subjects if s.kind in ("reference", "starter", "null") or s.label in keep]
    started = time.monotonic()
    from autograder.sandbox import isolation
    print(f"validating {', '.join(parts)}: {len(subjects)} submissions on {args.workers} workers, "
          f"sandbox: {isolation.detect().describe()}")

    def progress(outcome):
        v = val.judge(outcome)
        mark = "ok  " if not v.problems else "MISS"
        print(f"  {mark} {outcome.subject.label:40} {outcome.seconds:5.1f} s", flush=True)
        if args.verbose:
            for t in outcome.tests:
                print(f"         {t.id:40} {t.score:g}/{t.max_score:g} {t.diagnosis}")

    outcomes = val.grade_subjects(subjects, args.workers, progress)
    verdicts = [val.judge(o) for o in outcomes]
    wall = time.monotonic() - started
    print()
    print(format_table(parts, verdicts))
    nulls = [o for o in outcomes if o.subject.kind == "null"]
    if nulls:
        print()
        print(format_null_table(parts, nulls))
    mutants = [v for v in verdicts if v.subject.kind == "mutant"]
    if mutants:
        print()
        print(format_mutant_table(mutants, outcomes))
    problems = [(v.subject.label, p) for v in verdicts for p in v.problems]
    if args.e2e:
        problems += [(entry, "its e2e outcomes are not calibrated for this code (e2e_mistakes.json is missing or "
                             "stale for it), so validate cannot hold it to them: python -m autograder refresh")
                     for entry in uncalibrated]
    undiagnosed = [v.subject.label for v in verdicts if v.subject.kind == "mistake" and v.caught and not v.named]
    if undiagnosed:
        print(f"\ncaught but not named by the diagnosis ({len(undiagnosed)}): {', '.join(undiagnosed)}")
    shown, right = sum(v.hints for v in verdicts), sum(v.right_hints for v in verdicts)
    print(f"hints shown: {shown}, naming the right mistake: {right} (precision "
          f"{100 * right / shown if shown else 100:.0f}%)")
    shown, right = sum(v.left_out_hints for v in verdicts), sum(v.left_out_right for v in verdicts)
    print(f"with each mistake left out of the bank: hints shown {shown}, right {right} (leave-one-out precision "
          f"{100 * right / shown if shown else 100:.0f}%)")
    from autograder.validity import confirmation
    together = confirmation.unseparated(parts)
    print(f"confirmation inputs: every two mistakes a diagnosis weighs told apart"
          f"{'' if not together else f' except {len(together)} pair(s)'}")
    problems += [(f"{a} and {b}", f"{fn}: they answer alike on every confirmation input, so neither can be named "
                  "(give inputs where they differ, or declare them one diagnosis: the bank's SAME_DIAGNOSIS)")
                 for fn, a, b in together]
    from autograder.checks import differential
    if differential.lab_domains() is None:
        print("\ncoverage: this lab declares no domain (grading.yaml `contract.F.domain`, or "
              "grading/checks/hidden/domains.py): not measured")
    elif not args.no_coverage:
        from autograder.validity import coverage

        def mine(fn: str) -> bool:
            return any(fn in cfg.parts[p] for p in parts)
        calls = coverage.record(check_ids=[c for c in cfg.tests if c.split(".")[0] in parts])
        table, pairs = coverage.measure(calls=calls), coverage.pairwise(calls)
        if table:  # a lab may declare no regions, only factors
            print()
            print(coverage.format_table({fn: regions for fn, regions in table.items() if mine(fn)}))
        print()
        print(coverage.format_pairwise(pairs))
        problems += [("coverage", f"{fn}: its differential check never reaches {region!r}")
                     for fn, region in coverage.missing(table) if mine(fn)]
        problems += [("coverage", f"{fn}: its differential check never reaches {coverage.format_pair(pair)}")
                     for fn, pair in coverage.holes(pairs)]
    if args.mutation:
        problems += mutation_problems(parts, args.mutation_sample, args.mutation_draws, args.verbose)
    graded = sum(o.seconds for o in outcomes)
    print(f"\nvalidate took {wall:.0f} s wall ({graded:.0f} s of grading on {args.workers} workers)")
    if problems:
        print(f"\n{len(problems)} miss(es):", file=sys.stderr)
        for label, p in problems:
            print(f"  {label}: {p}", file=sys.stderr)
        return FAILURES
    print("every expectation holds")
    return 0


def mutation_problems(parts: list[str], sample: int | None, count: int, verbose: bool) -> list[tuple[str, str]]:
    """Print the lab's mutation score; a gap (a mutant passing every check yet differing in the domain) is a miss."""
    from autograder.lab import paths
    from autograder.validity import mutation

    def progress(verdict) -> None:
        if verbose:
            print(f"  {verdict.status:10} {verdict.mutant.id:24} {verdict.seconds:5.1f} s  {verdict.detail}",
                  flush=True)

    print()
    report = mutation.run(parts, sample, count=count, progress=progress)
    print(mutation.format_report(report, paths.REFERENCE.read_text()))
    return [(v.mutant.id, f"a gap: passes every check, yet {v.detail}") for v in report.gaps]


def format_table(parts: list[str], verdicts) -> str:
    head = (f"{'part':10} {'mistakes caught':>16} {'mutation score':>15} {'variants full':>14} "
            f"{'hint precision':>15} {'hint recall':>12} {'left out: precision':>20}")
    lines = [head, "-" * len(head)]
    for part in parts:
        mine = [v for v in verdicts if v.subject.part == part]
        mistakes = [v for v in mine if v.subject.kind == "mistake"]
        variants = [v for v in mine if v.subject.kind == "variant"]
        caught = [v for v in mistakes if v.caught and not v.problems]
        score = f"{100 * len(caught) / len(mistakes):.0f}%" if mistakes else "-"
        named = sum(v.named for v in mistakes if v.caught)
        shown, right = sum(v.hints for v in mine), sum(v.right_hints for v in mine)
        alone, alone_right = sum(v.left_out_hints for v in mistakes), sum(v.left_out_right for v in mistakes)
        lines.append(f"{part:10} {len(caught):>10}/{len(mistakes):<5} {score:>15} "
                     f"{sum(not v.problems for v in variants):>8}/{len(variants):<5} "
                     f"{right:>9}/{shown:<5} {named:>6}/{sum(v.caught for v in mistakes):<5} "
                     f"{alone_right:>14}/{alone:<5}")
    for label in ("reference", "starter"):
        v = next((v for v in verdicts if v.subject.label == label), None)
        if v is not None:
            expected = "full marks" if label == "reference" else "zero"
            lines.append(f"{label:10} {'as expected (' + expected + ')' if not v.problems else 'MISS'}")
    lines.append("(caught: loses points in its own part and nowhere else; hint precision: hints naming the "
                 "subject's own mistake / hints shown; hint recall: caught mistakes that a hint names;\n"
                 " left out: each mistake graded with itself left out of the diagnosis's bank, hints naming "
                 "nothing but an equivalent mistake / hints shown)")
    return "\n".join(lines)


def format_mutant_table(verdicts, outcomes) -> str:
    """Each contract mutant: the points it lost in its own part, elsewhere, and whether that is as expected."""
    from autograder.validity.validation import own_part
    lost = {o.subject.label: o for o in outcomes}
    head = f"{'contract mutant':44} {'part':10} {'lost in its part':>17} {'lost elsewhere':>15}  verdict"
    lines = [head, "-" * len(head)]
    for v in verdicts:
        tests = lost[v.subject.label].tests
        mine = sum(t.max_score - t.score for t in tests if own_part(t, v.subject.part))
        other = sum(t.max_score - t.score for t in tests if not own_part(t, v.subject.part))
        lines.append(f"{v.subject.label:44} {v.subject.part:10} {mine:>17g} {other:>15g}  "
                     f"{'caught' if not v.problems else 'MISS'}")
    return "\n".join(lines)


def format_null_table(parts: list[str], outcomes) -> str:
    """Points of each null submission per part, and per e2e test when they ran (each must be 0); "=zeros": not
    graded there, where it answers exactly as derived.zeros (an echo, on the functions without its parameter)."""
    e2e = list(dict.fromkeys(t.id for o in outcomes for t in o.tests if t.tags[0] == "e2e"))
    columns = [(p, lambda t, p=p: t.tags[0] == p) for p in parts]
    columns += [(test.removeprefix("e2e."), lambda t, test=test: t.id == test) for test in e2e]
    head = f"{'null submission':28}" + "".join(f" {name:>12}" for name, _ in columns)
    lines = [head, "-" * len(head)]
    for o in outcomes:
        cells = []
        for _, chosen in columns:
            mine = [t for t in o.tests if chosen(t)]
            same = "=" + o.subject.elsewhere_as.removeprefix("derived.") if o.subject.elsewhere_as else "-"
            cells.append(f"{sum(t.score for t in mine):g}/{sum(t.max_score for t in mine):g}" if mine else same)
        lines.append(f"{o.subject.label:28}" + "".join(f" {c:>12}" for c in cells))
    return "\n".join(lines)
