"""Name a known mistake from a failed check's answer: run the bank's mistakes on the same input.

    diagnose("gae", failure, reference)
    -> "your advantages look like the recursion ran forwards in time (looks like: forward_recursion)"

Each mistake of the failing function (autograder/bank) runs here in the judge (the bank is trusted
code, like the reference) on the failing call's arguments. The ones whose output equals the
submission's answer (same structure and shapes; at float32's tolerance; only where mask == 1 when
the function takes a mask) name the diagnosis: the first one's hint, and every matching name (an
input may not tell two mistakes apart: "(looks like: no_mask or mask_off_by_one)"). A mistake that
gives the reference's own answer on that input tells nothing (e.g. a detached input: only gradients
differ) and is skipped, as is an entry that raises. Never raises: no diagnosis is "".
"""

from __future__ import annotations

import inspect
from types import ModuleType
from typing import Any, Callable

import torch

from autograder import bank
from autograder.checks import CheckFailed
from autograder.validity.entries import entry_function

# Answers are compared at float32's tolerance whatever their dtype: a mistake's formula is
# recognised, not graded (grading.yaml's hypothesis tolerances decide the grade).
RTOL, ATOL = 1e-4, 1e-5
CONFIRMATIONS = 2  # random variations of the failing input a named mistake must also reproduce

Ask = Callable[[tuple, dict], Any]  # (args, kwargs) -> the submission's answer, or None


def diagnose(part: str, failure: CheckFailed, reference: ModuleType | None, ask: Ask | None = None) -> str:
    """One line naming the first bank mistake of `failure.function` that reproduces the answer, or "".

    `ask(args, kwargs)` returns the submission's answer to another call of the same function (None if
    it fails). With it, a mistake is named only if it also reproduces the submission's answers on
    CONFIRMATIONS random variations of the failing input: a shrunk input is often so degenerate that
    an unrelated mistake gives the same numbers on it, and a wrong hint misleads more than none.
    """
    try:
        return _diagnose(part, failure, reference, ask)
    except Exception:  # a diagnosis is a courtesy: it never costs the grade
        return ""


def _diagnose(part: str, failure: CheckFailed, reference: ModuleType | None, ask: Ask | None) -> str:
    if reference is None or not failure.function or failure.answer is None:
        return ""
    correct = getattr(reference, failure.function, None)
    if correct is None:
        return ""
    mask = _mask(correct, failure.args, failure.kwargs)
    expected = _run(correct, failure)
    matches = []
    for entry in bank.mistakes_of(failure.function):
        if entry.part != part:
            continue
        got = _run(entry_function(entry, reference), failure)
        if got is None or (expected is not None and same(got, expected, mask)):
            continue  # the mistake raised, or cannot be told apart by value on this input
        if same(got, failure.answer, mask):
            matches.append(entry)
    if ask is not None and matches:
        variations = [_vary(correct, failure, seed) for seed in range(CONFIRMATIONS)]
        answers = [ask(args, kwargs) for args, kwargs in variations]
        matches = [e for e in matches if all(
            answer is not None and same(_call(entry_function(e, reference), args, kwargs), answer,
                                        _mask(correct, args, kwargs))
            for (args, kwargs), answer in zip(variations, answers))]
    if not matches:
        return ""
    others = "".join(f" or {e.name}" for e in matches[1:])  # the input cannot tell these apart
    return f"{matches[0].hint} (looks like: {matches[0].name}{others})"


def named(diagnosis: str) -> list[str]:
    """The mistake names a diagnosis gives, first the one whose hint it shows."""
    if "(looks like: " not in diagnosis:
        return []
    return diagnosis.rsplit("(looks like: ", 1)[1].rstrip(")").split(" or ")


def _run(fn, failure: CheckFailed):
    """fn on copies of the failing call's arguments (no grad), or None when it raises."""
    return _call(fn, failure.args, failure.kwargs)


def _call(fn, args: tuple, kwargs: dict):
    args = [a.detach().clone() if isinstance(a, torch.Tensor) else a for a in args]
    try:
        with torch.no_grad():
            return fn(*args, **dict(kwargs))
    except Exception:
        return None


def _vary(fn, failure: CheckFailed, seed: int) -> tuple[tuple, dict]:
    """The failing call with every float tensor but the mask redrawn (same shapes; fixed seed)."""
    generator = torch.Generator().manual_seed(seed)
    mask = _mask(fn, failure.args, failure.kwargs)

    def redraw(x):
        if isinstance(x, torch.Tensor) and x.is_floating_point() and x is not mask:
            return torch.randn(x.shape, generator=generator, dtype=torch.float64).to(x.dtype)
        return x

    return tuple(redraw(a) for a in failure.args), {k: redraw(v) for k, v in failure.kwargs.items()}


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
