"""Step: grading.yaml for the student bundle, holding only what the self-check needs.

Kept: the lab's name and title, the submission file, the world, the contract, the visibility defaults, the hypothesis
settings, the limits, and the public tests (their inputs are `visible`: the reference-free checks
under grading/checks/public/) with their points. Dropped: every other test id and the whole
end-to-end section (seeds, thresholds, training settings).
"""

from __future__ import annotations

from pathlib import PurePosixPath

import yaml

from autograder.bundling.tree import Tree

HEADER = ("# The public part of the course's grading.yaml: the visible tests the self-check runs, and its\n"
          "# limits. The hidden and end-to-end tests are graded at submission; their settings are not here.\n")
KEPT = ("lab", "title", "submission", "world", "contract", "default_visibility", "default_inputs_visibility",
        "hypothesis", "calibration", "batch")  # the config requires them; they hold no test material


def visible_tests(raw: dict) -> dict[str, dict]:
    """The public tests: their inputs are visible right away (so they run in the self-check and the notebook)."""
    default = raw.get("default_inputs_visibility", "")
    return {test_id: spec for test_id, spec in raw["tests"].items()
            if spec.get("inputs_visibility", default) == "visible"}


def public_config(raw: dict) -> dict:
    public = {key: raw[key] for key in KEPT if key in raw}
    public["world"] = [PurePosixPath(entry).name for entry in raw["world"]]  # a shared file lies beside the rest
    public["tests"] = visible_tests(raw)
    public["e2e"] = {}
    if "limits" in raw:
        public["limits"] = raw["limits"]
    return public


def add_public_config(tree: Tree, raw: dict, target: str) -> None:
    tree.add(target, HEADER + "\n" + yaml.safe_dump(public_config(raw), sort_keys=False, default_flow_style=None))


def secrets(raw: dict) -> list[str]:
    """Strings that must never reach a student: the non-public test ids, the e2e thresholds' names.

    (The e2e tests' names are public: the handout describes each. Generic keys such as `seed` or `lr`
    also name ordinary arguments of the given code, so the test of the bundle checks instead that
    grading.yaml's whole `e2e` section is absent from the shipped one.)
    """
    hidden = [test_id for test_id in raw["tests"] if test_id not in visible_tests(raw)]
    thresholds = sorted({key for spec in raw["e2e"].values() for key in spec if key.startswith(("min_", "max_"))})
    return hidden + thresholds
