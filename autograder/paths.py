"""Where things live: the engine, and the lab it grades (a folder), and how the judge imports the lab's world.

A lab is a folder (docs/labs.md): `grading.yaml`, `assignment/` (the given world, the starter, public tests),
`solutions/` (the hidden reference), `release/` (bundle recipes) and `grading/` (the lab's grader package:
its checks, e2e tests, bank, data files, hooks). The repository's root is its own lab's folder; `--lab DIR`
(AUTOGRADER_LAB in the environment, inherited by every judge process) grades another.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from autograder.lab_folder import GRADING_YAML, LAB, ROOT

__all__ = ["ASSIGNMENT", "ENGINE", "GRADING", "GRADING_YAML", "LAB", "LAB_DATA", "ROOT", "SOLUTIONS",
           "use_world"]  # and REFERENCE, STARTER, WORLD_FILES (__getattr__)

ENGINE = Path(__file__).resolve().parent          # this package: knows no lab
ASSIGNMENT = LAB / "assignment"       # what students get: the given world, the starter, public tests
if not ASSIGNMENT.is_dir():           # the student bundle: the world sits next to the bundled engine
    ASSIGNMENT = LAB
SOLUTIONS = LAB / "solutions"         # the hidden reference
GRADING = LAB / "grading"             # the lab's grader package (loaded by path: registry.package())
LAB_DATA = GRADING / "data"           # its shipped data files
# What of the lab's grader package students get (the self-check's checks); everything else in it is secret, with
# solutions/ and grading.yaml (secret_files.grader_roots: the one list the preflight, the sandbox and the release use).
PUBLIC_GRADING = ("__init__.py", "checks/__init__.py", "checks/public")


def __getattr__(name: str) -> Any:
    """REFERENCE, STARTER (the submission's file in solutions/ and assignment/) and WORLD_FILES, from grading.yaml."""
    from autograder import config
    if name == "REFERENCE":
        return SOLUTIONS / config.current().submission
    if name == "STARTER":
        return ASSIGNMENT / config.current().submission
    if name == "WORLD_FILES":
        return config.current().world
    raise AttributeError(name)


def use_world() -> None:
    """Make the given world (its modules, e.g. tinylm) importable by name, as students import it."""
    if str(ASSIGNMENT) not in sys.path:
        sys.path.insert(0, str(ASSIGNMENT))
