"""Step: the starter, generated from the reference (the same generator as `python -m autograder starter`)."""

from __future__ import annotations

from pathlib import Path

from autograder.bundling.tree import Tree
from autograder.lab.starter import strip_solutions


def add_starter(tree: Tree, reference: Path, target: str) -> None:
    tree.add(target, strip_solutions(reference.read_text()))
