"""The bank of known mistakes and correct variants: how a lab declares them (trusted, never shipped to students).

Each module of the lab's `grading/bank/` defines functions with the contract's signature, registered with

    @mistake("part", "function", "forward_recursion",
             hint="your answers look like the recursion ran forwards in time",
             fails="part.matches_reference")   # optional: a check that must catch it
    def function(x, mask): ...

    @variant("part", "function", "python_loops")
    def function(x, mask): ...     # correct, written differently: must get full marks

Uses:
- `python -m autograder validate` grades a submission made of the reference with one function
  replaced by each entry (`submission_source`): a mistake must lose points in its own part and
  nowhere else, a variant must get full marks;
- diagnosis (autograder/judge/diagnosis.py) runs the mistakes of a failed check's function on the failing
  input, in the judge, and names the one whose answer equals the submission's.

Mistakes taken from public code (bugs fixed upstream, and other libraries' design choices that
break this lab's contract) live in the lab's `bank/public_code.py`, each with its `source`.

Entries must be self-contained: the body may use `torch` and `F` (torch.nn.functional) and the
other contract functions by name, as the reference module provides them.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import re
import textwrap
from dataclasses import dataclass
from typing import Callable

from autograder.lab.paths import REFERENCE


@dataclass(frozen=True)
class Entry:
    part: str
    function: str     # the contract function it replaces
    name: str         # short id, unique within the part
    impl: Callable
    hint: str = ""    # mistakes only: one line naming the mistake, shown to students
    is_mistake: bool = True
    source: str = ""  # where it was found in public code (the lab's bank/public_code.py), "" for ours
    fails: str = ""   # mistakes: a check that must fail for it (validate checks), "" when any of its part's will do
    says: str = ""    # mistakes: a word one of its failures must say (e.g. "detached" when only gradients differ)

    @property
    def id(self) -> str:
        return f"{self.part}.{self.name}"


ENTRIES: list[Entry] = []


def mistake(part: str, function: str, name: str, hint: str, source: str = "", fails: str = "", says: str = ""):
    def register(fn: Callable) -> Callable:
        ENTRIES.append(Entry(part, function, name, fn, hint, True, source, fails, says))
        return fn
    return register


def variant(part: str, function: str, name: str, source: str = ""):
    def register(fn: Callable) -> Callable:
        ENTRIES.append(Entry(part, function, name, fn, "", False, source))
        return fn
    return register


def load_all() -> list[Entry]:
    """Import every module of the lab's bank (grading/bank/, or one module grading/bank.py) once; returns all entries
    in definition order (none: a lab without a bank)."""
    from autograder.lab import registry
    if not registry.has_module("bank"):
        return ENTRIES
    package = registry.lab_module("bank")
    for info in pkgutil.iter_modules(getattr(package, "__path__", [])):
        importlib.import_module(f"{package.__name__}.{info.name}")
    return ENTRIES


def mistakes_of(function: str) -> list[Entry]:
    return [e for e in load_all() if e.is_mistake and e.function == function]


def mistakes_of_part(part: str) -> list[Entry]:
    return [e for e in load_all() if e.is_mistake and e.part == part]


def submission_source(entry: Entry) -> str:
    """The reference's source with `entry` appended under the contract name (it overrides the original), after
    the private helpers (`_name` functions) of the entry's bank module, which its body may call."""
    source = textwrap.dedent(inspect.getsource(entry.impl))
    source = re.sub(r"^@(mistake|variant)\(.*?\)\n", "", source, flags=re.S | re.M)
    source = re.sub(r"^def \w+\(", f"def {entry.function}(", source, count=1, flags=re.M)
    module = inspect.getmodule(entry.impl)
    helpers = [inspect.getsource(f) + "\n\n" for name, f in vars(module).items()
               if name.startswith("_") and inspect.isfunction(f) and f.__module__ == getattr(module, "__name__", "")]
    return REFERENCE.read_text() + f"\n\n# ---- bank entry {entry.id} ----\n" + "".join(helpers) + source
