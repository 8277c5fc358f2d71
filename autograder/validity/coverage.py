"""Which regions of the valid domain the checks reach: every check runs on the reference in-process
(local.py), exactly as in a grade at grading.yaml's settings (derandomised, so the same draws), and
every call it makes is sorted into the regions of autograder/checks/hidden/domains.py.

    table = measure()          # function -> region -> {check id: number of calls in that region}
    missing(table)             # (function, region) pairs the function's differential check never reaches
"""

from __future__ import annotations

import inspect
from types import ModuleType

from autograder import checks
from autograder.checks import tools
from autograder.checks.hidden.domains import DIFFERENTIAL, REGIONS
from autograder.validity.local import local_context

Table = dict[str, dict[str, dict[str, int]]]


def measure(reference: ModuleType | None = None, check_ids: list[str] | None = None) -> Table:
    from autograder.reference import load_reference

    reference = reference or load_reference()
    registry = checks.load_all()
    table: Table = {fn: {region: {} for region in regions} for fn, regions in REGIONS.items()}
    for check_id in check_ids or list(registry):
        with tools.recording() as calls:
            registry[check_id].run(local_context(reference, reference))
        for function, args, kwargs in calls:
            bound = inspect.signature(getattr(reference, function)).bind(*args, **kwargs)
            bound.apply_defaults()
            for region, reaches in REGIONS[function].items():
                if reaches(dict(bound.arguments)):
                    counts = table[function][region]
                    counts[check_id] = counts.get(check_id, 0) + 1
    return table


def missing(table: Table) -> list[tuple[str, str]]:
    """Regions that the function's differential check (DIFFERENTIAL) does not reach."""
    return [(fn, region) for fn, regions in table.items() for region, counts in regions.items()
            if not counts.get(DIFFERENTIAL[fn])]


def format_table(table: Table) -> str:
    lines = [f"{'function':20} {'region':50} {'calls (differential check)':>27} {'other checks':>13}",
             "-" * 113]
    for fn, regions in table.items():
        for region, counts in regions.items():
            own = counts.get(DIFFERENTIAL[fn], 0)
            others = sum(n for c, n in counts.items() if c != DIFFERENTIAL[fn])
            lines.append(f"{fn:20} {region:50} {own if own else 'MISSING':>27} {others:>13}")
    return "\n".join(lines)
