"""Lab 13's bank of known mistakes and correct variants (trusted, never shipped to students).

Entries are the engine's `autograder.bank.Entry` (part, function, name, impl, hint, is_mistake, source),
registered with this lab's own `mistake` / `variant` into ENTRIES (not Lab 12's list). Each module
`bank/<part>.py` holds one part's entries; `source` cites the public code or paper where the mistake was
found (an upstream bug, or another library's choice that breaks this lab's contract), "" for ours.
A mistake must lose points in its own part and nowhere else; a variant must get full marks (validate.py).
Bodies use `torch`, `F` (torch.nn.functional, as posttrain.py imports them) and their own module's private
helpers (`_name` functions), which a bank submission's source carries along.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import re
import textwrap
from typing import Callable

from autograder.bank import Entry

from .. import world

ENTRIES: list[Entry] = []


def mistake(part: str, function: str, name: str, hint: str, source: str = ""):
    def register(fn: Callable) -> Callable:
        ENTRIES.append(Entry(part, function, name, fn, hint, True, source))
        return fn
    return register


def variant(part: str, function: str, name: str, source: str = ""):
    def register(fn: Callable) -> Callable:
        ENTRIES.append(Entry(part, function, name, fn, "", False, source))
        return fn
    return register


def load_all() -> list[Entry]:
    for info in pkgutil.iter_modules(__path__):
        importlib.import_module(f"{__name__}.{info.name}")
    return ENTRIES


def mistakes_of(function: str) -> list[Entry]:
    return [e for e in load_all() if e.is_mistake and e.function == function]


def entry_function(entry: Entry) -> Callable:
    return entry.impl


def submission_source(entry: Entry) -> str:
    """The reference's source with `entry` appended under the contract name (it overrides the original)."""
    source = textwrap.dedent(inspect.getsource(entry.impl))
    source = re.sub(r"^@(mistake|variant)\(.*?\)\n", "", source, flags=re.S | re.M)
    source = re.sub(r"^def \w+\(", f"def {entry.function}(", source, count=1, flags=re.M)
    module = inspect.getmodule(entry.impl)
    helpers = [inspect.getsource(f) for name, f in vars(module).items()
               if name.startswith("_") and inspect.isfunction(f) and f.__module__ == module.__name__]
    return (world.REFERENCE.read_text() + f"\n\n# ---- bank entry {entry.id} ----\n" + "\n\n".join(helpers)
            + "\n\n" + source)
