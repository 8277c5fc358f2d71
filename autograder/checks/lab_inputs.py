"""The inputs the engine asks of a contract function beyond hypothesis's draws, function by function: derived from
its declared domain (grading.yaml `contract.F.domain`: checks/domains.py, declared.py) where it declares one, then
the lab's own (its registry.Lab hooks, grading/lab.py): a lab's hooks add what a declaration cannot give, and serve
alone the functions it does not declare. A declared function's fresh twins are the derived ones only.

    fresh_twin(function, args, kwargs, valid, position) -> a public check's call with new values (tools.public)
    confirmation_inputs(function)  -> the (args, kwargs) calls on which a hint's mistake must be the only one
                                      answering as the submission does (judge/diagnosis.py): the derived ones,
                                      then the lab's (Lab.confirmation_calls)
    chosen_inputs(function)        -> the differential check's chosen examples: the derived ones, then the lab's
                                      (Lab.chosen_examples: its training's own regime, or all of them where the
                                      function declares no domain)
"""

from __future__ import annotations

import functools
import random
from typing import Sequence

import torch

from autograder.checks.declared import chosen, confirmation_calls
from autograder.checks.domains import twin
from autograder.checks.units import declared_for
from autograder.lab import config, registry


def is_declared(function: str) -> bool:
    """`function` declares its domain in grading.yaml."""
    return bool(config.current().contract[function].domain)


def fresh_twin(function: str, args: tuple, kwargs: dict, valid: bool, position: int) -> tuple[tuple, dict]:
    """A fresh input like a shown one (the same function, shapes, dtype, masks and settings, new values). A declared
    function's: new values from its domain, and with `units` each unit at levels drawn for it (where a few draws find
    them beside the settings), so that a twin of a worked example near a ratio of 1 is not only far from it."""
    if is_declared(function):
        fresh, fresh_kwargs = twin(function, args, kwargs, valid, position)
        return (_at_levels(function, fresh, fresh_kwargs, position) if valid else fresh), fresh_kwargs
    lab_twin = registry.lab().twin
    if lab_twin is None:  # lab_problems refuses such a lab before any grade
        raise LookupError(f"{function} declares no domain and the lab gives no twin (Lab.twin)")
    return lab_twin(function, args, kwargs, valid, position)


def _at_levels(function: str, args: tuple, kwargs: dict, position: int) -> tuple:
    """`args` with each unit put at levels drawn for it (units.put_some_units), when `function` declares units and the
    call gives every parameter (a default left out: its settings are not known here)."""
    units = declared_for(function)
    names = config.current().contract[function].parameters
    named = {**dict(zip(names, args)), **kwargs}
    if units is None or set(names) - set(named):
        return args
    held = {k: v.detach().clone() if isinstance(v, torch.Tensor) else v for k, v in named.items()}
    rng = random.Random(f"{function} twin {position}")
    levels: list[dict[str, str] | None] = [{f.name: rng.choice(f.levels).text for f in units.declared}
                                           for _ in range(units.unit_count(held))]
    dtype = next(v.dtype for v in held.values() if isinstance(v, torch.Tensor) and v.is_floating_point())
    units.put_some_units(held, levels, rng, dtype)
    return tuple(held[n].requires_grad_(a.requires_grad) if isinstance(a, torch.Tensor) and a.is_floating_point()
                 else held[n] for n, a in zip(names, args))


def confirmation_inputs(function: str) -> Sequence[tuple[tuple, dict]]:
    """The calls confirming a hint of `function` (none: its hints are never shown). A diagnosis asks them once per
    candidate mistake: the derived ones are built once per declaration (~0.25 s of CPU for 5 factors);
    each use copies their tensors (diagnosis.answer_of, the child's call)."""
    spec = config.current().contract[function]
    derived = _declared_confirmation(config.current().lab, function, repr(spec.domain), repr(spec.units)) \
        if spec.domain else ()
    return (*derived, *registry.lab().confirmation_calls(function))


@functools.lru_cache(maxsize=None)
def _declared_confirmation(lab: str, function: str, domain: str, units: str) -> tuple[tuple[tuple, dict], ...]:
    """declared.confirmation_calls of `function`, keyed by its lab and declaration (what they are built from)."""
    return tuple(confirmation_calls(function))


def chosen_inputs(function: str) -> list:
    """The chosen examples of `function`'s differential check, in the form its strategy draws."""
    derived = chosen(function) if is_declared(function) else []
    return [*derived, *registry.lab().chosen_examples(function)]
