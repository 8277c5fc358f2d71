"""Which lab this process works on: a folder holding grading.yaml (docs/labs.md). Imports nothing of the engine.

The repository's root is its own lab's folder; `python -m autograder --lab DIR` sets AUTOGRADER_LAB, which every
judge process and child inherits.
"""

from __future__ import annotations

import os
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]    # the repository (in a bundle: the bundle's folder)
LAB = Path(os.environ.get("AUTOGRADER_LAB") or ROOT).resolve()
GRADING_YAML = LAB / "grading.yaml"
