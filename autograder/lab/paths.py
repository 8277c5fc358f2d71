"""Where things live: the engine, and the lab it grades (a folder), and how the judge imports the lab's world.

A lab is a folder (docs/labs.md): `grading.yaml`, `assignment/` (the given world, the starter, public tests),
`solutions/` (the hidden reference), `release/` (bundle recipes) and `grading/` (the lab's grader package:
its checks, e2e tests, bank, data files, hooks). The repository's root is its own lab's folder; `--lab DIR`
(AUTOGRADER_LAB in the environment, inherited by every judge process) grades another.
"""

from __future__ import annotations

import importlib.abc
import importlib.util
import sys
from pathlib import Path, PurePosixPath
from typing import Any

from autograder.lab.lab_folder import GRADING_YAML, LAB, ROOT

__all__ = ["ASSIGNMENT", "ENGINE", "GRADING", "GRADING_YAML", "LAB", "LAB_DATA", "ROOT", "SOLUTIONS",
           "use_world", "world_files"]  # and REFERENCE, STARTER (__getattr__)

ENGINE = Path(__file__).resolve().parents[1]        # this package: knows no lab
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
    """REFERENCE and STARTER: the submission's file in solutions/ and assignment/, from grading.yaml."""
    from autograder.lab import config
    if name == "REFERENCE":
        return SOLUTIONS / config.current().submission
    if name == "STARTER":
        return ASSIGNMENT / config.current().submission
    raise AttributeError(name)


def world_files(entries: tuple[str, ...] | None = None, lab: Path = LAB) -> dict[str, Path]:
    """The given world (grading.yaml `world`): the name students see each file under -> the file.

    An entry is a file of the lab's assignment/ or a path from the lab's folder to another lab's file
    (`../other_lab/assignment/model.py`: one copy of a shared world). A bundle holds every world file in its own
    folder under its name, so a file found there is the one; the declared path otherwise. `lab`: another lab
    folder of the same layout (a release's)."""
    from autograder.lab import config
    found = {}
    for entry in config.current().world if entries is None else entries:
        name = PurePosixPath(entry).name
        own = lab / ASSIGNMENT.relative_to(LAB) / name
        found[name] = own if own.is_file() or "/" not in entry else lab / entry
    return found


class _WorldFinder(importlib.abc.MetaPathFinder):
    """Finds the world's modules by name wherever their files are (another lab's folder included)."""

    def __init__(self, modules: dict[str, Path]):
        self.modules = modules

    def find_spec(self, name, path=None, target=None):  # type: ignore[no-untyped-def]
        file = self.modules.get(name) if path is None else None
        return importlib.util.spec_from_file_location(name, file) if file is not None else None


def use_world() -> None:
    """Make the given world (its modules, e.g. tinylm) importable by name, as students import it."""
    if str(ASSIGNMENT) not in sys.path:
        sys.path.insert(0, str(ASSIGNMENT))
    if not any(isinstance(f, _WorldFinder) for f in sys.meta_path):
        modules = {Path(name).stem: file for name, file in world_files().items() if file.suffix == ".py"}
        sys.meta_path.insert(0, _WorldFinder(modules))
