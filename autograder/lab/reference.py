"""The trusted reference (the lab's solutions/<submission>), imported in the judge only."""

from __future__ import annotations

import functools
import importlib.util
from types import ModuleType

from autograder.lab.paths import REFERENCE


class NoReference(Exception):
    """A full grade was asked for where the reference is absent (the student bundle ships none)."""


@functools.lru_cache(maxsize=1)
def load_reference() -> ModuleType:
    """The reference module (loaded once per process)."""
    if not REFERENCE.is_file():
        raise NoReference(f"the reference {REFERENCE} is not here: only the self-check can run")
    spec = importlib.util.spec_from_file_location("lab_reference", REFERENCE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
