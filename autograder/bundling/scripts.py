"""Step: Gradescope's setup.sh and run_autograder, rendered from their templates (executable)."""

from __future__ import annotations

from pathlib import Path

from autograder.bundling.handout import environment
from autograder.bundling.tree import Tree


def add_scripts(tree: Tree, templates: Path, scripts: dict[str, str], context: dict) -> None:
    env = environment(templates)
    for template, target in scripts.items():
        tree.add(target, env.get_template(template).render(**context), executable=True)
