"""Name a known mistake from a failed check's answer, only when it is certainly that mistake.

    diagnose("gae", failure, reference, ask)
    -> "the recursion must run backwards in time ... (looks like: forward_recursion)"

The candidates are the bank's mistakes of the part (grading/bank), each seen through the failing
function: the entry itself, or the reference's function calling it (a mistaken
helper inside the function that calls it). They run here in the judge (the bank is trusted code, like the reference).
A candidate is a *match* when it reproduces the submission's answer on the failing (shrunk) input
and differs from the reference's there. A shrunk input is often so degenerate that unrelated
mistakes agree on it, so a match is named only when it also reproduces the submission's answers on
the function's confirmation inputs (the lab's, e.g. its checks/hidden/chosen.py: chosen, non-degenerate calls:
T >= 2, full and ragged rows, gamma and lam inside (0, 1), beta > 0, every kind, a rejected one
too), no other match does, and those inputs separate it: its answers there differ from the
reference's and from every other candidate's. Otherwise there is no hint, only expected vs got.
Answers are compared with the same structure and shapes, at float32's tolerance, only where
mask == 1 when the function takes a mask; a call that raises is an answer too (None), equal only to
another raise. Never raises: no diagnosis is "".

`leave_out` drops one mistake from the candidates: `validate` grades each bank mistake with itself
left out, as a mistake the diagnosis does not know, and counts the hints it gets (validity/hints.py).
"""

from __future__ import annotations

import inspect
from types import ModuleType
from typing import Any, Callable

import torch

from autograder.checks import CheckFailed
from autograder.lab import bank
from autograder.lab.bank import Entry
from autograder.lab.entries import contract_with

# Answers are compared at float32's tolerance whatever their dtype: a mistake's formula is
# recognised, not graded (grading.yaml's hypothesis tolerances decide the grade).
RTOL, ATOL = 1e-4, 1e-5

Ask = Callable[[tuple, dict], Any]  # (args, kwargs) -> the submission's answer, or None (it raised, or failed)
_ANSWERS: dict[tuple, list] = {}    # (function, mistake or None: the reference, id(reference)) -> confirmation answers


def diagnose(part: str, failure: CheckFailed, reference: ModuleType | None, ask: Ask | None = None,
             leave_out: str | None = None) -> str:
    """The hint of the one bank mistake that certainly explains `failure`'s answer, with its name, or "".

    `ask(args, kwargs)` returns the submission's answer to another call of the same function (None if
    it fails); without it nothing can be confirmed and there is no hint. `leave_out`: a mistake's name
    that is not a candidate.
    """
    try:
        return _diagnose(part, failure, reference, ask, leave_out)
    except Exception:  # a diagnosis is a courtesy: it never costs the grade
        return ""


def _diagnose(part: str, failure: CheckFailed, reference: ModuleType | None, ask: Ask | None,
              leave_out: str | None) -> str:
    if reference is None or ask is None or not failure.function or failure.answer is None:
        return ""
    function = failure.function
    correct = getattr(reference, function, None)
    if correct is None:
        return ""
    candidates = [(e, contract_with(e, reference)[function]) for e in bank.mistakes_of_part(part)
                  if e.name != leave_out]
    mask = _mask(correct, failure.args, failure.kwargs)
    expected = answer_of(correct, failure.args, failure.kwargs)
    matches = []
    for entry, seen in candidates:
        got = answer_of(seen, failure.args, failure.kwargs)
        if got is None or (expected is not None and same(got, expected, mask)):
            continue  # the mistake raised, or cannot be told apart by value on this input
        if same(got, failure.answer, mask):
            matches.append(entry)
    if not matches:
        return ""
    from autograder.checks import lab_inputs

    calls = lab_inputs.confirmation_inputs(function)
    answers = [ask(args, kwargs) for args, kwargs in calls]
    survivors = [e for e in matches if agree(_answers(function, e, reference), answers, calls, correct)]
    if len(survivors) != 1:  # none reproduces the answers, or the confirmation inputs cannot tell them apart
        return ""
    named_one = survivors[0]
    mine = _answers(function, named_one, reference)
    if agree(mine, _answers(function, None, reference), calls, correct) or any(
            agree(mine, _answers(function, e, reference), calls, correct) for e, _ in candidates if e != named_one):
        return ""  # the confirmation inputs do not separate it from the reference or from another mistake
    return f"{named_one.hint} (looks like: {named_one.name})"


def _answers(function: str, entry: Entry | None, reference: ModuleType) -> list:
    """A candidate's answers (None: the reference's) to the confirmation calls, computed once per process."""
    from autograder.checks import lab_inputs

    key = (function, entry, id(reference))
    if key not in _ANSWERS:
        fn = contract_with(entry, reference)[function] if entry else getattr(reference, function)
        _ANSWERS[key] = [answer_of(fn, args, kwargs) for args, kwargs in lab_inputs.confirmation_inputs(function)]
    return _ANSWERS[key]


def agree(a: list, b: list, calls, correct: Callable) -> bool:
    """Two lists of answers to `calls` are equal (a raise, None, equals only a raise)."""
    return all((x is None) == (y is None) and (x is None or same(x, y, _mask(correct, *call)))
               for x, y, call in zip(a, b, calls))


def named(diagnosis: str) -> list[str]:
    """The mistake names a diagnosis gives, first the one whose hint it shows."""
    if "(looks like: " not in diagnosis:
        return []
    return diagnosis.rsplit("(looks like: ", 1)[1].rstrip(")").split(" or ")


def answer_of(fn, args: tuple, kwargs: dict):
    """fn's answer to a call (on copies of the tensors, without gradients), None when it raises."""
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
