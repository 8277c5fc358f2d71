"""Mistakes nobody wrote: mutation testing of the lab's checks with mutmut's operators (mutants.py).

Each mutant of the reference's solution regions is graded in-process (local.py) on the lab's unit checks
(public and hidden, every check of each function the mutant changes: the mutated one and those of the
reference that call it), under a wall-clock limit. It is killed when a check fails, raises or runs out of
time, or when the module does not import. A survivor is classified on fresh draws of each function it
changes (draws.py: the differential check's own strategy, fresh seed, float32 and float64): equivalent
when it answers every draw as the reference does (values and the checks' gradients, within rounding),
else a gap: it differs somewhere in the declared domain yet passes every check.

    report = run(parts=None, sample=None, seed=29, count=1000)
    print(format_report(report)); report.gaps   # a gap makes `validate --mutation` exit 1
"""

from __future__ import annotations

import ast
import dataclasses
import random
import signal
import time
from dataclasses import dataclass, field
from types import ModuleType
from typing import Callable, Iterator

from autograder import checks
from autograder.checks.local import local_context, module_from_source
from autograder.lab import config, paths
from autograder.validity import draws, mutants

TIME_LIMIT = 120.0  # wall seconds a mutant's checks may take (the reference's take a few; a loaded machine more)
SHRINK = {"shrink_examples": 0, "shrink_seconds": 0}  # a killed mutant needs no shrunk failure


class MutantTimeout(BaseException):
    """A mutant's checks ran out of time (a BaseException: no check or hypothesis catches it)."""


@dataclass
class Verdict:
    mutant: mutants.Mutant
    status: str                 # "killed", "equivalent" or "gap"
    detail: str = ""            # killed: by which check; equivalent: the draws; gap: what differs
    seconds: float = 0.0        # CPU time of grading and classifying it


@dataclass
class Report:
    library: str
    source: str                                  # the reference file, relative to the lab
    generated: int                               # every mutant of the graded functions' solution regions
    verdicts: list[Verdict] = field(default_factory=list)
    draws: dict[str, int] = field(default_factory=dict)   # function -> draws per dtype it was classified on
    sampled: str = ""                            # how the graded mutants were chosen, "" when all were

    def of(self, status: str) -> list[Verdict]:
        return [v for v in self.verdicts if v.status == status]

    @property
    def gaps(self) -> list[Verdict]:
        return self.of("gap")


def run(parts: list[str] | None = None, sample: int | None = None, seed: int = 29, count: int = 1000,
        progress: Callable[[Verdict], None] = lambda verdict: None) -> Report:
    """Generate, grade and classify the mutants of the functions of `parts` (default: all)."""
    from autograder.lab.reference import load_reference

    cfg = config.current()
    functions = tuple(fn for fn, c in cfg.contract.items() if parts is None or c.part in parts)
    source = paths.REFERENCE.read_text()
    made = mutants.generate(source, functions)
    chosen = made if sample is None or sample >= len(made) else \
        sorted(random.Random(seed).sample(made, sample), key=made.index)
    report = Report(mutants.library(), str(paths.REFERENCE.relative_to(paths.LAB)), len(made),
                    sampled="" if chosen is made else f"a seeded sample of {len(chosen)} (seed {seed})")
    reference = load_reference()
    callers = _callers(source, tuple(cfg.contract))
    cache: dict[str, tuple[list[draws.Draw], list[draws.Answer]]] = {}
    for mutant in chosen:
        started = time.process_time()
        affected = callers[mutant.function]
        verdict = _grade(mutant, reference, affected)
        if verdict is None:
            verdict = _classify(mutant, reference, affected, cache, count, seed)
        verdict.seconds = time.process_time() - started
        report.verdicts.append(verdict)
        progress(verdict)
    report.draws = {fn: len(d) // 2 for fn, (d, _) in cache.items()}
    return report


def _grade(mutant: mutants.Mutant, reference: ModuleType, functions: tuple[str, ...]) -> Verdict | None:
    """Killed (with the check that kills it), or None when it passes every check of `functions`."""
    registered = checks.load_all()
    ids = [c for c in config.current().tests if c in registered and set(registered[c].functions) & set(functions)]
    ids.sort(key=lambda c: mutant.function not in registered[c].functions)  # its own function's checks first
    try:
        with _time_limit(TIME_LIMIT):
            module = module_from_source(mutant.source, f"mutant_{mutant.function}")
            for check_id in ids:
                try:
                    registered[check_id].run(local_context(module, reference, {**_hypothesis(), **SHRINK}))
                except Exception as exc:  # noqa: BLE001 - a failed check, or anything the mutant raised
                    return Verdict(mutant, "killed", f"{check_id} ({type(exc).__name__})")
    except MutantTimeout:
        return Verdict(mutant, "killed", f"out of time ({TIME_LIMIT:g} s)")
    except Exception as exc:  # noqa: BLE001 - the mutated module does not import
        return Verdict(mutant, "killed", f"import ({type(exc).__name__})")
    return None


def _classify(mutant: mutants.Mutant, reference: ModuleType, functions: tuple[str, ...],
              cache: dict, count: int, seed: int) -> Verdict:
    """Equivalent or a gap, on fresh draws of every function the mutant changes."""
    module = module_from_source(mutant.source, f"mutant_{mutant.function}")
    found = first_difference(module, reference, functions, cache, count, seed)
    if found:
        return Verdict(mutant, "gap", found)
    sizes = ", ".join(f"{fn} {len(cache[fn][0]) // 2}" for fn in functions)
    return Verdict(mutant, "equivalent", f"same answers and gradients on the draws per dtype of {sizes}")


def first_difference(module, reference: ModuleType, functions: tuple[str, ...], cache: dict, count: int,
                     seed: int) -> str:
    """"" when `module` answers every fresh draw of `functions` as the reference does, else what differs and
    where (`cache`: function -> its draws and the reference's answers, filled on first use)."""
    contract = config.current().contract
    for fn in functions:
        if fn not in cache:
            drawn = draws.fresh(reference, fn, count, seed)
            cache[fn] = (drawn, [draws.answer(reference, d, i) for i, d in enumerate(drawn)])
        for i, (draw, expected) in enumerate(zip(*cache[fn])):
            try:
                with _time_limit(TIME_LIMIT):
                    found = draws.differs(expected, draws.answer(module, draw, i), draw, contract[fn].mask_index)
            except MutantTimeout:
                found = "out of time"
            if found:
                return f"{found}, on {draws.describe(draw)}"
    return ""


def bank_power(count: int = 1000, seed: int = 29) -> list[str]:
    """The draws' power, measured on the bank: the ids of the lab's mistakes that the fresh draws cannot tell
    from the reference (each mistake differs from it somewhere in the domain, so each should be told)."""
    import types

    from autograder.lab import bank
    from autograder.lab.entries import contract_with
    from autograder.lab.reference import load_reference

    reference = load_reference()
    callers = _callers(paths.REFERENCE.read_text(), tuple(config.current().contract))
    cache: dict = {}
    return [entry.id for entry in bank.load_all() if entry.is_mistake
            and not first_difference(types.SimpleNamespace(**contract_with(entry, reference)), reference,
                                     callers[entry.function], cache, count, seed)]


def _hypothesis() -> dict:
    """grading.yaml's hypothesis settings, as a grade uses them."""
    return dataclasses.asdict(config.current().hypothesis)


def _callers(source: str, functions: tuple[str, ...]) -> dict[str, tuple[str, ...]]:
    """function -> itself and every contract function whose body calls it, directly or through another."""
    tree = ast.parse(source)
    names = {node.name: {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}
             for node in tree.body if isinstance(node, ast.FunctionDef) and node.name in functions}
    out: dict[str, tuple[str, ...]] = {}
    for fn in functions:
        reached = {fn}
        while True:
            more = {g for g, used in names.items() if used & reached} - reached
            if not more:
                break
            reached |= more
        out[fn] = tuple(g for g in functions if g in reached)
    return out


class _time_limit:
    """Raise MutantTimeout in the main thread after `seconds` of wall time (SIGALRM)."""

    def __init__(self, seconds: float):
        self.seconds = seconds

    def __enter__(self) -> None:
        self.previous = signal.signal(signal.SIGALRM, self._expired)
        signal.setitimer(signal.ITIMER_REAL, self.seconds)

    def __exit__(self, *exc) -> None:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, self.previous)

    @staticmethod
    def _expired(signum, frame) -> None:
        raise MutantTimeout()


def format_report(report: Report, reference: str = "") -> str:
    """The lab's mutation score, each survivor and how it was classified, each gap with its diff."""
    killed, equivalent, gaps = (report.of(s) for s in ("killed", "equivalent", "gap"))
    graded = len(report.verdicts)
    lines = [f"mutation ({report.library} operators on {report.source}'s solution regions): "
             f"{report.generated} generated" + (f", {report.sampled}" if report.sampled else "") +
             f"; {len(killed)} killed, {len(equivalent)} equivalent, {len(gaps)} gap(s); score "
             f"{100 * len(killed) / max(graded - len(equivalent), 1):.0f}% of the non-equivalent"]
    if report.draws:
        lines.append("  survivors classified on fresh draws per dtype (float32 and float64 each) of the "
                     "differential check's strategy, seed-drawn: "
                     + ", ".join(f"{fn} {n}" for fn, n in report.draws.items()))
    for v in equivalent:
        lines.append(f"  equivalent {v.mutant.id:24} line {v.mutant.line}: {v.mutant.before} -> {v.mutant.after}")
    for v in gaps:
        lines.append(f"  GAP {v.mutant.id} line {v.mutant.line}: {v.mutant.before} -> {v.mutant.after}")
        lines.append(f"      passes every check, yet {v.detail}")
        if reference:
            lines.extend("      " + line for line in v.mutant.diff(reference).splitlines())
    cpu = sum(v.seconds for v in report.verdicts)
    lines.append(f"  {cpu:.0f} s of CPU for {graded} mutants")
    return "\n".join(lines)


def summary_counts(report: Report) -> Iterator[tuple[str, int]]:
    yield from (("generated", report.generated), ("graded", len(report.verdicts)),
                ("killed", len(report.of("killed"))), ("equivalent", len(report.of("equivalent"))),
                ("gaps", len(report.gaps)))
