"""Factors of a contract function's valid domain, and the pairs of their levels a call reaches.

A lab declares, per function, its factors (its `grading/checks/hidden/domains.py`: FACTORS, IMPOSSIBLE):

    Factor("dtype", ("float32", "float64"), lambda a: ...)              # per call: one level
    Factor("ratio", RATIO_LEVELS, lambda a: [...one per token], per="token")  # per unit: one level a unit

A pair of levels of two factors is reached by one call: two per-call levels in that call; a per-call and
a per-unit level in that call, with one of its units; two per-unit levels in ONE unit (one token with
A < 0 and a ratio above 1 + eps). `covered_pairs` lists the pairs a call reaches, `possible_pairs` every
pair minus the impossible ones (each with its reason). The level vocabularies that several labs share
(T classes, row layouts of a prefix mask, signs, a ratio against a clip range) are here too.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable, Mapping, Optional

import torch

from autograder.checks.strategies import LONG_T


@dataclass(frozen=True)
class Factor:
    name: str
    levels: tuple[str, ...]
    level: Callable[[dict], Any]   # a call's arguments -> its level (per "call") or its units' levels (a list)
    per: str = "call"              # "call", or the unit: "token", "pair", "row"... (one unit kind per function)


Pair = tuple[tuple[str, str], tuple[str, str]]  # ((factor, level), (factor, level)), factors in declared order


def levels_of(factors: tuple[Factor, ...], arguments: dict) -> dict[str, Any]:
    """factor name -> the call's level (per-call factors) or its units' levels (a list)."""
    return {f.name: f.level(arguments) for f in factors}


def covered_pairs(factors: tuple[Factor, ...], arguments: dict) -> set[Pair]:
    """The pairs of levels one call (argument name -> value) reaches (see the module docstring)."""
    levels = levels_of(factors, arguments)
    pairs: set[Pair] = set()
    for i, f in enumerate(factors):
        for g in factors[i + 1:]:
            a, b = levels[f.name], levels[g.name]
            if f.per == "call" and g.per == "call":
                combos = [(a, b)]
            elif f.per == "call":
                combos = [(a, y) for y in b]
            elif g.per == "call":
                combos = [(x, b) for x in a]
            else:
                combos = list(zip(a, b))
            pairs |= {((f.name, x), (g.name, y)) for x, y in combos if x is not None and y is not None}
    return pairs


def possible_pairs(factors: tuple[Factor, ...], impossible: Mapping[Pair, str]) -> set[Pair]:
    """Every pair of levels of two factors, minus the impossible ones."""
    every = {((f.name, x), (g.name, y)) for i, f in enumerate(factors) for g in factors[i + 1:]
             for x in f.levels for y in g.levels}
    return every - set(impossible)


# ---------------------------------------------------------------- shared vocabularies
T_CLASSES = ("T = 1", "2 <= T < 24", "T >= 24")
ROWS = ("one full row", "one padded row", "full rows", "padded rows of one length", "ragged with a full row",
        "ragged, none full")
SIGN_LEVELS = ("< 0", "= 0", "> 0")
CLIP_LEVELS = ("0.2", "other, < 0.5", ">= 0.5")
RATIO_LEVELS = ("ratio < e^-20", "e^-20 <= ratio < 1 - eps", "1 - eps < ratio < 1", "ratio = 1",
                "1 < ratio < 1 + eps", "1 + eps < ratio <= 3", "3 < ratio <= e^20", "ratio > e^20")


def t_class(T: int) -> str:
    return "T = 1" if T == 1 else ("T >= 24" if T >= LONG_T else "2 <= T < 24")


def rows_class(mask: torch.Tensor) -> str:
    """The layout of a (B, T) prefix mask's rows (ROWS)."""
    B, T = mask.shape
    lengths = mask.sum(1)
    full = lengths == T
    if B == 1:
        return ROWS[0] if bool(full.all()) else ROWS[1]
    if bool(full.all()):
        return ROWS[2]
    if lengths.unique().numel() == 1:
        return ROWS[3]
    return ROWS[4] if bool(full.any()) else ROWS[5]


# a row layout with padding needs T >= 2
T1_HAS_NO_PADDING: dict[Pair, str] = {
    (("T", "T = 1"), ("rows", rows)): "T = 1: a row's one token is generated, so there is no padding"
    for rows in ROWS[1:2] + ROWS[3:]}


def sign_class(x: float) -> str:
    return SIGN_LEVELS[0] if x < 0 else (SIGN_LEVELS[1] if x == 0 else SIGN_LEVELS[2])


def clip_class(eps: float) -> str:
    return "0.2" if eps == 0.2 else ("other, < 0.5" if eps < 0.5 else ">= 0.5")


def ratio_class(r: float, eps: float) -> Optional[str]:
    """The level of a ratio against the clip range [1 - eps, 1 + eps] (None exactly on a bound: a kink)."""
    if r == 1:
        return "ratio = 1"
    if r in (1 - eps, 1 + eps):
        return None
    uppers = (math.exp(-20), 1 - eps, 1, 1 + eps, 3, math.exp(20), math.inf)
    return next(level for level, upper in zip(RATIO_LEVELS[:3] + RATIO_LEVELS[4:], uppers)
                if r < upper or (upper in (3, math.exp(20)) and r == upper))


def tokens(a: dict, name: str) -> list[float]:
    """The generated tokens' values of argument `name`, row by row (every position when there is no mask)."""
    x = a[name].double()
    return (x[a["mask"].bool()] if "mask" in a else x.reshape(-1)).tolist()


def dtype_factor(first: str) -> Factor:
    """The call's dtype, read from its argument `first`."""
    return Factor("dtype", ("float32", "float64"), lambda a: str(a[first].dtype).replace("torch.", ""))


def t_factor(first: str) -> Factor:
    """The class of T, read from the (B, T) argument `first`."""
    return Factor("T", T_CLASSES, lambda a: t_class(a[first].shape[1]))


def rows_factor() -> Factor:
    """The layout of the call's `mask`."""
    return Factor("rows", ROWS, lambda a: rows_class(a["mask"]))
