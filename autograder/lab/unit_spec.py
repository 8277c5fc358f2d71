"""A contract function's per-unit factors (grading.yaml `contract.F.units`), read without torch (config checks them).

    units:
      along: P                                   # a unit is one index of the size letter P (a pair of answers)
      factors:
        z: {expression: beta * ((policy_chosen - ref_chosen) - (policy_rejected - ref_rejected)),
            set_by: policy_chosen,
            levels: ["z < -100", "-100 <= z < -15", "0 < |z| <= 1e-3", "z = 0", "|z - 1 / beta| <= 1e-3", ...]}

`expression` is arithmetic (+ - * /, |x|, log(x), exp(x), numbers) over the function's parameters: a parameter of the
unit's size is its entry at the unit's index, a setting (float, int, bool, choice) its value. A parameter with several
entries per unit (declared `tensor L*K`: unit i is entries i*K to (i+1)*K - 1, a group) is read through `mean(P)` or
`std(P)` (the sample std, divided by K - 1, as torch.std). Units along two letters (`along: B T`: a unit is one
position (b, t) where the mask is 1, a generated token) read a `tensor B T` at their position and a `tensor B` at their
row: one entry shared by the row's units (`shared`), which only a factor of shared entries and settings may set.
Each level is a condition on the factor
(named by the factor, alone, as |NAME| or as |NAME - E|) against arithmetic of the settings: `A < z <= B`,
`z = 0`, `|h - 1 / (2 * beta)| <= 1e-3`. A unit's level is the first whose condition its value meets. `set_by` is the
parameter the engine sets to put a unit at a level: the expression must be linear in it, or for a group in the spread
of its entries about their mean (autograder/checks/units.py draws the units of the chosen examples so).
"""

from __future__ import annotations

import ast
import math
import re
from dataclasses import dataclass
from typing import Callable, Mapping

Interval = tuple[float, float]  # [low, high], either end infinite
Piece = tuple[float, float]     # an open interval (low < high), or a point (low == high)
_BINARY: dict[type, Callable[[float, float], float]] = {
    ast.Add: lambda a, b: a + b, ast.Sub: lambda a, b: a - b, ast.Mult: lambda a, b: a * b,
    ast.Div: lambda a, b: _divide(a, b)}
_COMPARE: dict[type, Callable[[float, float], bool]] = {
    ast.Lt: lambda a, b: a < b, ast.LtE: lambda a, b: a <= b, ast.Gt: lambda a, b: a > b,
    ast.GtE: lambda a, b: a >= b, ast.Eq: lambda a, b: a == b}


def _divide(a, b):
    """a / b, as IEEE does it for numbers (x / 0 is +-inf, 0 / 0 nan), as torch does it for tensors."""
    if isinstance(b, (int, float)) and b == 0 and isinstance(a, (int, float)):
        return math.copysign(math.inf, a) * math.copysign(1.0, b) if a != 0 else math.nan
    return a / b


def _python(text: str) -> str:
    """`|E|` as abs(E), a lone `=` as ==."""
    return re.sub(r"(?<![<>=!])=(?!=)", "==", re.sub(r"\|([^|]+)\|", r"abs(\1)", text))


AGGREGATES: dict[str, Callable[[tuple[float, ...]], float]] = {
    "mean": lambda v: math.fsum(v) / len(v),
    "std": lambda v: math.sqrt(math.fsum((x - math.fsum(v) / len(v)) ** 2 for x in v) / (len(v) - 1))
    if len(v) > 1 else math.nan}


def _log(x):
    """log, as IEEE does it (log 0 = -inf, log of a negative nan), of a number or a tensor."""
    if not isinstance(x, (int, float)):
        return x.log()
    return math.log(x) if x > 0 else (-math.inf if x == 0 else math.nan)


def _exp(x):
    """exp, +inf where a float overflows, of a number or a tensor."""
    if not isinstance(x, (int, float)):
        return x.exp()
    return math.exp(x) if x < 709 else math.inf


ELEMENTWISE: dict[str, Callable] = {"abs": abs, "log": _log, "exp": _exp}
FUNCTIONS = (*ELEMENTWISE, *AGGREGATES)


def names(node: ast.AST) -> set[str]:
    """The names `node` reads (the functions it calls aside)."""
    called = {id(n.func) for n in ast.walk(node) if isinstance(n, ast.Call)}
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and id(n) not in called}


def aggregated(node: ast.AST) -> set[str]:
    """The names `node` reads through mean(P) or std(P)."""
    return {n.args[0].id for n in ast.walk(node) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)
            and n.func.id in AGGREGATES and isinstance(n.args[0], ast.Name)}


_ALLOWED = (ast.Expression, ast.Tuple, ast.BinOp, ast.UnaryOp, ast.USub, ast.UAdd, ast.Name, ast.Load, ast.Call,
            ast.Add, ast.Sub, ast.Mult, ast.Div)


def _arithmetic(node: ast.AST, where: str) -> None:
    """Raise ValueError unless `node` is arithmetic of names and numbers (+ - * /, unary -, abs(E), log(E), exp(E),
    mean(P), std(P))."""
    for n in ast.walk(node):
        if isinstance(n, ast.Call):
            if not (isinstance(n.func, ast.Name) and n.func.id in FUNCTIONS and len(n.args) == 1 and not n.keywords):
                raise ValueError(f"{where}: only |E|, log(E), exp(E), mean(P) and std(P) are functions here")
            if n.func.id in AGGREGATES and not isinstance(n.args[0], ast.Name):
                raise ValueError(f"{where}: {ast.unparse(n)!r}: mean and std take a parameter's name")
        elif isinstance(n, ast.BinOp) and type(n.op) not in _BINARY:
            raise ValueError(f"{where}: only + - * / are operators here")
        elif isinstance(n, ast.Constant):
            if not isinstance(n.value, (int, float)) or isinstance(n.value, bool):
                raise ValueError(f"{where}: {ast.unparse(n)!r} is not a number")
        elif not isinstance(n, _ALLOWED):
            raise ValueError(f"{where}: {ast.unparse(n)!r} is not arithmetic of parameters and numbers")


class _Rename(ast.NodeTransformer):
    """The factor's own name as the variable __x__."""

    def __init__(self, name: str):
        self.name = name

    def visit_Name(self, node: ast.Name) -> ast.Name:
        return ast.Name("__x__", ast.Load()) if node.id == self.name else node


def _constant(node: ast.Constant) -> float:
    assert isinstance(node.value, (int, float))  # _arithmetic let only numbers through
    return float(node.value)


def evaluate(node: ast.AST, env: Mapping[str, object]):
    """The arithmetic `node` with names from `env` (floats, or tensors: the operators are theirs)."""
    if isinstance(node, ast.Expression):
        return evaluate(node.body, env)
    if isinstance(node, ast.Constant):
        return _constant(node)
    if isinstance(node, ast.Name):
        return env[node.id]
    if isinstance(node, ast.UnaryOp):
        value = evaluate(node.operand, env)
        return -value if isinstance(node.op, ast.USub) else value
    if isinstance(node, ast.Call):
        assert isinstance(node.func, ast.Name)
        if node.func.id in AGGREGATES:
            entries = env[ast.unparse(node.args[0])]
            assert isinstance(entries, tuple)  # a group's entries (units.Units.unit_envs)
            return AGGREGATES[node.func.id](entries)
        return ELEMENTWISE[node.func.id](evaluate(node.args[0], env))
    assert isinstance(node, ast.BinOp)
    return _BINARY[type(node.op)](evaluate(node.left, env), evaluate(node.right, env))


def bounds(node: ast.AST, ranges: Mapping[str, Interval]) -> Interval:
    """The interval `node` lies in when each name lies in its range (interval arithmetic)."""
    if isinstance(node, ast.Expression):
        return bounds(node.body, ranges)
    if isinstance(node, ast.Constant):
        return _constant(node), _constant(node)
    if isinstance(node, ast.Name):
        return ranges[node.id]
    if isinstance(node, ast.UnaryOp):
        low, high = bounds(node.operand, ranges)
        return (-high, -low) if isinstance(node.op, ast.USub) else (low, high)
    if isinstance(node, ast.Call):
        low, high = bounds(node.args[0], ranges)
        assert isinstance(node.func, ast.Name)
        if node.func.id == "mean":
            return low, high
        if node.func.id == "std":  # at most (high - low) / sqrt(2), two entries at the range's ends: within this
            return 0.0, high - low
        if node.func.id == "log":  # increasing; -inf at and below 0
            return _log(max(low, 0.0)), _log(max(high, 0.0))
        if node.func.id == "exp":
            return _exp(low), _exp(high)
        return (0.0 if low <= 0 <= high else min(abs(low), abs(high)), max(abs(low), abs(high)))
    assert isinstance(node, ast.BinOp)
    (a, b), (c, d) = bounds(node.left, ranges), bounds(node.right, ranges)
    if isinstance(node.op, ast.Add):
        return a + c, b + d
    if isinstance(node.op, ast.Sub):
        return a - d, b - c
    if isinstance(node.op, ast.Div):
        if c <= 0 <= d:
            return -math.inf, math.inf
        c, d = 1 / d, 1 / c
    products = [x * y for x in (a, b) for y in (c, d) if not (math.isinf(x) and y == 0 or math.isinf(y) and x == 0)]
    return min(products, default=0.0), max(products, default=0.0)


@dataclass(frozen=True)
class Level:
    """One level: a condition on the factor's value `x`, given the call's settings."""

    text: str
    node: ast.Expression  # a comparison chain

    def met_by(self, x: float, env: Mapping[str, object]) -> bool:
        test = self.node.body
        assert isinstance(test, ast.Compare)
        values = [evaluate(n, {**env, "__x__": x}) for n in (test.left, *test.comparators)]
        return all(_COMPARE[type(op)](a, b) for op, a, b in zip(test.ops, values, values[1:]))

    def where_met(self, env: Mapping[str, object]) -> list[Piece]:
        """Where the condition holds, as open intervals and points (the settings from `env`)."""
        test = self.node.body
        assert isinstance(test, ast.Compare)
        operands = [test.left, *test.comparators]
        numbers = [float(evaluate(n, env)) for n in operands if "__x__" not in names(n)]
        centres = [0.0]
        for n in operands:
            if isinstance(n, ast.Call) and "__x__" in names(n):  # |x - E|: its kinks are E +- each number
                inner = n.args[0]
                centres.append(0.0 if isinstance(inner, ast.Name) else
                               -float(evaluate(inner, {**env, "__x__": 0.0})))
        critical = sorted({c + s * v for c in centres for v in numbers for s in (1, -1)} | set(centres))
        made: list[Piece] = []
        edges = [-math.inf, *critical, math.inf]
        for low, high in zip(edges, edges[1:]):
            inside = (low + high) / 2 if math.isfinite(low) and math.isfinite(high) else (
                high - 1 if math.isfinite(high) else low + 1 if math.isfinite(low) else 0.0)
            if self.met_by(inside, env):
                made.append((low, high))
            if math.isfinite(high) and self.met_by(high, env):
                made.append((high, high))
        return made


@dataclass(frozen=True)
class UnitFactor:
    name: str
    expression: ast.Expression
    set_by: str
    levels: tuple[Level, ...]

    def unit_level(self, env: Mapping[str, object]) -> str | None:
        """The first level the unit's value meets (None: none, as on a kink no level claims)."""
        x = float(evaluate(self.expression, env))
        return next((level.text for level in self.levels if level.met_by(x, env)), None)


def parse_factor(name: str, expression: str, set_by: str, levels: tuple[str, ...], unit_parameters: tuple[str, ...],
                 settings: tuple[str, ...], groups: tuple[str, ...] = (), shared: tuple[str, ...] = ()) -> UnitFactor:
    """A per-unit factor as declared, else a ValueError naming its key (expression, set_by, levels) and what is wrong.
    `unit_parameters`: the function's parameters of the unit's size (`groups`: those of them with several entries per
    unit; `shared`: those with one entry per row of units); `settings`: its float, int, bool and choice parameters."""
    if not name.isidentifier() or name in (*unit_parameters, *settings):
        raise ValueError(f"a factor's name is an identifier other than a parameter's (got {name!r})")
    try:
        node = ast.parse(_python(expression), mode="eval")
    except SyntaxError:
        raise ValueError(f"expression: {expression!r} is not arithmetic") from None
    _arithmetic(node, "expression")
    unknown = sorted(names(node) - {*unit_parameters, *settings})
    if unknown:
        raise ValueError(f"expression: {unknown[0]!r} is not a parameter of the unit's size or a setting")
    through = aggregated(node)
    bare = sorted(n for n in names(node) if n in groups and not _only_aggregated(node, n))
    if bare or not through <= set(groups):
        what = bare[0] if bare else sorted(through - set(groups))[0]
        raise ValueError(f"expression: {what!r}: a group of entries (`tensor L*K`) is read as mean({what}) or "
                         f"std({what}), and only a group is")
    if set_by not in names(node) or set_by not in unit_parameters:
        raise ValueError(f"set_by: {set_by!r} is not a parameter of the unit's size in its expression")
    inside = {n for call in ast.walk(node) if isinstance(call, ast.Call) and isinstance(call.func, ast.Name)
              and call.func.id in ("log", "exp") for n in names(call.args[0])}
    if set_by in inside:
        raise ValueError(f"set_by: {set_by!r} is inside log or exp: the engine solves for it where the value is "
                         "linear in it (declare the factor on the log, its levels' bounds as log(...) of the settings)")
    if set_by in shared and not names(node) <= {*shared, *settings}:
        raise ValueError(f"set_by: {set_by!r} is one entry per row, shared by the row's units: a factor it sets reads "
                         "only such entries and the settings")
    if not levels:
        raise ValueError("levels: list its levels")
    parsed = []
    for text in levels:
        try:
            test = _Rename(name).visit(ast.parse(_python(str(text)), mode="eval"))
        except SyntaxError:
            test = None
        if test is None or not isinstance(test.body, ast.Compare) or "__x__" not in names(test):
            raise ValueError(f"levels: {text!r} is not a condition on {name} (e.g. `0 < {name} <= 1`)")
        if not all(type(op) in _COMPARE for op in test.body.ops):
            raise ValueError(f"levels: {text!r}: compare with < <= > >= =")
        for operand in (test.body.left, *test.body.comparators):
            _arithmetic(operand, f"levels: {text!r}")
            _check_operand(operand, f"levels: {text!r}", name, settings)
        parsed.append(Level(str(text), test))
    return UnitFactor(name, node, set_by, tuple(parsed))


def _only_aggregated(node: ast.AST, name: str) -> bool:
    """Every read of `name` in `node` is the argument of mean or std."""
    inside = {id(n.args[0]) for n in ast.walk(node) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)
              and n.func.id in AGGREGATES}
    return all(id(n) in inside for n in ast.walk(node) if isinstance(n, ast.Name) and n.id == name)


def _check_operand(node: ast.AST, where: str, name: str, settings: tuple[str, ...]) -> None:
    """An operand of a level: arithmetic of settings, or the factor as NAME, |NAME| or |NAME - E|."""
    read = names(node)
    unknown = sorted(read - {*settings, "__x__"})
    if unknown:
        raise ValueError(f"{where}: {unknown[0]!r} is not a setting (float, int, bool or choice parameter)")
    if "__x__" not in read:
        return
    inner = node.args[0] if isinstance(node, ast.Call) else None
    plain = isinstance(node, ast.Name) or isinstance(inner, ast.Name) or (
        isinstance(inner, ast.BinOp) and isinstance(inner.op, (ast.Add, ast.Sub))
        and isinstance(inner.left, ast.Name) and inner.left.id == "__x__" and "__x__" not in names(inner.right))
    if not plain:
        raise ValueError(f"{where}: compare {name}, |{name}| or |{name} - E| with numbers")
