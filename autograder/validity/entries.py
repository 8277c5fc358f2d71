"""Bank entries as callables in the judge (the bank is trusted code, like the reference)."""

from __future__ import annotations

import types
from typing import Callable

from autograder.bank import Entry
from autograder.remote import CONTRACT


def entry_function(entry: Entry, reference: types.ModuleType) -> Callable:
    """`entry.impl` with the reference's contract functions as globals, so an entry that calls
    another contract function by name (e.g. ranking_loss -> bradley_terry_loss) gets the reference's,
    never another bank entry that happens to share the name in the bank module."""
    impl = entry.impl
    namespace = {**impl.__globals__, **{name: getattr(reference, name) for name in CONTRACT}}
    fn = types.FunctionType(impl.__code__, namespace, impl.__name__, impl.__defaults__, impl.__closure__)
    fn.__kwdefaults__ = impl.__kwdefaults__
    return fn
