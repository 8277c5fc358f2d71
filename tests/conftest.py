"""Shared fixtures: the given world importable by name, the lab's grading package importable by its name (`lab12`:
the tests import its modules as `from lab12.checks.hidden import domains`), the reference and starter paths."""

from __future__ import annotations

import importlib.util
from types import ModuleType

import pytest

from autograder.lab import registry
from autograder.lab.paths import REFERENCE, STARTER, use_world

use_world()
registry.package()


def load_module(path, name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="session")
def ref() -> ModuleType:
    return load_module(REFERENCE, "reference_rlhf")


@pytest.fixture(scope="session")
def starter() -> ModuleType:
    return load_module(STARTER, "starter_rlhf")
