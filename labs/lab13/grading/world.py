"""Where Lab 13's files live, and the imports of its given world and its reference (trusted side only).

The world is Lab 12's (tinylm.py, lab_helpers.py, sft.pt in the repository's assignment/), reused as it
is; Lab 13 adds its own training.py. Both folders go on sys.path, Lab 13's first.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

LAB = Path(__file__).resolve().parent.parent           # labs/lab13
ASSIGNMENT = LAB / "assignment"
REFERENCE = LAB / "solutions" / "posttrain.py"
STARTER = ASSIGNMENT / "posttrain.py"
SHARED_WORLD = LAB.parent.parent / "assignment"          # Lab 12's world: tinylm.py, lab_helpers.py, sft.pt
GRADING_YAML = LAB / "grading.yaml"


def use_world() -> None:
    """Make tinylm, lab_helpers and Lab 13's training importable by name, as students import them."""
    for folder in (SHARED_WORLD, ASSIGNMENT):
        if str(folder) not in sys.path:
            sys.path.insert(0, str(folder))


def load_module(path: Path, name: str) -> ModuleType:
    """Import the file at `path` as a fresh module called `name` (the reference, a bank submission...)."""
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def load_reference() -> ModuleType:
    return load_module(REFERENCE, "lab13_reference")
