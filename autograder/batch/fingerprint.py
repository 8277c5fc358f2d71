"""What decides a regrade: the grader's version and each job's key (standard library only).

The grader's version is a hash of everything that can change a grade or a student's report: the
autograder package (except the batch and bundling machinery, which change no grade), the reference solution,
grading.yaml and the given world the sandbox copies. A job's key adds the submission's bytes and
the `--only` selection, so a rerun regrades exactly the submissions whose key changed.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
from pathlib import Path

from autograder.lab.paths import ENGINE, GRADING, GRADING_YAML, LAB, REFERENCE, world_files

PACKAGE = ENGINE
# Files of the package that cannot change a grade: the batch runner, the commands, the class report, the bundling.
GRADE_NEUTRAL = ("batch/", "bundling/", "commands/", "__main__.py", "templates/class_report.html.j2")


def grader_files() -> list[Path]:
    """The files whose bytes make the grader's version, in a fixed order: the engine's (but those that cannot
    change a grade), the lab's grading/ package, its reference, grading.yaml and world."""
    def files(folder: Path) -> list[Path]:
        return sorted(p for p in folder.rglob("*") if p.is_file() and p.suffix != ".pyc"
                      and not any(part.startswith((".", "__pycache__")) for part in p.relative_to(folder).parts))
    engine = [p for p in files(PACKAGE) if not p.relative_to(PACKAGE).as_posix().startswith(GRADE_NEUTRAL)]
    lab = files(GRADING) if GRADING.is_dir() else []
    return [*engine, *lab, REFERENCE, GRADING_YAML, *world_files().values()]


@functools.lru_cache(maxsize=1)
def grader_version() -> str:
    """sha256 of the grader's files (cached: a process keeps the code it imported first)."""
    digest = hashlib.sha256()
    for path in grader_files():
        data = path.read_bytes() if path.is_file() else b"<absent>"
        label = (f"engine/{path.relative_to(ENGINE).as_posix()}" if path.is_relative_to(ENGINE)
                 else f"lab/{os.path.relpath(path, LAB)}").encode()  # a shared world file: ../
        digest.update(len(label).to_bytes(8, "big") + label + len(data).to_bytes(8, "big") + data)
    return digest.hexdigest()


def job_key(data: bytes, filename: str, only: list[str] | None, version: str) -> str:
    """The key of grading these submission bytes with this selection of tests by this grader."""
    head = json.dumps({"file": filename, "only": sorted(only or []), "grader": version}, sort_keys=True)
    return hashlib.sha256(head.encode() + b"\0" + data).hexdigest()
