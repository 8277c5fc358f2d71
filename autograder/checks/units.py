"""A declared domain's per-unit factors (grading.yaml `contract.F.units`; autograder/lab/unit_spec.py reads them):
their engine factors, the pairs of levels no call reaches, and units put at chosen levels.

    units = declared_for(function)          # None where the function declares none
    units.unit_factors()                    # one factors.Factor per declared factor, per unit (a list per call)
    units.out_of_reach()                    # pairs (choice setting's value, unit level) out of the value's reach
    units.can_hold(settings, levels, rng)   # whether a unit at these levels is found beside these settings
    units.put_units(args, levels, rng, dtype)  # set the unit-sized tensors' entries so that unit i is at levels[i]

A unit is put at its levels one factor at a time, in the declared order: its unit-sized entries are drawn on a grid,
then each factor's `set_by` entry is solved for (the value is linear in it) so that the value falls inside the
level, away from the level's ends by 5% of its width, or on the level's point; every factor's level is checked again
on the entries as the call's dtype holds them. The grid is 2^(e - 22) for a range within +-2^e (2^-14 for -200..0):
sums of four entries are exact in float32, so a level such as `z = 0` holds in any order of summation. A group's
entries (`tensor L*K`) are drawn anywhere in their range, not on the grid (a float32 mean of equal entries may then
round, as real rewards do), and a group set_by is spread about its mean: entries m + t (x - m), t >= 0 solved for
(the value must be linear in t, as its std is; t = 0: K equal entries, in any dtype). Units along `B T` are the
generated tokens (where the mask is 1), row by row; a row's shared entry (a `tensor B`) is set by the
first of its tokens put or left, and its later tokens keep it (a factor it sets is then at the row's level).
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass
from typing import Any, Callable

import torch

from autograder.checks.domains import call_sizes
from autograder.checks.factors import Factor, Pair
from autograder.lab import config
from autograder.lab.domain_spec import Parameter, row_shared, unit_width
from autograder.lab.unit_spec import Level, UnitFactor, bounds, evaluate, names, parse_factor

TRIES = 200      # draws of one unit before its levels are declared out of reach
MARGIN = 0.05    # of a level's width (inside the reach): kept clear of its ends
VALUES = 4.0     # an unranged tensor's entries: in [-VALUES, VALUES] (as declared.py draws them)
GROUP = 3        # a group's entries where only the settings are known (can_hold)
Entries = dict[str, Any]  # parameter -> a unit's entry (a float), or its group's entries (a tuple of floats)


@dataclass(frozen=True)
class Units:
    function: str
    along: str                          # the size letter (unit i is index i of it), or `B T` (units are positions)
    declared: tuple[UnitFactor, ...]
    tensors: tuple[Parameter, ...]      # the parameters of the unit's size (`tensor L`, `tensor L*K`, `tensor B T`)
    settings: tuple[Parameter, ...]     # float, int, bool and choice parameters
    params: tuple[Parameter, ...]       # all the function's (a call's sizes are read from them)
    mask: str = ""                      # along `B T`: the parameter whose 1s are the units ("": every position)

    def unit_factors(self) -> tuple[Factor, ...]:
        return tuple(Factor(f.name, tuple(level.text for level in f.levels), _levels_of(self, f), per=self.along)
                     for f in self.declared)

    def positions(self, arguments: dict) -> list[tuple[int, ...]]:
        """Each unit's index: (i,) along one letter; (b, t) along `B T`, row by row, where the mask is 1."""
        if " " not in self.along:
            return [(i,) for i in range(call_sizes(list(self.params), arguments)[self.along])]
        if self.mask:
            return [tuple(ix) for ix in arguments[self.mask].detach().nonzero().tolist()]
        first = next(p for p in self.tensors if not self.is_shared(p))
        return [tuple(ix) for ix in torch.ones(arguments[first.name].shape).nonzero().tolist()]

    def unit_envs(self, arguments: dict) -> list[dict[str, Any]]:
        """Each unit's entries and the call's settings, by parameter name (float64 numbers; a group's, a tuple)."""
        settings: dict[str, Any] = {p.name: _setting_value(arguments[p.name]) for p in self.settings}
        positions = self.positions(arguments)
        values = {p.name: arguments[p.name].detach().double() for p in self.tensors}
        grouped = {p.name: values[p.name].reshape(len(positions), -1) for p in self.tensors if self.is_group(p)}
        return [{**settings, **{name: tuple(grouped[name][i].tolist()) if name in grouped
                                else float(x[at[:x.dim()]]) for name, x in values.items()}}
                for i, at in enumerate(positions)]

    def unit_count(self, arguments: dict) -> int:
        return len(self.positions(arguments))

    def is_group(self, p: Parameter) -> bool:
        """`p` holds several entries per unit (`tensor L*K`)."""
        return bool(unit_width(p, self.along))

    def is_shared(self, p: Parameter) -> bool:
        """`p` holds one entry per row of units along `B T` (`tensor B`), which the row's units share."""
        return row_shared(p, self.along)

    def settings_read(self) -> set[str]:
        """The settings some factor reads, in its expression or its levels' bounds."""
        read = {n for f in self.declared for node in (f.expression, *(level.node for level in f.levels))
                for n in names(node)}
        return {p.name for p in self.settings} & read

    def shared_factors(self) -> tuple[str, ...]:
        """The factors set by a row's shared entry: the row's units are at one level of each."""
        shared = {p.name for p in self.tensors if self.is_shared(p)}
        return tuple(f.name for f in self.declared if f.set_by in shared)

    def out_of_reach(self) -> dict[Pair, str]:
        """(choice setting = value, factor's level) pairs that no unit reaches: by interval arithmetic over the
        declared ranges, for levels whose bounds name no other setting."""
        found: dict[Pair, str] = {}
        ranges = {p.name: _span(p) for p in (*self.tensors, *self.settings)}
        for s in (p for p in self.settings if p.kind == "choice"):
            for word in s.choices:
                value = s.value_of(word)
                if not isinstance(value, (int, float)):
                    continue
                for f in self.declared:
                    lo, hi = bounds(f.expression, {**ranges, s.name: (float(value), float(value))})
                    for level in f.levels:
                        try:
                            pieces = level.where_met({s.name: float(value)})
                        except KeyError:  # its bounds name another setting: not decided here
                            continue
                        if not any(_meets(piece, lo, hi) for piece in pieces):
                            found[((s.name, word), (f.name, level.text))] = \
                                f"{s.name} = {word}: {f.name} lies in [{lo:g}, {hi:g}]"
        return found

    def put_units(self, arguments: dict, levels: list[dict[str, str]], rng: random.Random, dtype: torch.dtype) -> None:
        """Set the unit-sized tensors of `arguments` (name -> value, changed in place): unit i at levels[i] (its
        row's shared entries as the row's first unit set them: chosen.place_units gives a row's units one level of
        a factor they set)."""
        self._put(arguments, levels, lambda settings, wanted, widths, fixed:
                  self._unit(settings, wanted, rng, dtype, widths, fixed))

    def put_some_units(self, arguments: dict, levels: list[dict[str, str] | None], rng: random.Random,
                       dtype: torch.dtype) -> None:
        """put_units for the units whose levels are given (None: left as drawn), each where a few draws find it (else
        left as drawn): hypothesis's draws (declared.strategy) reach the levels too."""
        self._put(arguments, levels, lambda settings, wanted, widths, fixed:
                  self._draw(settings, wanted, rng, dtype, TRIES // 10, widths, fixed) if wanted else None)

    def _put(self, arguments: dict, levels: list, find: Callable[[dict, Any, dict[str, int], Entries],
                                                              Entries | None]) -> None:
        """Unit i's entries set to what `find(settings, levels[i], widths, fixed)` gives (None: left as they are);
        `fixed`: its row's shared entries, once an earlier unit of the row is put or left."""
        settings = {p.name: _setting_value(arguments[p.name]) for p in self.settings}
        positions = self.positions(arguments)
        n = len(positions)
        widths = {p.name: 1 if self.is_shared(p) else arguments[p.name].numel() // n for p in self.tensors}
        rows: dict[int, Entries] = {}
        for i, (at, wanted) in enumerate(zip(positions, levels)):
            entries = find(settings, wanted, widths, rows.get(at[0], {}))
            if entries is None:
                entries = {p.name: float(arguments[p.name].detach()[at[:1]]) for p in self.tensors if self.is_shared(p)}
            for p in self.tensors:
                held, tensor = entries.get(p.name), arguments[p.name]
                if self.is_shared(p):
                    rows.setdefault(at[0], {})[p.name] = held
                if held is None:
                    continue
                if self.is_group(p):
                    tensor.reshape(n, -1)[i] = torch.tensor(held, dtype=tensor.dtype)
                else:
                    tensor[at[:tensor.dim()]] = held

    def can_hold(self, settings: dict, wanted: dict[str, str], rng: random.Random) -> bool:
        """Whether a unit at the `wanted` levels (of some factors) is found in a few draws beside `settings`."""
        widths = {p.name: GROUP if self.is_group(p) else 1 for p in self.tensors}
        return self._draw(settings, wanted, rng, torch.float64, TRIES // 10, widths, {}) is not None

    def _unit(self, settings: dict, wanted: dict[str, str], rng: random.Random, dtype: torch.dtype,
              widths: dict[str, int], fixed: Entries) -> Entries:
        held = self._draw(settings, wanted, rng, dtype, TRIES, widths, fixed)
        if held is None:
            row = f" and its row's {fixed}" if fixed else ""
            raise ValueError(f"{self.function}: no unit at {wanted} beside {settings}{row} in {TRIES} draws "
                             "(declare the pair impossible, or widen the domain)")
        return held

    def _draw(self, settings: dict, wanted: dict[str, str], rng: random.Random, dtype: torch.dtype,
              tries: int, widths: dict[str, int], fixed: Entries) -> Entries | None:
        """A unit's entries (as `dtype` holds them) at the `wanted` levels of the factors it names, else None; the
        `fixed` entries (its row's shared ones) are kept, and a factor they set is at whatever level they give."""
        wanted = {f.name: wanted[f.name] for f in self.declared if f.name in wanted and f.set_by not in fixed}
        for _ in range(tries):
            entries: Entries = {p.name: fixed[p.name] if p.name in fixed else
                                tuple(rng.uniform(*_span(p)) for _ in range(widths[p.name]))
                                if self.is_group(p) else _on_grid(p, rng.uniform(*_span(p))) for p in self.tensors}
            for f in self.declared:
                if f.name not in wanted:
                    continue
                level = next(x for x in f.levels if x.text == wanted[f.name])
                p = self._parameter(f.set_by)
                solve = _spread if self.is_group(p) else _solve
                if not solve(f, level, p, {**settings, **entries}, entries, rng):
                    break
            else:
                held = {k: tuple(torch.tensor(v, dtype=dtype).tolist()) if isinstance(v, tuple)
                        else float(torch.tensor(v, dtype=dtype)) for k, v in entries.items()}
                if all(f.unit_level({**settings, **held}) == wanted[f.name] for f in self.declared if f.name in wanted):
                    return held
        return None

    def _parameter(self, name: str) -> Parameter:
        return next(p for p in self.tensors if p.name == name)


def declared_for(function: str) -> Units | None:
    """The per-unit factors `function` declares, None without them."""
    spec = config.current().contract[function]
    if not spec.units:
        return None
    params = [Parameter.parse(name, spec.domain[name]) for name in spec.parameters]
    along = spec.units.along
    tensors = tuple(p for p in params if unit_width(p, along) is not None or row_shared(p, along))
    groups = tuple(p.name for p in tensors if unit_width(p, along))
    shared = tuple(p.name for p in tensors if row_shared(p, along))
    settings = tuple(p for p in params if p.kind in ("float", "int", "bool", "choice"))
    made = tuple(parse_factor(name, f.expression, f.set_by, f.levels, tuple(p.name for p in tensors),
                              tuple(p.name for p in settings), groups, shared)
                 for name, f in spec.units.factors.items())
    mask = spec.mask if " " in along and spec.mask in spec.domain else ""
    return Units(function, along, made, tensors, settings, tuple(params), mask)


def _levels_of(units: Units, f: UnitFactor):
    return lambda a: [f.unit_level(env) for env in units.unit_envs(a)]


def _setting_value(value: Any) -> Any:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else value


def _span(p: Parameter) -> tuple[float, float]:
    if p.kind == "tensor":
        return (p.low, p.high) if p.ranged else (-VALUES, VALUES)
    if p.kind in ("float", "int"):
        return p.low, p.high
    if p.kind == "bool":
        return 0.0, 1.0
    numbers = [float(v) for v in p.choice_values() if isinstance(v, (int, float))]
    return (min(numbers), max(numbers)) if numbers else (0.0, 0.0)


def _step(p: Parameter) -> float:
    """The grid of the chosen entries of `p` (the module docstring)."""
    top = max(abs(x) for x in _span(p)) or 1.0
    return 2.0 ** (math.ceil(math.log2(top)) - 22)


def _on_grid(p: Parameter, x: float) -> float:
    step = _step(p)
    low, high = _span(p)
    return min(math.floor(high / step), max(math.ceil(low / step), round(x / step))) * step


def _meets(piece: tuple[float, float], lo: float, hi: float) -> bool:
    a, b = piece
    return lo <= a <= hi if a == b else a < hi and b > lo


def _solve(f: UnitFactor, level: Level, p: Parameter, env: dict, entries: Entries, rng: random.Random) -> bool:
    """Set entries[f.set_by] so that f's value is at `level` (False: out of reach for the other entries)."""
    low, high = _span(p)
    x_low = float(evaluate(f.expression, {**env, p.name: low}))
    x_high = float(evaluate(f.expression, {**env, p.name: high}))
    x = _target(level, env, x_low, x_high, rng)
    if x is None:
        return False
    entries[p.name] = env[p.name] = _on_grid(p, low + (x - x_low) * (high - low) / (x_high - x_low))
    return True


def _spread(f: UnitFactor, level: Level, p: Parameter, env: dict, entries: Entries, rng: random.Random) -> bool:
    """Set the group entries[f.set_by] to m + t (x - m) (m: their mean, t >= 0 as far as their range allows) so that
    f's value is at `level` (False: out of reach)."""
    drawn = entries[p.name]
    m = math.fsum(drawn) / len(drawn)
    offsets = [x - m for x in drawn]
    low, high = _span(p)
    t_max = min([(high - m) / d for d in offsets if d > 0] + [(low - m) / d for d in offsets if d < 0], default=0.0)

    def value(t: float) -> float:
        return float(evaluate(f.expression, {**env, p.name: tuple(m + t * d for d in offsets)}))
    x0, x1 = value(0.0), value(t_max)
    x = _target(level, env, x0, x1, rng)
    if x is None:
        return False
    t = (x - x0) / (x1 - x0) * t_max
    entries[p.name] = env[p.name] = tuple(m + t * d for d in offsets)
    return True


def _target(level: Level, env: dict, x_low: float, x_high: float, rng: random.Random) -> float | None:
    """A value at `level` between x_low and x_high (the factor's values at the ends of its set_by's reach), 5% of the
    level's width inside its ends, or its point; None where the reach meets no part of it."""
    if x_low == x_high:
        return None
    reach = (min(x_low, x_high), max(x_low, x_high))
    pieces = [piece for piece in level.where_met(env) if _meets(piece, *reach)]
    spans = [piece for piece in pieces if piece[0] < piece[1]]
    if spans:
        a, b = rng.choice(spans)
        a, b = max(a, reach[0]), min(b, reach[1])
        return rng.uniform(a + MARGIN * (b - a), b - MARGIN * (b - a))
    return rng.choice(pieces)[0] if pieces else None
