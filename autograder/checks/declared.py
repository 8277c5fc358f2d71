"""What a contract function's declared domain (grading.yaml `contract.F.domain`, autograder/lab/domain_spec.py) gives
its differential check without code: a hypothesis strategy over the whole domain, the domain's factors (factors.py)
with the pairs of levels no valid call has, and chosen examples from a pairwise covering array of them (covering.py).

    strategy(function)   -> a strategy of positional-argument tuples: dtype, sizes, values, masks, settings
    factors_of(function) -> (factors, impossible pairs)
    chosen(function)     -> one argument tuple per row of the covering array (both dtypes among them)
    confirmation_calls(function) -> the chosen examples as (args, kwargs) calls: the hints' confirmation inputs

Draws: sizes 1 to 4 (a letter a `size L LO..HI` parameter declares: in LO..HI); a tensor's entries in [-4, 4], or in
its declared range (`tensor DIMS in LO..HI`), with 0 and the bounds often; a mask's 0s and 1s with its first column
1, a prefix-mask's rows each a length of 1s then 0s; with `units`, each unit at levels drawn for it, or left as drawn.

Factors: `dtype`; per size letter L, `size L` is "1" or "2..4" (a declared `size` parameter: its range's thirds, or
each value of a range of at most 3); per mask, "all 1" or "some 0", per prefix-mask its rows' layout (LAYOUTS: all
full, padded to one length, ragged with a full row, ragged with none) (a mask whose last size is 1 has only its first
column, which is 1; one row is not ragged); per `float`/`int` range, its low, middle and high third (an int
range of at most 3 values: each value); per `bool`, False and True; per `choice`, each value (a number where the
word reads as one); with `units` declared, its per-unit factors (checks/units.py: a pair's margin...) and the pairs
of levels out of the domain's reach. A chosen example's masks are prefix masks (a valid `mask` too), its tensors
standard normal or uniform in their declared range; with `units`, each row holds up to 4 units, each set to its
levels (the others at random levels a unit beside the row's settings can hold).
"""

from __future__ import annotations

import functools
import math
import random
from typing import Any

import torch
from hypothesis import strategies as st

from autograder.checks.chosen import place_units
from autograder.checks.covering import Feasible, Row, covering_rows
from autograder.checks.domains import call_sizes, prefix_masks, uniform
from autograder.checks.factors import ROWS, Factor, Pair, dtype_factor, rows_class
from autograder.checks.strategies import DTYPES, bounded, floats
from autograder.checks.units import Units, declared_for
from autograder.lab import config
from autograder.lab.domain_spec import Parameter, dim_size, factors_of_dim

VALUES = 4.0          # |tensor entries| the strategy draws (0 and the bounds often: strategies.bounded)
SIZES = (1, 4)        # a size letter's values (as autograder/checks/domains.py draws them)
THIRDS = ("low third", "middle third", "high third")
# a prefix-mask's rows: all full; padded, all of one length; of several lengths, one of them full; none full
LAYOUTS = ("all 1", "one length, padded", "ragged, a row full", "ragged, none full")
_LAYOUT_OF = dict(zip(ROWS, (LAYOUTS[0], LAYOUTS[1], LAYOUTS[0], LAYOUTS[1], LAYOUTS[2], LAYOUTS[3])))  # factors.ROWS


def parameters(function: str) -> list[Parameter]:
    spec = config.current().contract[function]
    return [Parameter.parse(name, spec.domain[name]) for name in spec.parameters]


def letters(params: list[Parameter]) -> list[str]:
    """The size letters, in order of first use."""
    return list(dict.fromkeys(f for p in params for d in p.dims for f in factors_of_dim(d) if not f.isdigit()))


def size_parameter(params: list[Parameter], letter: str) -> Parameter | None:
    """The `size` parameter that is the letter's value, if one is declared."""
    return next((p for p in params if p.kind == "size" and p.dims[0] == letter), None)


def size_range(params: list[Parameter], letter: str) -> tuple[int, int]:
    p = size_parameter(params, letter)
    return (int(p.low), int(p.high)) if p is not None else SIZES


# ---------------------------------------------------------------- the strategy
def strategy(function: str) -> st.SearchStrategy[tuple]:
    """Argument tuples of `function` drawn from its declared domain (the domain is in the strategy's repr, so a
    changed domain draws anew: checks/examples.py keys the shipped draws by it)."""
    spec = config.current().contract[function]
    return declared_call(function, tuple(spec.domain[p] for p in spec.parameters), repr(spec.units))


@st.composite
def declared_call(draw, function: str, domain: tuple[str, ...], units_declared: str) -> tuple:
    """(`domain` and `units_declared` key the shipped draws: see strategy.) With `units`, each unit is put at levels
    drawn for it, or left as drawn (checks/units.py), so that the draws reach the levels too."""
    params = parameters(function)
    dtype = draw(st.sampled_from(DTYPES))
    sizes = {letter: draw(st.integers(*size_range(params, letter))) for letter in letters(params)}
    args = tuple(draw(_values(p, sizes, dtype)) for p in params)
    declared_units = declared_for(function)
    if declared_units is None:
        return args
    named = dict(zip((p.name for p in params), args))
    n = declared_units.unit_count(named)
    levels = st.fixed_dictionaries({f.name: st.sampled_from([level.text for level in f.levels])
                                    for f in declared_units.declared})
    wanted = draw(st.lists(st.one_of(st.none(), levels), min_size=n, max_size=n))
    declared_units.put_some_units(named, wanted, random.Random(draw(st.integers(0, 2**31 - 1))), dtype)
    return tuple(named[p.name] for p in params)


def _values(p: Parameter, sizes: dict[str, int], dtype: torch.dtype) -> st.SearchStrategy:
    if p.kind in ("tensor", "mask"):
        shape = _shape(p, sizes)
        n = int(torch.Size(shape).numel())
        if p.kind == "mask" and p.prefix:
            rows = n // shape[-1] if shape else 1
            return st.lists(st.integers(1, shape[-1] if shape else 1), min_size=rows, max_size=rows).map(
                lambda lengths: prefix_masks(lengths, shape, dtype))
        if p.kind == "mask":
            return st.lists(st.booleans(), min_size=n, max_size=n).map(lambda bits: _as_mask(bits, shape, dtype))
        low, high = (p.low, p.high) if p.ranged else (-VALUES, VALUES)
        return st.lists(bounded(low, high), min_size=n, max_size=n).map(
            lambda xs: torch.tensor(xs, dtype=torch.float64).reshape(shape).to(dtype))
    if p.kind == "float":  # a setting: any float of the range (its bounds need not be float32's), the bounds often
        inside = floats(p.low, p.high)
        return st.one_of(inside, inside, inside, st.sampled_from((p.low, p.high)))
    if p.kind == "int":
        return st.integers(int(p.low), int(p.high))
    if p.kind == "size":
        return st.just(sizes[p.dims[0]])
    if p.kind == "bool":
        return st.booleans()
    return st.sampled_from(p.choice_values())


def _shape(p: Parameter, sizes: dict[str, int]) -> tuple[int, ...]:
    return tuple(dim_size(d, sizes) for d in p.dims)


def _as_mask(bits: list[bool], shape: tuple[int, ...], dtype: torch.dtype) -> torch.Tensor:
    mask = torch.tensor(bits, dtype=dtype).reshape(shape)
    if mask.dim():
        mask[..., 0] = 1.0  # no row is all padding (autograder/checks/domains.py)
    return mask


# ---------------------------------------------------------------- factors
def factors_of(function: str) -> tuple[tuple[Factor, ...], dict[Pair, str]]:
    """The factors of `function`'s declared domain and the pairs of their levels no valid call has."""
    params = parameters(function)
    tensors = [p for p in params if p.kind in ("tensor", "mask")]
    made: list[Factor] = [dtype_factor(tensors[0].name)] if tensors else []
    for letter in letters(params):
        if size_parameter(params, letter) is None:  # else its parameter's factor (below)
            made.append(_size_factor(letter, params))
    impossible: dict[Pair, str] = {}
    for p in params:
        if p.kind == "mask" and p.dims[-1] != "1":
            levels: tuple[str, ...] = LAYOUTS if p.prefix else ("all 1", "some 0")
            made.append(Factor(p.name, levels, functools.partial(_parameter_level, p)))
            if p.dims[-1].isidentifier() and size_parameter(params, p.dims[-1]) is None:
                for level in levels[1:]:
                    impossible[((f"size {p.dims[-1]}", "1"), (p.name, level))] = \
                        f"a {p.name} of one column is that column, which is 1"
            rows = p.dims[0] if p.prefix and len(p.dims) == 2 else ""
            if rows.isidentifier() and size_parameter(params, rows) is None:
                for level in LAYOUTS[2:]:
                    impossible[((f"size {rows}", "1"), (p.name, level))] = f"one row of {p.name} is not ragged"
        elif p.kind in ("float", "int", "size", "bool", "choice"):
            levels = {"bool": ("False", "True"), "choice": p.choices}.get(p.kind) or _range_levels(p)
            made.append(Factor(p.name, levels, functools.partial(_parameter_level, p)))
    declared_units = declared_for(function)
    if declared_units is not None:
        made += declared_units.unit_factors()
        impossible.update(declared_units.out_of_reach())
    return tuple(made), impossible


def _size_factor(letter: str, params: list[Parameter]) -> Factor:
    """`size LETTER`: "1" or "2..4", the letter's value in a call (domains.call_sizes)."""
    return Factor(f"size {letter}", ("1", "2..4"), lambda a: "1" if call_sizes(params, a)[letter] == 1 else "2..4")


def _parameter_level(p: Parameter, arguments: dict) -> str:
    """The level of parameter `p`'s value in a call (argument name -> value)."""
    value = arguments[p.name]
    if p.kind == "mask" and p.prefix:
        return _layout(value)
    if p.kind == "mask":
        return "all 1" if bool(value.all()) else "some 0"
    if p.kind == "bool":
        return str(bool(value))
    if p.kind == "choice":
        return next((word for word in p.choices if p.value_of(word) == value), str(value))
    return _range_level(p, value)


def _layout(mask: torch.Tensor) -> str:
    """The LAYOUTS level of a prefix-mask (its rows: every index but the last), from factors.rows_class's."""
    return _LAYOUT_OF[rows_class(mask.reshape(-1, mask.shape[-1]))]


def _int_values(p: Parameter) -> list[int]:
    return list(range(int(p.low), int(p.high) + 1))


def _whole(p: Parameter) -> bool:
    return p.kind in ("int", "size")


def _range_levels(p: Parameter) -> tuple[str, ...]:
    if _whole(p) and len(_int_values(p)) <= 3:
        return tuple(str(v) for v in _int_values(p))
    return THIRDS


def _range_level(p: Parameter, value: Any) -> str:
    if _whole(p) and len(_int_values(p)) <= 3:
        return str(int(value))
    width = (p.high - p.low) / 3
    return THIRDS[min(2, max(0, int((float(value) - p.low) // width)))] if width > 0 else THIRDS[1]


# ---------------------------------------------------------------- chosen examples
def chosen(function: str) -> list[tuple]:
    """One argument tuple per row of a pairwise covering array of `function`'s factors (deterministic)."""
    params = parameters(function)
    factors, impossible = factors_of(function)
    declared_units = declared_for(function)
    feasible = _feasible(function, declared_units) if declared_units is not None else None

    def capacity(levels: dict[str, str]) -> int:  # units a row lists: none without `units`, 1 for a size of 1
        if declared_units is None:
            return 0
        return 1 if levels.get(f"size {_first(declared_units)}") == "1" else SIZES[1]
    rows = covering_rows(factors, impossible, capacity, feasible=feasible)
    return [_example(function, params, row, i, (factors, impossible), declared_units, feasible)
            for i, row in enumerate(rows)]


def _feasible(function: str, declared_units: Units) -> Feasible:
    """Whether a unit with some levels can be made beside a row's per-call levels (tried with seeded draws of the
    row's settings; memoised by the levels of the settings its factors read)."""
    names = declared_units.settings_read()

    @functools.lru_cache(maxsize=None)
    def tried(levels: tuple, unit: tuple) -> bool:
        rng = random.Random(f"{function} feasible {levels} {unit}")
        return any(declared_units.can_hold({p.name: _setting(p, dict(levels), rng) for p in declared_units.settings},
                                            dict(unit), rng) for _ in range(10))
    return lambda levels, unit: tried(tuple(sorted((k, v) for k, v in levels.items() if k in names)),
                                      tuple(sorted(unit.items())))


def _setting(p: Parameter, levels: dict[str, str], rng: random.Random) -> Any:
    """A value of the setting `p` at its level in `levels` (the middle third of a range when it has none)."""
    if p.kind in ("float", "int", "size"):
        return _in_level(p, levels.get(p.name, THIRDS[1]), rng)
    if p.kind == "bool":
        return levels.get(p.name, "False") == "True"
    return p.value_of(levels.get(p.name, p.choices[0]))


def confirmation_calls(function: str) -> list[tuple[tuple, dict]]:
    """The chosen examples of `function`'s declared domain as (args, kwargs) calls ([] without a domain): the inputs
    on which a hint's mistake must be the only one answering as the submission does (judge/diagnosis.py)."""
    return [(args, {}) for args in chosen(function)] if config.current().contract[function].domain else []


def _example(function: str, params: list[Parameter], row: Row, index: int,
             factors: tuple[tuple[Factor, ...], dict[Pair, str]], declared_units: Units | None = None,
             feasible: Feasible | None = None) -> tuple:
    """The chosen example of a covering array's row: its per-call levels, and its units (declared `units`) at theirs
    where it lists any (the other units at random possible levels)."""
    levels = row.levels
    rng = random.Random(f"{function} chosen {index}")
    g = torch.Generator().manual_seed(rng.randrange(2**31))
    dtype = torch.float32 if levels.get("dtype") == "float32" else torch.float64
    sizes = {letter: 1 if levels.get(f"size {letter}") == "1" else rng.randint(2, SIZES[1])
             for letter in letters(params) if size_parameter(params, letter) is None}
    sizes.update({p.dims[0]: int(_setting(p, levels, rng)) for p in params if p.kind == "size"})
    if declared_units is not None and levels.get(f"size {_first(declared_units)}") != "1":
        sizes[_first(declared_units)] = max(sizes[_first(declared_units)], len(row.units))
    for p in params:  # room for the layout: two rows to be ragged, and a length below T - 1 beside T - 1
        layout = levels.get(p.name, "") if p.kind == "mask" and p.prefix and len(p.dims) == 2 else ""
        if layout.startswith("ragged") and p.dims[0] in sizes:
            sizes[p.dims[0]] = max(sizes[p.dims[0]], 2)
        if layout == LAYOUTS[3] and p.dims[1] in sizes:
            sizes[p.dims[1]] = max(sizes[p.dims[1]], 3)
    args: list[Any] = []
    for p in params:
        if p.kind == "tensor" and p.ranged:
            args.append(uniform(p, _shape(p, sizes), g, dtype))
        elif p.kind == "tensor":
            args.append(torch.randn(_shape(p, sizes), generator=g, dtype=torch.float64).to(dtype))
        elif p.kind == "mask" and p.prefix:
            args.append(_chosen_layout(_shape(p, sizes), levels.get(p.name, LAYOUTS[0]), rng, dtype))
        elif p.kind == "mask":
            args.append(_chosen_mask(_shape(p, sizes), levels.get(p.name) == "some 0", rng, dtype))
        elif p.kind == "size":
            args.append(sizes[p.dims[0]])
        else:
            args.append(_setting(p, levels, rng))
    if declared_units is not None:
        named = dict(zip((p.name for p in params), args))
        positions = declared_units.positions(named)
        rows = [at[0] for at in positions] if " " in declared_units.along else None
        declared_units.put_units(named, place_units(*factors, levels, row.units, len(positions), rng, feasible, rows,
                                                    declared_units.shared_factors()), rng, dtype)
    return tuple(args)


def _first(declared_units: Units) -> str:
    """The letter of the units' first index (along `B T`: the rows, each holding at most one designated unit)."""
    return declared_units.along.split()[0]


def _chosen_mask(shape: tuple[int, ...], padded: bool, rng: random.Random, dtype: torch.dtype) -> torch.Tensor:
    mask = torch.ones(shape, dtype=dtype)
    if padded and shape and shape[-1] > 1:
        flat = mask.reshape(-1, shape[-1])
        for row in flat:  # each row: a random prefix kept, at least the first column; one row surely padded
            row[rng.randint(1, shape[-1]):] = 0.0
        flat[rng.randrange(flat.shape[0]), -1] = 0.0
    return mask


def _chosen_layout(shape: tuple[int, ...], layout: str, rng: random.Random, dtype: torch.dtype) -> torch.Tensor:
    """A prefix-mask of the LAYOUTS level (its sizes leave room: _example)."""
    T = shape[-1] if shape else 1
    rows = math.prod(shape[:-1])
    if layout == LAYOUTS[0] or T == 1:
        lengths = [T] * rows
    elif layout == LAYOUTS[1]:
        lengths = [rng.randint(1, T - 1)] * rows
    else:  # ragged: a full row (or one of T - 1) beside a shorter one, the others anything of the level
        top = T if layout == LAYOUTS[2] else T - 1
        lengths = [top, rng.randint(1, top - 1)] + [rng.randint(1, top) for _ in range(rows - 2)]
        rng.shuffle(lengths)
    return prefix_masks(lengths, shape, dtype)


def _in_level(p: Parameter, level: str, rng: random.Random) -> float | int:
    if _whole(p) and level not in THIRDS:
        return int(level)
    k = THIRDS.index(level)
    width = (p.high - p.low) / 3
    if _whole(p):
        values = [v for v in _int_values(p) if _range_level(p, v) == level]
        return rng.choice(values or _int_values(p))
    value = round(p.low + width * (k + rng.uniform(0.1, 0.9)), 3)
    return min(p.high, max(p.low, value))
