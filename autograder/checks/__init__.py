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
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

REGISTRY: dict[str, "Check"] = {}
SHOWN_INPUTS_ONLY = ("This self-check ran the visible tests on the inputs they show, and only those. When you submit, "
                     "each visible test also runs on fresh inputs of the same kind and size that you do not see (so "
                     "an answer hard-coded for a shown input earns nothing), and the hidden and end-to-end tests run.")


@dataclass(frozen=True)
class Check:
    id: str
    title: str                  # one line: what is checked (shown to students, even for hidden tests)
    functions: tuple[str, ...]  # the contract functions it calls
    run: Callable[["Context"], None]

    @property
    def part(self) -> str:
        return self.id.split(".")[0]


def check(id: str, title: str, functions: tuple[str, ...]):
    """Register a check under `id` ("part.name")."""
    def register(fn: Callable[["Context"], None]) -> Callable[["Context"], None]:
        if id in REGISTRY:
            raise ValueError(f"check {id} is registered twice")
        REGISTRY[id] = Check(id, title, tuple(functions), fn)
        return fn
    return register


@dataclass(eq=False)
class CheckFailed(Exception):
    """A check found a wrong answer. `message` and `compared` are shown with the test's outcome; the other text
    fields with its inputs (outcome.Finding). Child data becomes text only through autograder/textsafe.py.

    function/args/kwargs/answer let the diagnosis compare the answer with the known mistakes.
    """

    message: str
    inputs: str = ""                 # the (shrunk) failing input, formatted
    expected: str = ""
    got: str = ""
    function: str = ""
    args: tuple = ()
    kwargs: dict = field(default_factory=dict)
    answer: Any = None               # the submission's raw answer on that input
    compared: str = ""               # kind and shape of expected and got (textsafe.compared)
    submission_text: str = ""        # what the submission's code said (textsafe.said)
    private_inputs: bool = False     # the input is not the test's shown one (outcome.Finding.private_inputs)

    def __str__(self) -> str:
        return self.message


@dataclass
class Context:
    """What a check may use: the sandboxed submission, the reference (hidden checks only), settings."""

    sub: Any                 # autograder.remote.RemoteSubmission
    ref: Any                 # module with the reference functions, or None in the student bundle
    hypothesis: Mapping[str, Any]  # grading.yaml's `hypothesis` section (config.Hypothesis, read by key)
    cpu: Callable[[], float] = time.process_time  # CPU seconds spent so far (the judge's and the child's)


def load_all() -> dict[str, Check]:
    """Import every check module of the lab that is present: grading/checks/public/ and grading/checks/hidden/
    (the student bundle has no `hidden/`); with the hidden ones, the tests derived from the contract
    (checks/contract_tests.py)."""
    from autograder import registry
    for sub in ("checks.public", "checks.hidden"):
        if not registry.has_module(sub):
            continue
        package = registry.lab_module(sub)
        for info in pkgutil.iter_modules(package.__path__):
            importlib.import_module(f"{package.__name__}.{info.name}")
    if registry.has_module("checks.hidden"):  # the contract's own tests need the reference: never self-checked
        from autograder import config
        from autograder.checks import contract_tests
        contract_tests.register(config.current())
    return REGISTRY


def is_public(check: Check) -> bool:
    """A check of grading/checks/public/: reference-free, shipped with the self-check."""
    return ".checks.public." in check.run.__module__
