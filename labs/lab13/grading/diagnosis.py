"""Hints that are never wrong: a failure gets a bank mistake's hint only when that mistake, and no other
mistake of the function nor the reference, reproduces the submission's answer on the failing input."""

from __future__ import annotations

from types import ModuleType

import torch

from autograder.checks import CheckFailed


def _answer(fn, args: tuple, kwargs: dict):
    try:
        value = fn(*[a.detach().clone() if isinstance(a, torch.Tensor) else a for a in args], **kwargs)
    except Exception:  # noqa: BLE001 - a mistake that raises here reproduces nothing
        return None
    return value.detach() if isinstance(value, torch.Tensor) else None


def _same(a, b) -> bool:
    if not isinstance(a, torch.Tensor) or not isinstance(b, torch.Tensor) or a.shape != b.shape:
        return False
    if not (torch.isfinite(a).all() and torch.isfinite(b).all()):
        return bool(torch.equal(torch.isnan(a), torch.isnan(b)) and torch.equal(a.nan_to_num(0.0), b.nan_to_num(0.0)))
    return bool(torch.allclose(a.double(), b.double(), rtol=1e-4, atol=1e-5))


def hint(failure: CheckFailed, reference: ModuleType | None) -> str:
    from .bank import entry_function, mistakes_of
    if not failure.function or not isinstance(failure.answer, torch.Tensor) or reference is None:
        return ""
    if _same(_answer(getattr(reference, failure.function), failure.args, failure.kwargs), failure.answer):
        return ""   # the value is right: the failure is elsewhere (a gradient), no mistake is certain
    matching = [e for e in mistakes_of(failure.function)
                if _same(_answer(entry_function(e), failure.args, failure.kwargs), failure.answer)]
    return matching[0].hint if len(matching) == 1 else ""
