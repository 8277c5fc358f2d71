"""The checks a lab declares instead of writing (grading.yaml `contract.F`), registered beside its own:

    PART.known_values       F's worked examples (`examples`: each parameter's value and `expect`, the answer
                            computed by hand; optional `why`, the sentence a wrong answer shows). Public: students
                            see them, the self-check runs them, and a full grade also asks a fresh twin of each
                            (tools.public: the lab's twin, by default autograder/domains.py's)
    PART.matches_reference  F against the reference on its declared `domain`: the draws of a strategy over the whole
                            domain (checks/declared.py, shipped in examples.json like any property check's), then the
                            chosen examples of a pairwise covering array of the domain's factors; values at the
                            precision returned, and a scalar answer's gradient to each `differentiable` parameter

When PART holds several functions the ids are PART.F_known_values and PART.F_matches_reference. A check the lab
registers itself under the same id replaces the derived one; their points are grading.yaml's `tests:` entries.
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any, Callable

import torch

from autograder import config
from autograder.checks import declared, examples, tools
from autograder.checks.base import REGISTRY, Check, Context
from autograder.checks.tools import Call, call, expect_like_reference, public
from autograder.domain_spec import KNOWN_VALUES_TITLE, derived_test_id

KEYS = ("expect", "why")  # an example's keys besides the parameters


def _id(cfg: config.Config, function: str, name: str) -> str:
    return derived_test_id({f: spec.part for f, spec in cfg.contract.items()}, function, name)


def known_values_id(cfg: config.Config, function: str) -> str:
    return _id(cfg, function, "known_values")


def differential_id(cfg: config.Config, function: str) -> str:
    return _id(cfg, function, "matches_reference")


def differential_is_derived(function: str) -> bool:
    """`function` declares a domain and its differential check is the derived one (the lab registered none)."""
    cfg = config.current()
    check = REGISTRY.get(differential_id(cfg, function))
    return bool(cfg.contract[function].domain) and (check is None or check.run.__module__ == __name__)


def register(cfg: config.Config, hidden: bool) -> dict[str, str]:
    """Register the derived checks of every contract function that declares them (the differential ones only with
    the reference there: `hidden`); test id -> the grading.yaml key that derives it."""
    derived = {}
    for name, spec in cfg.contract.items():
        if spec.examples and _add(known_values_id(cfg, name), KNOWN_VALUES_TITLE.format(function=name), name,
                                  public(_known_values(name))):
            derived[known_values_id(cfg, name)] = f"contract.{name}.examples"
        if hidden and spec.domain and _add(differential_id(cfg, name), f"{name} matches the reference on its "
                                           "valid domain", name, _matches_reference(name)):
            derived[differential_id(cfg, name)] = f"contract.{name}.domain"
    return derived


def _add(test_id: str, title: str, function: str, run: Callable[[Context], None]) -> bool:
    """Register unless the lab registered its own check under this id; whether the derived one is registered."""
    if test_id in REGISTRY and REGISTRY[test_id].run.__module__ != __name__:
        return False
    REGISTRY[test_id] = Check(test_id, title, (function,), run, public=getattr(run, "shown", None) is not None)
    return True


# ---------------------------------------------------------------- the checks
def _known_values(function: str) -> Callable[[Context], None]:
    def known_values(ctx: Context) -> None:
        spec = config.current().contract[function]
        for example in spec.examples:
            args = tuple(_argument(spec.domain.get(p, ""), example[p]) for p in spec.parameters)
            answer = call(ctx, function, *args, names=spec.parameters, shape=spec.shapes(args))
            expected = torch.as_tensor(example["expect"], dtype=torch.float64)
            answer.expect_close(ctx, answer.value, expected, example.get("why") or f"{function}'s value on this "
                                "worked example differs from the right one")
    known_values.__module__ = __name__
    return known_values


def _argument(domain: str, value: Any) -> Any:
    """A worked example's value as the function gets it: a tensor parameter's list as a float32 tensor."""
    if domain.split(" ")[0] in ("tensor", "mask") or isinstance(value, list):
        return torch.tensor(value, dtype=torch.float32)
    return value


def _matches_reference(function: str) -> Callable[[Context], None]:
    def matches_reference(ctx: Context) -> None:
        spec = config.current().contract[function]
        grad = tuple(i for i, p in enumerate(spec.parameters) if p in spec.differentiable) \
            if spec.returns == "scalar" else ()

        def body(args: tuple) -> None:
            args = tuple(a.requires_grad_(True) if i in grad else a for i, a in enumerate(args))
            if tools.RECORDED is not None:  # validate's coverage (expect_like_reference asks without recording)
                tools.RECORDED.append((function, args, {}))
            expect_like_reference(ctx, Call(function, args, grad=grad, names=spec.parameters,
                                            shape=spec.shapes(args)))
        body.__module__ = __name__
        examples.for_all(ctx, declared.strategy(function), body, chosen=function)
    matches_reference.__module__ = __name__
    return matches_reference


# ---------------------------------------------------------------- the lab's domains, declared or derived
def lab_domains() -> Any:
    """The lab's domains module (grading/checks/hidden/domains.py), else the derived DIFFERENTIAL, FACTORS and
    IMPOSSIBLE (checks/declared.py) of the functions whose differential check is the derived one (what validate's
    coverage reads), else None."""
    from autograder import registry
    if registry.has_module("checks.hidden.domains"):
        return registry.lab_module("checks.hidden.domains")
    cfg = config.current()
    mine = [f for f in cfg.contract if differential_is_derived(f)]
    if not mine:
        return None
    made = {f: declared.factors_of(f) for f in mine}
    return SimpleNamespace(DIFFERENTIAL={f: differential_id(cfg, f) for f in mine},
                           FACTORS={f: made[f][0] for f in mine}, IMPOSSIBLE={f: made[f][1] for f in mine})
