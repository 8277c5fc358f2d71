"""Where things live in the repository, and how the trusted side imports the given world."""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ASSIGNMENT = ROOT / "assignment"      # what students get: the given world, the starter, public tests
if not ASSIGNMENT.is_dir():           # the student bundle: the world sits next to the bundled engine
    ASSIGNMENT = ROOT
SOLUTIONS = ROOT / "solutions"        # the hidden reference
REFERENCE = SOLUTIONS / "rlhf.py"
STARTER = ASSIGNMENT / "rlhf.py"
GRADING_YAML = ROOT / "grading.yaml"
WORLD_FILES = ("tinylm.py", "lab_helpers.py", "training.py", "sft.pt")  # the given world, under ASSIGNMENT


def use_world() -> None:
    """Make the given world (tinylm, lab_helpers, training) importable by name, as students import it."""
    if str(ASSIGNMENT) not in sys.path:
        sys.path.insert(0, str(ASSIGNMENT))
