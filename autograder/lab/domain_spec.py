"""One parameter's declared domain (grading.yaml `contract.F.domain.P`), read without torch (the config checks it).

Kinds: `tensor DIMS`, `mask DIMS`, `float LO..HI`, `int LO..HI`, `bool`, `choice A B ...`
(autograder/checks/domains.py draws from them).
"""

from __future__ import annotations

from dataclasses import dataclass

KINDS = ("tensor", "mask", "float", "int", "bool", "choice")


@dataclass(frozen=True)
class Parameter:
    """One parameter's declared values."""

    name: str
    kind: str
    dims: tuple[str, ...] = ()
    low: float = 0.0
    high: float = 1.0
    choices: tuple[str, ...] = ()

    @classmethod
    def parse(cls, name: str, spec: str) -> "Parameter":
        kind, *rest = spec.split() or [""]
        if kind not in KINDS:
            raise ValueError(f"{name}: {spec!r}: the kind must be one of {', '.join(KINDS)}")
        if kind in ("tensor", "mask"):
            dims = tuple(rest)
            if not dims or not all(d.isidentifier() or d.isdigit() for d in dims):
                raise ValueError(f"{name}: {spec!r}: give its dimensions, e.g. `{kind} B T`")
            return cls(name, kind, dims)
        if kind in ("float", "int"):
            low, sep, high = "".join(rest).partition("..")
            try:
                return cls(name, kind, low=float(low), high=float(high))
            except ValueError:
                raise ValueError(f"{name}: {spec!r}: give its range, e.g. `{kind} 1..4`") from None
        if kind == "choice" and not rest:
            raise ValueError(f"{name}: {spec!r}: list its values, e.g. `choice mean sum`")
        return cls(name, kind, choices=tuple(rest))


KNOWN_VALUES_TITLE = "{function} on worked examples"  # the derived public check's title (autograder/checks/derived.py)


def derived_test_id(parts: dict[str, str], function: str, name: str) -> str:
    """The id of a check derived for `function` (parts: contract function -> its part): PART.NAME, or PART.F_NAME when
    the part holds several functions (autograder/checks/derived.py)."""
    part = parts[function]
    return f"{part}.{name}" if [f for f, p in parts.items() if p == part] == [function] else f"{part}.{function}_{name}"
