"""The toy lab's own null submissions, beyond the family the engine derives from its contract (zeros, ones,
echoes...): answers that ignore their input must score 0 on every test."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Null:
    name: str
    description: str
    bodies: dict[str, str]  # contract function -> the expression it returns


NULLS = {n.name: n for n in [
    Null("identity", "returns its first input", {"masked_mean": "x.sum() * 0 + 1", "scale": "x"}),
]}


def null_source(null: Null) -> str:
    return f'"""Null submission {null.name!r}."""\nimport torch\n\n\n' + "".join(
        f"def {fn}({', '.join(args)}):\n    return {null.bodies[fn]}\n\n\n"
        for fn, args in (("masked_mean", ("x", "mask")), ("scale", ("x", "factor"))))
