"""The differential check a lab declares instead of writing (grading.yaml `contract.F.domain`; registered by
checks/derived.py in a full lab, never shipped to students):

    PART.matches_reference  F against the reference on its declared domain: the draws of a strategy over the whole
                            domain (checks/declared.py, shipped in examples.json like any property check's), then the
                            chosen examples of a pairwise covering array of the domain's factors; values at the
                            precision returned (a scalar's with its rounding allowance: tools.reference_answer),
                            and a scalar answer's gradient to each `differentiable` parameter

    @on_declared_domain(F)  a lab's own comparison (a tolerance its contract explains) run as F's differential check on
                            the same derived inputs, registered by the lab under the derived id with @check

    lab_domains()           DIFFERENTIAL, FACTORS and IMPOSSIBLE (what validate's coverage reads): the lab's
                            grading/checks/hidden/domains.py for the functions it names, derived for the others
                            whose differential check is the derived one; None when there are none
"""

from __future__ import annotations

import functools
from types import SimpleNamespace
from typing import Any, Callable

from autograder.checks import declared, examples, tools
from autograder.checks.base import REGISTRY, Call, Context
from autograder.checks.tools import expect_like_reference
from autograder.lab import config
from autograder.lab.domain_spec import derived_test_id


def differential_id(cfg: config.Config, function: str) -> str:
    return derived_test_id({f: spec.part for f, spec in cfg.contract.items()}, function, "matches_reference")


def is_derived(function: str) -> bool:
    """`function` declares a domain and its differential check runs on the derived inputs: the derived check (the lab
    registered none), or the lab's comparison on them (on_declared_domain)."""
    cfg = config.current()
    registered = REGISTRY.get(differential_id(cfg, function))
    return bool(cfg.contract[function].domain) and (
        registered is None or any(getattr(registered.run, mark, False) for mark in ("derived", "on_declared_domain")))


def on_declared_domain(function: str) -> Callable[[Callable[[Context, tuple], None]], Callable[[Context], None]]:
    """A check body `compare(ctx, args)` (args: positional arguments of `function`, asked through tools.call) run on
    the inputs derived from `function`'s declared domain: hypothesis's draws over it (shipped, as the derived check's),
    then its chosen examples (checks/lab_inputs.py). For a comparison the engine cannot derive, such as each group of
    a tensor N*G at its own rounding allowance, with an exact answer where the contract promises one."""
    def wrap(compare: Callable[[Context, tuple], None]) -> Callable[[Context], None]:
        @functools.wraps(compare)
        def on_domain(ctx: Context) -> None:
            def body(args: tuple) -> None:
                compare(ctx, args)
            body.__module__ = __name__  # the derived check's shipped draws (checks/examples.py keys them so)
            examples.for_all(ctx, declared.strategy(function), body, chosen=function)
        on_domain.on_declared_domain = True  # type: ignore[attr-defined]  # (is_derived)
        return on_domain
    return wrap


def check(function: str) -> Callable[[Context], None]:
    def derived_differential(ctx: Context) -> None:
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
    derived_differential.__module__ = __name__
    return derived_differential


# ---------------------------------------------------------------- the lab's domains, declared or derived
def lab_domains() -> Any:
    """DIFFERENTIAL, FACTORS and IMPOSSIBLE (what validate's coverage reads): the lab's own (its
    grading/checks/hidden/domains.py) for the functions it names, and the derived ones (checks/declared.py) of the
    other functions whose differential check is the derived one; None when neither names any."""
    from autograder.lab import registry
    own = registry.lab_module("checks.hidden.domains") if registry.has_module("checks.hidden.domains") else None
    named = dict(getattr(own, "DIFFERENTIAL", {}))
    cfg = config.current()
    mine = [f for f in cfg.contract if f not in named and is_derived(f)]
    if not named and not mine:
        return None
    made = {f: declared.factors_of(f) for f in mine}
    return SimpleNamespace(
        DIFFERENTIAL={**named, **{f: differential_id(cfg, f) for f in mine}},
        FACTORS={**getattr(own, "FACTORS", {}), **{f: made[f][0] for f in mine}},
        IMPOSSIBLE={**getattr(own, "IMPOSSIBLE", {}), **{f: made[f][1] for f in mine}},
        REGIONS=getattr(own, "REGIONS", {}))
