"""Bank entries as callables in the judge (the bank is trusted code, like the reference)."""

from __future__ import annotations

import types
from typing import Callable

from autograder.lab import config
from autograder.lab.bank import Entry


def contract_with(entry: Entry, reference: types.ModuleType) -> dict[str, Callable]:
    """The contract functions of "the reference with `entry` in place of its function", as
    `bank.submission_source` builds that submission: the reference's other functions call the entry
    through their globals (a function calling a mistaken one calls the mistake)."""
    namespace = {**entry.impl.__globals__, **vars(reference)}
    functions = {name: _rebind(getattr(reference, name), namespace) for name in config.current().functions}
    functions[entry.function] = _rebind(entry.impl, namespace)
    namespace.update(functions)
    return functions


def _rebind(fn: Callable, namespace: dict) -> Callable:
    new = types.FunctionType(fn.__code__, namespace, fn.__name__, fn.__defaults__, fn.__closure__)
    new.__kwdefaults__ = fn.__kwdefaults__
    return new
