"""Step: the handout README.md, rendered with jinja2 from the lab's parts, grading.yaml's points and the e2e tests'
declarations (their descriptions)."""

from __future__ import annotations

import re
from pathlib import Path

import jinja2

from autograder.bundling.outline import Outline
from autograder.bundling.public_config import visible_tests
from autograder.bundling.recipes import ASSETS
from autograder.bundling.tree import Tree
from autograder.judge import templating

TAG = re.compile(r"(?<!`)<[\w/]+>(?!`)")  # "<eos>" in prose: markdown would take it for an HTML tag and hide it


def environment(lab_release: Path) -> jinja2.Environment:
    """Templates by name: `engine/NAME` is the engine's (assets/NAME), `lab/NAME` the lab's (its release/NAME)."""
    loader = jinja2.PrefixLoader({"engine": jinja2.FileSystemLoader(ASSETS),
                                  "lab": jinja2.FileSystemLoader(lab_release)})
    env = templating.environment(loader, authored=True)  # the lab's own markdown, written at release
    env.filters["fmt"] = lambda x: f"{x:g}"
    env.filters["tags_as_code"] = lambda text: TAG.sub(r"`\g<0>`", text)
    return env


def part_points(raw: dict, part: str) -> dict[str, float]:
    """Public ("visible"), other ("hidden") and all unit-test points of a part (its tests' ids start with `part.`)."""
    specs = {test_id: spec for test_id, spec in raw["tests"].items() if test_id.split(".")[0] == part}
    visible = sum(spec["points"] for test_id, spec in visible_tests(raw).items() if test_id in specs)
    unit = sum(spec["points"] for spec in specs.values())
    return {"visible": visible, "hidden": unit - visible, "unit": unit}


def file_rows(tree: Tree, described: dict[str, str]) -> list[tuple[str, str]]:
    """(top-level name, what it is) for every top-level file and folder of `tree` (folders end in "/")."""
    names = sorted({path.split("/")[0] + ("/" if "/" in path else "") for path in tree.files})
    missing = [name for name in names if name not in described]
    if missing:
        raise ValueError(f"release/recipes.yaml: `files` does not describe {', '.join(missing)}")
    order = list(described)
    return [(name, described[name]) for name in sorted(names, key=order.index)]


def handout_context(lab: Outline, raw: dict, descriptions: dict[str, str], torch: str, tree: Tree, folder: str,
                    files: list[tuple[str, str]]) -> dict:
    """What the handout and the notebook's introduction show about a release whose student files are `tree`;
    `descriptions`: each e2e test's, from its `@e2e_test` declaration."""
    points = {part.name: part_points(raw, part.name) for part in lab.parts}
    missing = sorted(set(raw["e2e"]) - set(descriptions))
    if missing:
        raise ValueError(f"grading.yaml e2e: no @e2e_test declares {', '.join(missing)} under grading/")
    e2e = [{"name": name, "parts": spec["parts"], "points": spec["points"],
            "description": descriptions[name]} for name, spec in raw["e2e"].items()]
    unit_total = sum(p["unit"] for p in points.values())
    return {
        "title": raw["title"], "folder": folder, "submission": raw["submission"], "files": files, "lab": lab,
        "points": points, "e2e": e2e, "torch": torch,
        "has_experiments": "run_experiments.py" in tree.files,
        "has_tests": any(path.startswith("tests/") for path in tree.files),
        "visible_points": sum(p["visible"] for p in points.values()),
        "total_points": unit_total + sum(t["points"] for t in e2e),
    }


def add_handout(tree: Tree, env: jinja2.Environment, template: str, target: str, context: dict) -> None:
    tree.add(target, env.get_template(template).render(**context))
