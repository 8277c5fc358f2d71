"""A small pairwise covering array over a function's factors (factors.py), greedily, AETG-like.

    rows = covering_rows(FACTORS["f"], IMPOSSIBLE.get("f", {}), capacity=lambda levels: 0)
    -> [Row(levels={"dtype": "float32", "T": "T = 1", ...}, units=[]), ...]

Every possible pair of levels (factors.possible_pairs) is in some row. A row gives each per-call
factor a level, and lists up to `capacity(levels)` units (tokens, pairs, rows of a ranking), each
giving every per-unit factor a level: one example can hold many units, so one row reaches many
pairs of per-unit levels (one token each). Each row is built from `CANDIDATES` seeded random
candidates, keeping the one that reaches the most pairs not yet reached; within a candidate each
level is chosen greedily (the most new pairs with the levels already chosen, never an impossible
pair). No library does units (a covering-array tool sees one level per factor per row, which
would need a row per pair of per-unit levels), and the greedy is this page.
"""

from __future__ import annotations

import random
from collections import Counter
from dataclasses import dataclass, field
from typing import Callable, Mapping

from autograder.checks.factors import Factor, Pair, possible_pairs

CANDIDATES = 30


@dataclass
class Row:
    levels: dict[str, str]                                   # per-call factor -> level
    units: list[dict[str, str]] = field(default_factory=list)  # per unit: per-unit factor -> level


def ordered_pair(a: tuple[str, str], b: tuple[str, str], order: dict[str, int]) -> Pair:
    return (a, b) if order[a[0]] < order[b[0]] else (b, a)


def row_pairs(factors: tuple[Factor, ...], row: Row) -> set[Pair]:
    """The pairs of levels a row reaches (as factors.covered_pairs counts a call's)."""
    order = {f.name: i for i, f in enumerate(factors)}
    chosen = list(row.levels.items())
    pairs = {ordered_pair(a, b, order) for i, a in enumerate(chosen) for b in chosen[i + 1:]}
    for unit in row.units:
        mine = list(unit.items())
        pairs |= {ordered_pair(a, b, order) for a in chosen for b in mine}
        pairs |= {ordered_pair(a, b, order) for i, a in enumerate(mine) for b in mine[i + 1:]}
    return pairs


Feasible = Callable[[dict[str, str], dict[str, str]], bool]  # (a row's per-call levels, a unit's levels so far)


def covering_rows(factors: tuple[Factor, ...], impossible: Mapping[Pair, str],
                  capacity: Callable[[dict[str, str]], int], seed: int = 0,
                  feasible: Feasible | None = None) -> list[Row]:
    """Rows that reach every possible pair of the factors' levels (deterministic for a seed); a row lists up
    to `capacity(its per-call levels)` units, each one `feasible` allows beside the row's levels (a unit whose
    levels no input of that row can hold: three levels that exclude each other though no two do)."""
    order = {f.name: i for i, f in enumerate(factors)}
    uncovered = possible_pairs(factors, impossible)
    excluded = set(impossible)
    rng = random.Random(seed)
    rows: list[Row] = []
    while uncovered:
        best, gain = None, 0
        freq = Counter(level for pair in uncovered for level in pair)  # how many uncovered pairs hold a level
        for _ in range(CANDIDATES):
            row = _candidate(factors, order, excluded, uncovered, freq, capacity, rng, feasible)
            new = len(row_pairs(factors, row) & uncovered)
            if new > gain:
                best, gain = row, new
        if best is None:
            raise ValueError(f"no row reaches {sorted(uncovered)[:3]} (declare them impossible?)")
        rows.append(best)
        uncovered -= row_pairs(factors, best)
    return rows


def _candidate(factors: tuple[Factor, ...], order: dict[str, int], impossible: set[Pair], uncovered: set[Pair],
               freq: Counter, capacity: Callable[[dict[str, str]], int], rng: random.Random,
               feasible: Feasible | None = None) -> Row:
    per_call = [f for f in factors if f.per == "call"]
    per_unit = [f for f in factors if f.per != "call"]
    rng.shuffle(per_call)
    levels: dict[str, str] = {}
    for f in per_call:
        level = _best_level(f, list(levels.items()), order, impossible, uncovered, freq, rng)
        if level is None:
            raise ValueError(f"no level of {f.name} makes a possible pair with {levels}")
        levels[f.name] = level
    row = Row(levels)
    reached: set[Pair] = set()
    for _ in range(capacity(levels) if per_unit else 0):
        rng.shuffle(per_unit)
        unit: dict[str, str] = {}
        for f in per_unit:
            allows = None if feasible is None else (lambda x, f=f, unit=unit: feasible(levels, {**unit, f.name: x}))
            level = _best_level(f, list(levels.items()) + list(unit.items()), order, impossible,
                                uncovered - reached, freq, rng, allows)
            if level is None:
                break
            unit[f.name] = level
        if len(unit) < len(per_unit):  # no unit beside these levels holds every factor's level
            break
        new = {ordered_pair(a, b, order) for a in list(levels.items()) + list(unit.items()) for b in unit.items()
               if a[0] != b[0]} & (uncovered - reached)
        if not new:
            break
        row.units.append(unit)
        reached |= new
    return row


def _best_level(f: Factor, chosen: list[tuple[str, str]], order: dict[str, int], impossible: set[Pair],
                uncovered: set[Pair], freq: Counter, rng: random.Random,
                allows: Callable[[str], bool] | None = None) -> str | None:
    """The level of `f` reaching the most uncovered pairs with `chosen` (ties: at random), never an impossible pair
    nor one `allows` refuses (None when every level is refused)."""
    allowed = [x for x in f.levels if not any(ordered_pair(c, (f.name, x), order) in impossible for c in chosen)
               and (allows is None or allows(x))]
    if not allowed:
        return None
    scores = {x: sum(ordered_pair(c, (f.name, x), order) in uncovered for c in chosen)
              + 0.001 * freq[(f.name, x)] for x in allowed}
    top = max(scores.values())
    return rng.choice([x for x in allowed if scores[x] == top])
