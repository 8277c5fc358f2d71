"""What a check is, what it raises and what it may use: the definitions every check module shares (autograder.checks
re-exports them; modules that autograder.checks itself loads, such as contract_tests, import them from here)."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

REGISTRY: dict[str, "Check"] = {}


@dataclass(frozen=True)
class Check:
    id: str
    title: str                  # one line: what is checked (shown to students, even for hidden tests)
    functions: tuple[str, ...]  # the contract functions it calls
    run: Callable[["Context"], None]
    public: bool | None = None  # a derived check says (checks/derived.py); else its module's folder does

    @property
    def part(self) -> str:
        return self.id.split(".")[0]


@dataclass(frozen=True)
class Call:
    """One call a check makes, with what validating its answer needs (a fresh twin repeats it with new values)."""

    function: str
    args: tuple
    kwargs: dict = field(default_factory=dict)
    grad: tuple[int, ...] = ()
    valid: bool = True             # False: an input the contract rejects (the answer is an exception)
    names: tuple[str, ...] = ()
    shape: tuple[int, ...] | None = None
    tuple_of: int | None = None


@dataclass(eq=False)
class CheckFailed(Exception):
    """A check found a wrong answer. `message` and `compared` are shown with the test's outcome; the other text
    fields with its inputs (outcome.Finding). Child data becomes text only through autograder/sandbox/textsafe.py.

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

    sub: Any                 # autograder.sandbox.remote.RemoteSubmission
    ref: Any                 # module with the reference functions, or None in the student bundle
    hypothesis: Mapping[str, Any]  # grading.yaml's `hypothesis` section (config.Hypothesis, read by key)
    cpu: Callable[[], float] = time.process_time  # CPU seconds spent so far (the judge's and the child's)


def is_public(check: Check) -> bool:
    """A check of grading/checks/public/ (or a derived public one): reference-free, shipped with the self-check."""
    return check.public if check.public is not None else ".checks.public." in check.run.__module__
