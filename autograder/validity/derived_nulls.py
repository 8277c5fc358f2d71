"""The null family every lab gets from its contract: whole submissions whose answers ignore their input.
Each must score 0 on every test, checks and e2e (`validate`); a lab's own grading/nulls.py adds to them.

    for null in derived_nulls.NULLS: source = derived_nulls.source(null)   # the text of a submission

The answers follow grading.yaml's `contract` alone (each function's parameters and `returns`: a scalar,
"like ARG", "rows of ARG"; a tuple where several are declared), in the dtype of the call's first floating
tensor argument, so every one passes the shape and dtype clauses and must lose on its values:

    zeros, ones, log2, minus_one   a constant (detached: no graph)
    zeros_graph                    0 with the graph kept (x * 0 of each floating argument): training runs,
                                   nothing learns
    nan_grad                       0 whose gradient is nan (the square root of 0 * each floating argument): a
                                   training diverges while every answer stays finite
    noise                          shape-only: seeded random values of the right shape, the same for every input
    echo_<parameter>               that tensor argument echoed back (its mean where a scalar is due, row means
                                   for "rows of"), graph kept
    raises_value_error             every call raises ValueError (passes a rejection test only if it checks nothing else)
    raises_runtime_error           every call raises RuntimeError
    memorized                      every shown input's answer hard-coded (validity/shown.py), zeros elsewhere
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from autograder.lab import config, paths


@dataclass(frozen=True)
class DerivedNull:
    name: str
    description: str
    rule: str        # the answer rule (see HELPERS' _answer)
    argument: str = ""  # echo: the parameter echoed


CONSTANTS = {"zeros": 0.0, "ones": 1.0, "log2": 0.6931471805599453, "minus_one": -1.0}


def nulls() -> list[DerivedNull]:
    """The lab's derived null family (its echoes follow its contract's tensor parameters)."""
    family = [DerivedNull(name, f"every answer {value:g}, detached", "constant") for name, value in CONSTANTS.items()]
    family += [DerivedNull("zeros_graph", "every answer 0 with the graph of its floating inputs kept", "zeros_graph"),
               DerivedNull("nan_grad", "every answer 0, its gradient nan wherever it reaches an input", "nan_grad"),
               DerivedNull("noise", "shape-only: seeded random values of the right shape, blind to the input", "noise")]
    for parameter in _tensor_parameters():
        family.append(DerivedNull(f"echo_{parameter}", f"the argument {parameter} echoed back where it is passed "
                                  "(reduced to the declared shape), zeros elsewhere", "echo", parameter))
    family += [DerivedNull("raises_value_error", "every call raises ValueError", "raise_value"),
               DerivedNull("raises_runtime_error", "every call raises RuntimeError", "raise_runtime"),
               DerivedNull("memorized", "every shown input's answer hard-coded (public checks, handout tests), "
                           "zeros elsewhere", "memorized")]
    return family


def _tensor_parameters() -> list[str]:
    """Parameters some contract function shapes an output by, or that a reference call receives as a tensor:
    every parameter of the contract that is not a plain setting (approximated by the reference's annotations)."""
    annotations = _annotations()
    seen: dict[str, None] = {}
    for name, fn in config.current().contract.items():
        for parameter in fn.parameters:
            if "Tensor" in annotations.get((name, parameter), ""):
                seen.setdefault(parameter)
    return list(seen)


def _annotations() -> dict[tuple[str, str], str]:
    tree = ast.parse(paths.REFERENCE.read_text())
    found = {}
    for node in tree.body:
        if isinstance(node, ast.FunctionDef):
            for arg in [*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs]:
                found[(node.name, arg.arg)] = ast.unparse(arg.annotation) if arg.annotation else ""
    return found


def by_name(name: str) -> DerivedNull:
    return next(n for n in nulls() if n.name == name)


HELPERS = '''
import torch

_CONTRACT = {contract!r}   # function -> (parameters, [returns items])
_RULE, _VALUE, _ARGUMENT = {rule!r}, {value!r}, {argument!r}


def _like(arguments):
    return next(a for a in arguments.values() if isinstance(a, torch.Tensor) and a.is_floating_point())


def _shape(item, arguments):
    if item == "scalar":
        return ()
    if item.startswith("rows of "):
        return tuple(arguments[item[len("rows of "):]].shape[:1])
    return tuple(arguments[item[len("like "):]].shape)


def _echo(x, shape, dtype):
    x = x.to(dtype)
    if tuple(x.shape) == tuple(shape):
        return x.clone()
    if len(shape) == 1 and x.dim() >= 1 and x.shape[0] == shape[0]:
        return x.reshape(shape[0], -1).mean(1)
    return x.mean() + torch.zeros(shape, dtype=dtype)


def _one(item, arguments):
    like = _like(arguments)
    shape = _shape(item, arguments)
    if _RULE == "constant":
        return torch.full(shape, _VALUE, dtype=like.dtype)
    if _RULE == "zeros_graph":
        kept = sum((a * 0.0).sum() for a in arguments.values() if isinstance(a, torch.Tensor) and a.is_floating_point())
        return torch.zeros(shape, dtype=like.dtype) + kept.to(like.dtype)
    if _RULE == "nan_grad":  # d sqrt(u) / du at u = 0 is inf, times d u / d a = 0: nan; the value stays 0
        kept = sum(torch.sqrt(torch.nan_to_num(a) * 0.0).sum() for a in arguments.values()
                   if isinstance(a, torch.Tensor) and a.is_floating_point())
        return torch.zeros(shape, dtype=like.dtype) + kept.to(like.dtype)
    if _RULE == "noise":
        generator = torch.Generator().manual_seed(1234)
        return (torch.rand(shape, generator=generator, dtype=torch.float64) * 4 - 2).to(like.dtype)
    if _RULE == "echo" and isinstance(arguments.get(_ARGUMENT), torch.Tensor):
        return _echo(arguments[_ARGUMENT], shape, like.dtype)
    return torch.zeros(shape, dtype=like.dtype)


def _answer(name, arguments):
    if _RULE == "raise_value":
        raise ValueError("null submission")
    if _RULE == "raise_runtime":
        raise RuntimeError("null submission")
    if _RULE == "memorized":
        return _memorized(name, arguments)
    items = _CONTRACT[name][1]
    answers = tuple(_one(item, arguments) for item in items)
    return answers if len(answers) > 1 else answers[0]
'''

MEMORIZER = '''
MEMORY = {memory!r}


def _equal(a, b):
    if not isinstance(b, tuple):
        return not isinstance(a, torch.Tensor) and a == b
    dtype, data = b
    return (isinstance(a, torch.Tensor) and str(a.dtype) == dtype
            and torch.equal(a.detach(), torch.tensor(data, dtype=a.dtype)))


def _memorized(name, arguments):
    args = [arguments[k] for k in _CONTRACT[name][0]]
    like = _like(arguments)
    for fn, inputs, answer, grads, raises in MEMORY:
        if fn == name and len(inputs) == len(args) and all(_equal(a, b) for a, b in zip(args, inputs)):
            if raises:
                raise ValueError("memorized")
            if isinstance(answer, list) and len(_CONTRACT[name][1]) > 1:
                return tuple(torch.tensor(a, dtype=like.dtype) for a in answer)
            value = torch.tensor(answer, dtype=like.dtype)
            for i, g in grads.items():  # the memorized gradient, attached: value + sum(g * (x - x.detach()))
                if isinstance(args[i], torch.Tensor) and args[i].requires_grad:
                    value = value + (torch.tensor(g, dtype=like.dtype) * (args[i] - args[i].detach())).sum()
            return value
    answers = tuple(torch.zeros(_shape(item, arguments), dtype=like.dtype) for item in _CONTRACT[name][1])
    return answers if len(answers) > 1 else answers[0]
'''


def source(null: DerivedNull) -> str:
    """The text of a submission whose contract functions answer by `null`'s rule (the reference's signatures,
    annotations dropped: the submission imports nothing of the grader)."""
    contract = {name: (list(fn.parameters), [x.strip() for x in fn.returns.split(",")])
                for name, fn in config.current().contract.items()}
    parts = [f'"""Derived null submission {null.name!r}: {null.description}."""',
             HELPERS.format(contract=contract, rule=null.rule, value=CONSTANTS.get(null.name, 0.0),
                            argument=null.argument)]
    if null.rule == "memorized":
        from autograder.validity import shown
        parts.append(MEMORIZER.format(memory=shown.shown_calls()))
    tree = ast.parse(paths.REFERENCE.read_text())
    signatures = {node.name: node.args for node in tree.body if isinstance(node, ast.FunctionDef)}
    for name, fn in config.current().contract.items():
        arguments = signatures[name]
        for arg in [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs]:
            arg.annotation = None
        scope = ", ".join(f"{p!r}: {p}" for p in fn.parameters)
        parts.append(f"def {name}({ast.unparse(arguments)}):\n    return _answer({name!r}, {{{scope}}})\n")
    return "\n\n".join(parts) + "\n"
