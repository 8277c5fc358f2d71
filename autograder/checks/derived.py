"""The checks a lab declares instead of writing (grading.yaml `contract.F`), registered beside its own:

    PART.known_values       F's worked examples (`examples`: each parameter's value and `expect`, the answer
                            computed by hand; optional `why`, the sentence a wrong answer shows). Public: students
                            see them, the self-check runs them, and a full grade also asks a fresh twin of each
                            (tools.public: checks/lab_inputs.fresh_twin, drawn from a declared domain); `expect_grad`
                            (optional): a scalar answer's gradient to named tensor parameters, computed by hand;
                            `dtype` (optional): float32 (default) or float64, the tensors' dtype
    PART.matches_reference  F against the reference on its declared `domain` (checks/differential.py: hidden)

When PART holds several functions the ids are PART.F_known_values and PART.F_matches_reference. A check the lab
registers itself under the same id replaces the derived one; their points are grading.yaml's `tests:` entries.
"""

from __future__ import annotations

from typing import Any, Callable

import torch

from autograder.checks.base import REGISTRY, Check, Context
from autograder.checks.tools import Answer, call, public
from autograder.lab import config
from autograder.lab.domain_spec import KNOWN_VALUES_TITLE, derived_test_id


def _id(cfg: config.Config, function: str, name: str) -> str:
    return derived_test_id({f: spec.part for f, spec in cfg.contract.items()}, function, name)


def known_values_id(cfg: config.Config, function: str) -> str:
    return _id(cfg, function, "known_values")


def register(cfg: config.Config, hidden: bool) -> dict[str, str]:
    """Register the derived checks of every contract function that declares them (the differential ones only with
    the reference there: `hidden`); test id -> the grading.yaml key that derives it."""
    derived = {}
    if hidden:  # the hidden half never ships to students (bundling/engine.py NOT_FOR_STUDENTS)
        from autograder.checks import differential
    for name, spec in cfg.contract.items():
        if spec.examples and _add(known_values_id(cfg, name), KNOWN_VALUES_TITLE.format(function=name), name,
                                  public(_known_values(name))):
            derived[known_values_id(cfg, name)] = f"contract.{name}.examples"
        if hidden and spec.domain and _add(differential.differential_id(cfg, name), f"{name} matches the reference "
                                           "on its valid domain", name, differential.check(name)):
            derived[differential.differential_id(cfg, name)] = f"contract.{name}.domain"
    return derived


def _add(test_id: str, title: str, function: str, run: Callable[[Context], None]) -> bool:
    """Register unless the lab registered its own check under this id; whether the derived one is registered."""
    if test_id in REGISTRY and not getattr(REGISTRY[test_id].run, "derived", False):
        return False
    run.derived = True  # type: ignore[attr-defined]  # (differential.is_derived)
    REGISTRY[test_id] = Check(test_id, title, (function,), run, public=getattr(run, "shown", None) is not None)
    return True


# ---------------------------------------------------------------- the checks
def _known_values(function: str) -> Callable[[Context], None]:
    def derived_known_values(ctx: Context) -> None:
        spec = config.current().contract[function]
        for example in spec.examples:
            dtype = getattr(torch, example.get("dtype", "float32"))
            args = tuple(_argument(spec.domain.get(p, ""), example[p], dtype) for p in spec.parameters)
            grads = example.get("expect_grad") or {}
            wrt = tuple(i for i, p in enumerate(spec.parameters) if p in grads)
            answer = call(ctx, function, *args, grad=wrt, names=spec.parameters, shape=spec.shapes(args))
            expected = torch.as_tensor(example["expect"], dtype=torch.float64)
            why = example.get("why") or f"{function}'s value on this worked example differs from the right one"
            answer.expect_close(ctx, answer.value, expected, why)
            for k, i in enumerate(wrt):
                _expect_grad(ctx, answer, k, f"d {function} / d {spec.parameters[i]}", grads[spec.parameters[i]], why)
    derived_known_values.__module__ = __name__
    return derived_known_values


def _expect_grad(ctx: Context, answer: Answer, k: int, derivative: str, expected: Any, why: str) -> None:
    """The k-th requested gradient of a scalar answer (`derivative`: "d F / d P", the lab's own names) against the
    worked example's."""
    got = answer.grads[k] if k < len(answer.grads) else None
    if got is None:
        raise answer.fail(f"{derivative} is missing: was the answer detached (.detach(), .item(), .data, "
                          "torch.no_grad, numpy)?", expected=derivative, got="none")
    answer.expect_close(ctx, got, torch.as_tensor(expected, dtype=torch.float64),
                        f"{derivative} differs from the hand-computed one ({why})")


def _argument(domain: str, value: Any, dtype: torch.dtype) -> Any:
    """A worked example's value as the function gets it: a tensor parameter's list as a tensor of the example's
    dtype (float32 unless it says `dtype: float64`)."""
    if domain.split(" ")[0] in ("tensor", "mask") or isinstance(value, list):
        return torch.tensor(value, dtype=dtype)
    return value
