"""Unit and property tests ("checks") of the contract functions, and the registry that lists them.

A check is a function `check(ctx)` that calls the submission through `ctx.sub` (sandboxed) and
raises `CheckFailed` when it finds a problem. It is registered with `@check(...)`:

    @check("part.known_values", "the function on a hand-computed example", functions=("function",))
    def known_values(ctx): ...

Checks under `checks/public/` use no reference and ship with the student self-check, which runs them on
the inputs they show and only those; in a full grade their points also need the same answers on fresh
inputs of the same kind and size (checks/tools.py `public`), so a shown answer cannot be memorised.
Checks under `checks/hidden/` compare against the reference (`ctx.ref`) and never leave the grader.
Points and visibility come from grading.yaml, keyed by the check's id, whose first word is its part.
"""

from __future__ import annotations

import importlib
import pkgutil
from typing import Callable

from autograder.checks.base import REGISTRY, Check, CheckFailed, Context, is_public

__all__ = ["REGISTRY", "Check", "CheckFailed", "Context", "check", "is_public", "load_all"]
SHOWN_INPUTS_ONLY = ("This self-check ran the visible tests on the inputs they show, and only those. When you submit, "
                     "each visible test also runs on fresh inputs of the same kind and size that you do not see (so "
                     "an answer hard-coded for a shown input earns nothing), and the hidden and end-to-end tests run.")


def check(id: str, title: str, functions: tuple[str, ...]):
    """Register a check under `id` ("part.name")."""
    def register(fn: Callable[["Context"], None]) -> Callable[["Context"], None]:
        if id in REGISTRY:
            raise ValueError(f"check {id} is registered twice")
        REGISTRY[id] = Check(id, title, tuple(functions), fn)
        return fn
    return register


def load_all() -> dict[str, Check]:
    """Import every check module of the lab that is present: grading/checks/public/ and grading/checks/hidden/
    (the student bundle has no `hidden/`); then the checks the contract declares (checks/derived.py: worked examples,
    and with the lab's hidden side the differential checks on declared domains) and the tests derived from the
    contract (checks/contract_tests.py)."""
    from autograder.lab import config, registry
    for sub in ("checks.public", "checks.hidden"):
        if not registry.has_module(sub):
            continue
        package = registry.lab_module(sub)
        for info in pkgutil.iter_modules(package.__path__):
            importlib.import_module(f"{package.__name__}.{info.name}")
    full = registry.is_full_lab()  # the differential and contract tests need the reference: never self-checked
    # the declared checks are loaded like a lab's check modules, by name: their bodies use checks/examples.py, whose
    # data file's writer loads every check
    importlib.import_module("autograder.checks.derived").register(config.current(), hidden=full)
    if full:
        from autograder.checks import contract_tests
        contract_tests.register(config.current())
    return REGISTRY
