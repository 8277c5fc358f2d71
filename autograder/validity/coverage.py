"""Which parts of the valid domain the checks reach: every check runs on the reference in-process
(local.py), exactly as in a grade at grading.yaml's settings (derandomised, so the same draws), and
every call it makes is sorted into the regions and the factor levels the lab declares (its
grading/checks/hidden/domains.py: DIFFERENTIAL, FACTORS, IMPOSSIBLE, and optionally REGIONS; the pairs
a call reaches are counted by autograder/checks/factors.py).

    calls = record()                 # check id -> the (function, arguments) of every call it makes
    table = measure(calls=calls)     # function -> region -> {check id: number of calls in that region}
    missing(table)                   # (function, region) pairs the function's differential check never reaches
    pairs = pairwise(calls)          # function -> (pairs of levels its differential check reaches, possible pairs)
    holes(pairs)                     # (function, pair) possible pairs its differential check never reaches
"""

from __future__ import annotations

import inspect
from types import ModuleType

from autograder import checks
from autograder.checks import factors, tools
from autograder.checks.local import local_context

Calls = dict[str, list[tuple[str, dict]]]
Table = dict[str, dict[str, dict[str, int]]]
Pair = tuple  # ((factor, level), (factor, level)), as the lab's domains module makes them
PairTable = dict[str, tuple[set[Pair], set[Pair]]]


def domains():
    """The lab's declared domain: its differential checks, factors, impossible pairs and regions (its
    grading/checks/hidden/domains.py, else those derived from grading.yaml's domains: checks/derived.py)."""
    from autograder.checks import differential
    return differential.lab_domains()


def regions() -> dict:
    """function -> region name -> does a call reach it (a lab may declare none: its factors say it all)."""
    return getattr(domains(), "REGIONS", {})


def record(reference: ModuleType | None = None, check_ids: list[str] | None = None) -> Calls:
    """check id -> every call it makes on the reference, as (function, argument name -> value)."""
    from autograder.lab.reference import load_reference

    reference = reference or load_reference()
    registry = checks.load_all()
    recorded: Calls = {}
    for check_id in check_ids or list(registry):
        with tools.recording() as calls:
            registry[check_id].run(local_context(reference, reference))
        recorded[check_id] = []
        for function, args, kwargs in calls:
            bound = inspect.signature(getattr(reference, function)).bind(*args, **kwargs)
            bound.apply_defaults()
            recorded[check_id].append((function, dict(bound.arguments)))
    return recorded


def measure(reference: ModuleType | None = None, check_ids: list[str] | None = None,
            calls: Calls | None = None) -> Table:
    calls = calls if calls is not None else record(reference, check_ids)
    declared = regions()
    table: Table = {fn: {region: {} for region in mine} for fn, mine in declared.items()}
    for check_id, made in calls.items():
        for function, arguments in made:
            for region, reaches in declared.get(function, {}).items():
                if reaches(arguments):
                    counts = table[function][region]
                    counts[check_id] = counts.get(check_id, 0) + 1
    return table


def missing(table: Table) -> list[tuple[str, str]]:
    """Regions that the function's differential check (domains().DIFFERENTIAL) does not reach."""
    return [(fn, region) for fn, regions in table.items() for region, counts in regions.items()
            if not counts.get(domains().DIFFERENTIAL[fn])]


def pairwise(calls: Calls) -> PairTable:
    """function -> (the pairs of levels its differential check's calls reach, the possible pairs), for
    each function whose differential check is in `calls`."""
    table: PairTable = {}
    for function, check_id in domains().DIFFERENTIAL.items():
        if check_id in calls:
            mine = domains().FACTORS[function]
            reached = set().union(*[factors.covered_pairs(mine, arguments)
                                    for fn, arguments in calls[check_id] if fn == function])
            possible = factors.possible_pairs(mine, domains().IMPOSSIBLE.get(function, {}))
            table[function] = (reached & possible, possible)
    return table


def holes(table: PairTable) -> list[tuple[str, Pair]]:
    """Possible pairs of levels that the function's differential check never reaches."""
    return [(fn, pair) for fn, (reached, possible) in table.items() for pair in sorted(possible - reached)]


def format_pair(pair: Pair) -> str:
    (f, x), (g, y) = pair
    return f"{f} {x!r} with {g} {y!r}"


def format_pairwise(table: PairTable, before: PairTable | None = None) -> str:
    """One line per function: pairs reached / possible (and `before`'s, when given)."""
    head = f"{'function':20} {'differential check':34} {'pairs of levels reached':>24}"
    lines = [head + ("  (before)" if before else ""), "-" * (len(head) + (10 if before else 0))]
    for fn, (reached, possible) in table.items():
        cell = f"{len(reached)}/{len(possible)} ({100 * len(reached) / len(possible):.0f}%)"
        extra = ""
        if before and fn in before:
            extra = f"  ({len(before[fn][0])}/{len(before[fn][1])})"
        lines.append(f"{fn:20} {domains().DIFFERENTIAL[fn]:34} {cell:>24}{extra}")
    return "\n".join(lines)


def format_table(table: Table) -> str:
    lines = [f"{'function':20} {'region':50} {'calls (differential check)':>27} {'other checks':>13}",
             "-" * 113]
    for fn, regions in table.items():
        for region, counts in regions.items():
            own = counts.get(domains().DIFFERENTIAL[fn], 0)
            others = sum(n for c, n in counts.items() if c != domains().DIFFERENTIAL[fn])
            lines.append(f"{fn:20} {region:50} {own if own else 'MISSING':>27} {others:>13}")
    return "\n".join(lines)
