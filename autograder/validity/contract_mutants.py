"""The contract mutants every lab gets: the reference with one clause of one function's contract broken.
Each must lose points in its own part, and only there (`validate`).

    for mutant in contract_mutants.mutants(): source = contract_mutants.source(mutant)

Kinds, for each contract function (grading.yaml `contract`):

    detached   its output detached from the graph (where the contract declares it `differentiable`)
    float32    its output cast to float32 (wrong for float64 inputs)
    mutates    it writes into its first floating tensor argument (after computing its answer, through .data:
               the answer and its gradients stay the reference's)
    no_mask    its mask ignored: every position counted (where the contract declares a `mask`)
    dropped    one argument ignored: its last parameter with a default takes the default; else its last
               parameter that is not the mask becomes a neutral value (zeros of a tensor, 1 of a number)

The mutant wraps the reference's function in the reference's own module, so the reference's other functions
that call it call the mutant (as a bank mistake's submission does).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from autograder.lab import config, paths

KINDS = ("detached", "float32", "mutates", "no_mask", "dropped")


@dataclass(frozen=True)
class Mutant:
    function: str
    kind: str
    detail: str = ""   # dropped: the parameter

    @property
    def label(self) -> str:
        return f"mutant.{self.function}.{self.kind}"

    @property
    def part(self) -> str:
        return config.current().contract[self.function].part


def mutants(parts: list[str] | None = None) -> list[Mutant]:
    """Every contract mutant of the lab (of `parts` only, when given), in the contract's order."""
    found = []
    defaults = _defaults()
    for name, fn in config.current().contract.items():
        if parts is not None and fn.part not in parts:
            continue
        if fn.differentiable:
            found.append(Mutant(name, "detached"))
        found += [Mutant(name, "float32"), Mutant(name, "mutates")]
        if fn.mask:
            found.append(Mutant(name, "no_mask"))
        dropped = [p for p in fn.parameters if p in defaults[name]] or [p for p in fn.parameters if p != fn.mask]
        found.append(Mutant(name, "dropped", dropped[-1]))
    return found


def _defaults() -> dict[str, set[str]]:
    """function -> its parameters with a default in the reference's signature."""
    tree = ast.parse(paths.REFERENCE.read_text())
    found: dict[str, set[str]] = {}
    for node in tree.body:
        if isinstance(node, ast.FunctionDef):
            positional = [*node.args.posonlyargs, *node.args.args]
            with_default = positional[len(positional) - len(node.args.defaults):] if node.args.defaults else []
            found[node.name] = {a.arg for a in with_default} | {
                a.arg for a, d in zip(node.args.kwonlyargs, node.args.kw_defaults) if d is not None}
    return found


WRAPPER = '''

# ---- contract mutant {label}
import functools as _functools
import inspect as _inspect

import torch as _torch


def _mutated(original, kind, parameters, mask, dropped):
    signature = _inspect.signature(original)

    @_functools.wraps(original)
    def mutant(*args, **kwargs):
        bound = signature.bind(*args, **kwargs)
        bound.apply_defaults()
        arguments = bound.arguments
        if kind == "no_mask":
            arguments[mask] = _torch.ones_like(arguments[mask])
        if kind == "dropped":
            default = signature.parameters[dropped].default
            if default is not _inspect.Parameter.empty:
                arguments[dropped] = default
            elif isinstance(arguments[dropped], _torch.Tensor):
                arguments[dropped] = _torch.zeros_like(arguments[dropped])
            else:
                arguments[dropped] = type(arguments[dropped])(1)
        value = original(*bound.args, **bound.kwargs)
        if kind == "mutates":
            first = next(a for a in bound.args if isinstance(a, _torch.Tensor) and a.is_floating_point())
            first.data.add_(1.0)  # behind autograd's back: the answer and its backward stand, the argument changed
        if kind in ("detached", "float32"):
            cast = (lambda v: v.detach()) if kind == "detached" else (lambda v: v.float())
            value = tuple(cast(v) for v in value) if isinstance(value, tuple) else cast(value)
        return value
    return mutant


{function} = _mutated({function}, {kind!r}, {parameters!r}, {mask!r}, {dropped!r})
'''


def source(mutant: Mutant) -> str:
    """The reference's text with `mutant`'s function wrapped."""
    fn = config.current().contract[mutant.function]
    return paths.REFERENCE.read_text() + WRAPPER.format(
        label=mutant.label, function=mutant.function, kind=mutant.kind, parameters=list(fn.parameters),
        mask=fn.mask, dropped=mutant.detail)


def by_label(label: str) -> Mutant:
    return next(m for m in mutants() if m.label == label)
