"""Shared fixtures: the given world importable by name, the lab's grading package importable by its name (`lab12`:
the tests import its modules as `from lab12.checks.hidden import domains`), the reference and starter paths, and Lab
13's contract as this process's (its declared domains: tests/test_units.py, test_groups.py, test_token_units.py)."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

import pytest

from autograder.lab import config, registry
from autograder.lab.paths import REFERENCE, ROOT, STARTER, use_world

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


@pytest.fixture
def lab13_yaml() -> Path:
    """Lab 13's grading.yaml (tests load edited copies of it)."""
    return ROOT / "labs" / "lab13" / "grading.yaml"


@pytest.fixture
def lab13(monkeypatch, lab13_yaml) -> config.Config:
    """This process's contract is Lab 13's (declared, domains and units read config.current())."""
    cfg = config.load(lab13_yaml)
    monkeypatch.setattr(config, "current", lambda: cfg)
    return cfg
