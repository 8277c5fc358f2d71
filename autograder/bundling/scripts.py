"""Step: Gradescope's setup.sh and run_autograder, rendered from the engine's templates (executable)."""

from __future__ import annotations

import jinja2

from autograder.bundling.tree import Tree


def add_scripts(tree: Tree, env: jinja2.Environment, scripts: dict[str, str], context: dict) -> None:
    """Each `template: bundle path` of `scripts` (templates named as `env` finds them), rendered with `context`."""
    for template, target in scripts.items():
        tree.add(target, env.get_template(template).render(**context), executable=True)
