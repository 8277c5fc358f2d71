"""Name a known mistake from a failed check's answer, only when it is certainly that mistake.

    diagnose("gae", failure, reference, ask)
    -> "the recursion must run backwards in time ... (looks like: forward_recursion)"

The candidates are the bank's mistakes of the part (autograder/bank), each seen through the failing
function: the entry itself, or the reference's function calling it (a mistaken bradley_terry_loss
inside ranking_loss). They run here in the judge (the bank is trusted code, like the reference).
A candidate is a *match* when it reproduces the submission's answer on the failing (shrunk) input
and differs from the reference's there. A shrunk input is often so degenerate that unrelated
mistakes agree on it, so a match is named only when it also reproduces the submission's answers on
fresh valid inputs (FRESH of them, recorded from the function's differential check run on the
reference) and no other match does: those inputs separate it from every other bank mistake that
agreed on the shrunk input. Otherwise there is no hint, only expected vs got. Answers are compared
with the same structure and shapes, at float32's tolerance, only where mask == 1 when the function
takes a mask. Never raises: no diagnosis is "".
"""

from __future__ import annotations

import functools
import inspect
from types import ModuleType
from typing import Any, Callable

import torch

from autograder import bank
from autograder.checks import CheckFailed
from autograder.validity.entries import contract_with

# Answers are compared at float32's tolerance whatever their dtype: a mistake's formula is
# recognised, not graded (grading.yaml's hypothesis tolerances decide the grade).
RTOL, ATOL = 1e-4, 1e-5
FRESH = 12  # fresh valid inputs a named mistake must also reproduce

Ask = Callable[[tuple, dict], Any]  # (args, kwargs) -> the submission's answer, or None


def diagnose(part: str, failure: CheckFailed, reference: ModuleType | None, ask: Ask | None = None) -> str:
    """The hint of the one bank mistake that certainly explains `failure`'s answer, with its name, or "".

    `ask(args, kwargs)` returns the submission's answer to another call of the same function (None if
    it fails); without it nothing can be confirmed and there is no hint.
    """
    try:
        return _diagnose(part, failure, reference, ask)
    except Exception:  # a diagnosis is a courtesy: it never costs the grade
        return ""


def _diagnose(part: str, failure: CheckFailed, reference: ModuleType | None, ask: Ask | None) -> str:
    if reference is None or ask is None or not failure.function or failure.answer is None:
        return ""
    correct = getattr(reference, failure.function, None)
    if correct is None:
        return ""
    mask = _mask(correct, failure.args, failure.kwargs)
    expected = _call(correct, failure.args, failure.kwargs)
    matches = []
    for entry in bank.mistakes_of_part(part):
        seen = contract_with(entry, reference)[failure.function]
        got = _call(seen, failure.args, failure.kwargs)
        if got is None or (expected is not None and same(got, expected, mask)):
            continue  # the mistake raised, or cannot be told apart by value on this input
        if same(got, failure.answer, mask):
            matches.append((entry, seen))
    if not matches:
        return ""
    fresh = fresh_calls(failure.function)
    answers = [ask(args, kwargs) for args, kwargs in fresh]
    survivors = [entry for entry, seen in matches if all(
        answer is not None and same(_call(seen, args, kwargs), answer, _mask(correct, args, kwargs))
        for (args, kwargs), answer in zip(fresh, answers))]
    if len(survivors) != 1:  # none reproduces the answers, or the fresh inputs cannot tell them apart
        return ""
    return f"{survivors[0].hint} (looks like: {survivors[0].name})"


@functools.lru_cache(maxsize=None)
def fresh_calls(function: str) -> tuple[tuple[tuple, dict], ...]:
    """FRESH valid inputs of `function`, spread over the ones its differential check draws (recorded by
    running that check on the reference in-process; deterministic)."""
    from autograder import checks
    from autograder.checks import tools
    from autograder.checks.hidden.domains import DIFFERENTIAL
    from autograder.reference import load_reference
    from autograder.validity.local import local_context

    reference = load_reference()
    with tools.recording() as calls:
        checks.load_all()[DIFFERENTIAL[function]].run(local_context(reference, reference))
    mine = [(args, dict(kwargs)) for fn, args, kwargs in calls if fn == function]
    step = max(1, len(mine) // FRESH)
    return tuple(mine[::step][:FRESH])


def named(diagnosis: str) -> list[str]:
    """The mistake names a diagnosis gives, first the one whose hint it shows."""
    if "(looks like: " not in diagnosis:
        return []
    return diagnosis.rsplit("(looks like: ", 1)[1].rstrip(")").split(" or ")


def _call(fn, args: tuple, kwargs: dict):
    args = [a.detach().clone() if isinstance(a, torch.Tensor) else a for a in args]
    try:
        with torch.no_grad():
            return fn(*args, **dict(kwargs))
    except Exception:
        return None


def _mask(fn, args: tuple, kwargs: dict) -> torch.Tensor | None:
    """The call's `mask` argument when the contract function has one."""
    try:
        bound = inspect.signature(fn).bind(*args, **kwargs)
    except TypeError:
        return None
    mask = bound.arguments.get("mask")
    return mask if isinstance(mask, torch.Tensor) else None


def same(a, b, mask: torch.Tensor | None = None) -> bool:
    """Equal structure, shapes and values (nan equals nan; positions where mask == 0 ignored)."""
    if isinstance(a, (tuple, list)) or isinstance(b, (tuple, list)):
        return (isinstance(a, (tuple, list)) and isinstance(b, (tuple, list)) and len(a) == len(b)
                and all(same(x, y, mask) for x, y in zip(a, b)))
    if not (isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor)) or a.shape != b.shape:
        return False
    a, b = a.detach().double(), b.detach().double()
    if mask is not None and mask.shape == a.shape:
        keep = mask.bool()
        a, b = torch.where(keep, a, 0.0), torch.where(keep, b, 0.0)
    return bool(torch.allclose(a, b, rtol=RTOL, atol=ATOL, equal_nan=True))
