"""The pieces a lab's chosen examples are built from: inputs made from levels of its factors (factors.py),
not drawn, so that they reach what hypothesis's first draws often do not.

A lab's `grading/checks/hidden/chosen.py` turns each row of a pairwise covering array (covering.py) into
one example of its differential check, with a seeded builder per function, from these pieces:

    seeded("f", 3)                                     -> random.Random seeded by the key
    lengths, T = row_lengths(rng, "2 <= T < 24", "ragged with a full row", need=5)
    mask = prefix_mask(lengths, T, torch.float32)      -> (B, T) 1 on each row's first lengths[b] tokens
    x = on_tokens(values, mask, 1e3, rng, dtype)       -> (B, T) values on the generated tokens, garbage elsewhere
    place_units(factors, impossible, levels, designated, n, rng)  -> n units' levels, the designated placed
    confirmation_rows(factors, impossible, {"T": ("2 <= T < 24",)}, capacity)  -> the covering array of the
        diagnosis's confirmation inputs: every pair of the non-degenerate levels, never two factors in lockstep

Everything is deterministic for a key (random.Random of a string).
"""

from __future__ import annotations

import dataclasses
import math
import random
from typing import Any, Callable, Mapping

import torch

from autograder.checks.covering import Feasible, Row, covering_rows, ordered_pair
from autograder.checks.factors import Factor, Pair

EPS_OTHER, EPS_LARGE = (0.1, 0.3, 0.05), (0.5, 0.9)  # clip_eps of the levels "other, < 0.5" and ">= 0.5"


def seeded(*key: Any) -> random.Random:
    return random.Random(" ".join(map(str, key)))


def t_of(r: random.Random, level: str, low: int = 2) -> int:
    """A T of the class (factors.T_CLASSES), at least `low` unless T = 1."""
    return 1 if level == "T = 1" else (r.randint(24, 30) if level == "T >= 24" else r.randint(low, 12))


def row_lengths(r: random.Random, t_level: str, rows: str, need: int, min_rows: int = 0) -> tuple[list[int], int]:
    """Row lengths and T of a prefix mask of the T class and row layout (factors.ROWS), with at least `need`
    generated tokens and, when the layout has several rows, at least `min_rows` rows."""
    low = max(2, need)
    if rows == "one full row":
        T = t_of(r, t_level, low)
        return [T], T
    if rows == "one padded row":
        T = t_of(r, t_level, max(2, need + 1))
        return [r.randint(max(1, need), T - 1)], T
    if rows == "full rows":
        B = max(2, need) + r.randint(0, 2) if t_level == "T = 1" else max(r.randint(2, 4), min_rows)
        T = t_of(r, t_level, max(2, -(-need // B)))
        return [T] * B, T
    B = max(r.randint(2, 4), min_rows)
    if rows == "padded rows of one length":
        T = t_of(r, t_level, max(3, -(-need // B) + 1))
        return [r.randint(max(1, -(-need // B)), T - 1)] * B, T
    if rows == "ragged with a full row":
        T = t_of(r, t_level, low)
        lengths = [T, r.randint(1, T - 1)] + [r.randint(1, T) for _ in range(B - 2)]
    else:  # ragged, none full
        T = t_of(r, t_level, max(3, need))
        lengths = [T - 1, r.randint(1, T - 2)] + [r.randint(1, T - 1) for _ in range(B - 2)]
    r.shuffle(lengths)
    return lengths, T


def prefix_mask(lengths: list[int], T: int, dtype: torch.dtype) -> torch.Tensor:
    return (torch.arange(T)[None, :] < torch.tensor(lengths)[:, None]).to(dtype)


def grid(r: random.Random, lo: float, hi: float, step: float = 1 / 8) -> float:
    """A multiple of `step` in [lo, hi] (exact in float32, reads well in a report)."""
    return r.randint(math.ceil(lo / step), math.floor(hi / step)) * step


def on_tokens(values: list[float], mask: torch.Tensor, garbage: float, r: random.Random,
              dtype: torch.dtype) -> torch.Tensor:
    """A (B, T) tensor: `values` on the generated tokens (row by row), garbage in [-g, g] elsewhere."""
    x = torch.tensor([[r.uniform(-garbage, garbage) for _ in range(mask.shape[1])] for _ in range(mask.shape[0])],
                     dtype=torch.float64)
    x[mask.bool()] = torch.tensor(values, dtype=torch.float64)
    return x.to(dtype)


def random_unit(factors: tuple[Factor, ...], impossible: Mapping[Pair, str], levels: dict[str, str],
                r: random.Random, feasible: Feasible | None = None,
                given: Mapping[str, str] | None = None) -> dict[str, str]:
    """Random levels of the per-unit factors (the `given` ones kept), never in an impossible pair with `levels` or
    each other, nor a unit `feasible` refuses beside `levels`."""
    order = {f.name: i for i, f in enumerate(factors)}
    unit: dict[str, str] = dict(given or {})
    for f in factors:
        if f.per == "call" or f.name in unit:
            continue
        chosen = list(levels.items()) + list(unit.items())
        unit[f.name] = r.choice([x for x in f.levels
                                 if not any(ordered_pair(c, (f.name, x), order) in impossible for c in chosen)
                                 and (feasible is None or feasible(levels, {**unit, f.name: x}))])
    return unit


def place_units(factors: tuple[Factor, ...], impossible: Mapping[Pair, str], levels: dict[str, str],
                designated: list[dict[str, str]], n: int, r: random.Random,
                feasible: Feasible | None = None, rows: list[int] | None = None,
                shared: tuple[str, ...] = ()) -> list[dict[str, str]]:
    """n units: the designated ones at random places, random (feasible) levels for the others. With `rows` (each
    unit's row) the designated go one to a row (at least as many rows as them), and a row's units share the levels
    of the `shared` factors (those set by an entry of the row: a designated unit's where the row has one)."""
    if rows is None:
        made = [random_unit(factors, impossible, levels, r, feasible) for _ in range(n)]
        for place, unit in zip(r.sample(range(n), min(n, len(designated))), designated):
            made[place] = unit
        return made
    units_of: dict[int, list[int]] = {}
    for i, row in enumerate(rows):
        units_of.setdefault(row, []).append(i)
    assert len(units_of) >= len(designated), "one designated unit per row"
    placed = {r.choice(units_of[row]): unit for row, unit in zip(r.sample(sorted(units_of), len(designated)),
                                                                 designated)}
    made = []
    for i, row in enumerate(rows):
        if i in placed:
            made.append(placed[i])
            continue
        leader = next((placed[j] for j in units_of[row] if j in placed), None)
        if leader is None and units_of[row][0] < i:
            leader = made[units_of[row][0]]
        given = {name: leader[name] for name in shared} if leader is not None else {}
        made.append(random_unit(factors, impossible, levels, r, feasible, given))
    return made


def dtype_of(levels: dict[str, str]) -> torch.dtype:
    return torch.float32 if levels["dtype"] == "float32" else torch.float64


def clip_eps_of(r: random.Random, level: str) -> float:
    """A clip_eps of the level (factors.CLIP_LEVELS)."""
    return 0.2 if level == "0.2" else r.choice(EPS_OTHER if level == "other, < 0.5" else EPS_LARGE)


def log_ratio_of(r: random.Random, level: str, eps: float) -> float:
    """log(ratio) for a ratio of the level (factors.RATIO_LEVELS), at least 0.01 from the clip bounds (kinks)."""
    if level == "ratio = 1":
        return 0.0
    if level in ("ratio < e^-20", "ratio > e^20"):
        return (-1 if "<" in level else 1) * grid(r, 20.5, 40, 1 / 64)
    if level == "3 < ratio <= e^20":
        return grid(r, math.log(3.1), 20, 1 / 64)
    if level == "e^-20 <= ratio < 1 - eps":
        return r.uniform(-20, math.log(1 - eps - 0.01))
    lo, hi = {"1 - eps < ratio < 1": (1 - eps + 0.01, 0.99), "1 < ratio < 1 + eps": (1.01, 1 + eps - 0.01),
              "1 + eps < ratio <= 3": (1 + eps + 0.01, 3)}[level]
    return math.log(r.uniform(lo, hi))


def signed(r: random.Random, level: str, size: float = 10) -> float:
    """A number of the sign level (factors.SIGN_LEVELS), a multiple of 1/8 up to `size`."""
    return 0.0 if level == "= 0" else (-1 if level == "< 0" else 1) * grid(r, 1 / 8, size)


def confirmation_rows(factors: tuple[Factor, ...], impossible: Mapping[Pair, str],
                      allowed: Mapping[str, tuple[str, ...]], capacity: Callable[[dict[str, str]], int]) -> list[Row]:
    """A pairwise covering array (covering.py) of the factors, each narrowed to its `allowed` levels (the others
    keep all theirs): the confirmation inputs of the diagnosis, one per row. Every pair of levels is in some
    input, so two mistakes that differ only where two levels meet (an aggregation on ragged rows) differ on one."""
    narrowed = tuple(dataclasses.replace(f, levels=tuple(allowed[f.name])) if f.name in allowed else f
                     for f in factors)
    return covering_rows(narrowed, impossible, capacity, seed=1)
