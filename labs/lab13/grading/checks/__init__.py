"""Lab 13's checks, registered with `@check` into this lab's own REGISTRY (the engine's `Check` type).

A check is `check(ctx)` with the engine's `autograder.checks.Context` (ctx.sub: the submission, sandboxed in a
grade or in-process in the standalone runner; ctx.ref: the reference, None in the self-check), raising
`CheckFailed`. Public checks (checks/public) are reference-free, on hand-computed values; hidden checks
(checks/hidden) compare with the reference in float64 over the domain posttrain.py declares, and test
properties. Until the engine loads a lab's checks from its folder (issue 21), they stay out of the
engine's registry, so Lab 12's and Lab 13's checks never meet in one process.
"""

from __future__ import annotations

import importlib
import pkgutil
from typing import Callable

from autograder.checks import Check, Context

REGISTRY: dict[str, Check] = {}


def check(id: str, title: str, functions: tuple[str, ...]):
    """Register a check under `id` ("part.name")."""
    def register(fn: Callable[[Context], None]) -> Callable[[Context], None]:
        if id in REGISTRY:
            raise ValueError(f"check {id} is registered twice")
        REGISTRY[id] = Check(id, title, tuple(functions), fn)
        return fn
    return register


def load_all(hidden: bool = True) -> dict[str, Check]:
    """Import the public check modules, and the hidden ones when `hidden` (the judge's side)."""
    for sub in ("public", "hidden") if hidden else ("public",):
        package = importlib.import_module(f"{__name__}.{sub}")
        for info in pkgutil.iter_modules(package.__path__):
            importlib.import_module(f"{package.__name__}.{info.name}")
    return REGISTRY
