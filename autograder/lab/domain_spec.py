"""One parameter's declared domain (grading.yaml `contract.F.domain.P`), read without torch (the config checks it).

Kinds: `tensor DIMS` (optionally `tensor DIMS in LO..HI`: its entries' range), `mask DIMS` (0s and 1s, the first
column 1), `prefix-mask DIMS` (each row's 1s a prefix of it: generated tokens, then padding), `float LO..HI`,
`int LO..HI`, `size L LO..HI` (an int that is the size letter L, drawn in LO..HI), `bool`, `choice A B ...` (words, or
numbers where they read as numbers: `choice 0.1 1 10`) (autograder/checks/domains.py and declared.py draw from them).
A dimension is a size letter, a number, or a product of them (`N*G`: N groups of G, one after another).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Mapping

KINDS = ("tensor", "mask", "prefix-mask", "float", "int", "size", "bool", "choice")


@dataclass(frozen=True)
class Parameter:
    """One parameter's declared values."""

    name: str
    kind: str                           # "tensor", "mask" (a prefix-mask too), "float", "int", "size", "bool", "choice"
    dims: tuple[str, ...] = ()          # a tensor's dimensions; a size's letter
    low: float = 0.0                    # a float's, int's or size's range; a tensor's entries' when `ranged`
    high: float = 1.0
    choices: tuple[str, ...] = ()      # a choice's values as written (its factor's levels): value_of reads each
    ranged: bool = False                # a tensor declared `in LO..HI` (else standard normal, or [-4, 4])
    prefix: bool = False                # a mask declared `prefix-mask`

    @classmethod
    def parse(cls, name: str, spec: str) -> "Parameter":
        kind, *rest = spec.split() or [""]
        if kind not in KINDS:
            raise ValueError(f"{name}: {spec!r}: the kind must be one of {', '.join(KINDS)}")
        if kind in ("tensor", "mask", "prefix-mask"):
            values = None
            if kind == "tensor" and "in" in rest:
                at = rest.index("in")
                rest, values = rest[:at], rest[at + 1:]
            dims = tuple(rest)
            if not dims or not all(all(f.isidentifier() or f.isdigit() for f in factors_of_dim(d)) for d in dims):
                raise ValueError(f"{name}: {spec!r}: give its dimensions, e.g. `{kind} B T` (or `{kind} N*G`)")
            if kind != "tensor":
                return cls(name, "mask", dims, prefix=kind == "prefix-mask")
            if values is None:
                return cls(name, kind, dims)
            low, high = _range(name, spec, values, "tensor B T in -40..0")
            return cls(name, kind, dims, low=low, high=high, ranged=True)
        if kind in ("float", "int"):
            low, high = _range(name, spec, rest, f"{kind} 1..4")
            return cls(name, kind, low=low, high=high)
        if kind == "size":
            if not rest or not rest[0].isidentifier():
                raise ValueError(f"{name}: {spec!r}: name its size letter and range, e.g. `size G 2..8`")
            low, high = _range(name, spec, rest[1:], "size G 2..8")
            if low < 1 or low != int(low) or high != int(high):
                raise ValueError(f"{name}: {spec!r}: a size's range is whole numbers from 1, e.g. `size G 2..8`")
            return cls(name, kind, (rest[0],), low=low, high=high)
        if kind == "choice" and not rest:
            raise ValueError(f"{name}: {spec!r}: list its values, e.g. `choice mean sum`")
        return cls(name, kind, choices=tuple(rest))


    def value_of(self, word: str) -> int | float | str:
        """A choice's value: the number a word reads as (`5` an int, `0.1` a float), else the word."""
        if re.fullmatch(r"[-+]?\d+", word):
            return int(word)
        return float(word) if re.fullmatch(r"[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?", word) else word

    def choice_values(self) -> list[int | float | str]:
        return [self.value_of(word) for word in self.choices]


def factors_of_dim(dim: str) -> list[str]:
    """A dimension's factors: `N*G` -> ["N", "G"], `T` -> ["T"]."""
    return dim.split("*")


def unit_width(p: Parameter, along: str) -> str | None:
    """What a unit along `along` holds of `p`: "" (one entry: `tensor L` along the letter L, `tensor B T` along the two
    letters `B T`), its group's letters ("K" of `tensor L*K`: entries i*K to (i+1)*K - 1), None (not a tensor of units
    along it: row_shared tells a row's entry)."""
    letters = tuple(along.split())
    if p.kind != "tensor":
        return None
    if len(letters) > 1:
        return "" if p.dims == letters else None
    if len(p.dims) != 1:
        return None
    first, *rest = factors_of_dim(p.dims[0])
    return "*".join(rest) if first == along else None


def row_shared(p: Parameter, along: str) -> bool:
    """`p` (declared `tensor B`) holds one entry per row of the units along `B T`, which the row's units share."""
    letters = along.split()
    return p.kind == "tensor" and len(letters) == 2 and p.dims == (letters[0],)


def dim_size(dim: str, sizes: Mapping[str, int]) -> int:
    """A dimension's size, its letters' sizes from `sizes`."""
    return math.prod(int(f) if f.isdigit() else sizes[f] for f in factors_of_dim(dim))


def _range(name: str, spec: str, words: list[str], example: str) -> tuple[float, float]:
    """LO..HI of a declaration (LO <= HI), else a ValueError showing `example`."""
    low, sep, high = "".join(words).partition("..")
    try:
        if sep and float(low) <= float(high):
            return float(low), float(high)
    except ValueError:
        pass
    raise ValueError(f"{name}: {spec!r}: give its range LO..HI, e.g. `{example}`")


KNOWN_VALUES_TITLE = "{function} on worked examples"  # the derived public check's title (autograder/checks/derived.py)


def derived_test_id(parts: dict[str, str], function: str, name: str) -> str:
    """The id of a check derived for `function` (parts: contract function -> its part): PART.NAME, or PART.F_NAME when
    the part holds several functions (autograder/checks/derived.py)."""
    part = parts[function]
    return f"{part}.{name}" if [f for f, p in parts.items() if p == part] == [function] else f"{part}.{function}_{name}"
