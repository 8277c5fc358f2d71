"""A declared function's fresh twins are the engine's, whatever the lab's hooks say, and its confirmation inputs and
chosen examples the engine's then the lab's; the lab's hooks alone serve the functions it does not declare
(autograder/checks/lab_inputs.py). Checked on a copy of the toy lab whose grading/lab.py gives hooks that mark what
they answer: `scale` declares its domain, `masked_mean` does not."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from autograder.lab.paths import ROOT

HOOKS = """
import types

import torch

from autograder.checks import examples
from autograder.judge import diagnosis
from autograder.lab import registry

from . import e2e_tests  # noqa: F401

MARK = torch.tensor([[7.0, 7.0]])


def twin(function, args, kwargs, valid, position):
    return (MARK, torch.ones(1, 2)), {"twin": function}


registry.register_lab(registry.Lab(
    name="toylab", make_parts=lambda functions: types.SimpleNamespace(**functions),
    probe_inputs=lambda: {"masked_mean": (torch.ones(1, 2), torch.ones(1, 2)), "scale": (torch.ones(2), 2.0)},
    diagnose=diagnosis.diagnose, plot=lambda t, h, m: [], twin=twin,
    confirmation_calls=lambda function: [((MARK, torch.ones(1, 2)), {"confirm": function})],
    chosen_examples=lambda function: [("extra", function)],
    data_files=(registry.DataFile(examples.DATA_FILE, examples.is_current, examples.write),)))
"""

CHECK = """
import torch
from autograder.checks import declared, lab_inputs

shown = (torch.ones(2, 3), 2.0)
assert lab_inputs.fresh_twin("scale", shown, {}, True, 0)[0][1] == 2.0   # the declared domain's twin
assert lab_inputs.fresh_twin("scale", shown, {}, True, 0)[1] == {}
assert lab_inputs.fresh_twin("masked_mean", shown, {}, True, 0)[1] == {"twin": "masked_mean"}  # the lab's

derived = declared.confirmation_calls("scale")
got = lab_inputs.confirmation_inputs("scale")
assert len(got) == len(derived) + 1 and all(not kwargs for _, kwargs in got[:-1])  # derived first, then the lab's
assert got[-1][1] == {"confirm": "scale"}
assert lab_inputs.confirmation_inputs("masked_mean")[0][1] == {"confirm": "masked_mean"}

chosen = lab_inputs.chosen_inputs("scale")
assert chosen[-1] == ("extra", "scale") and len(chosen) == len(declared.chosen("scale")) + 1  # derived first
assert lab_inputs.chosen_inputs("masked_mean") == [("extra", "masked_mean")]
print("ok")
"""


def test_a_declared_functions_inputs_are_derived_and_the_labs_hooks_serve_the_others(tmp_path: Path):
    lab = tmp_path / "lab"
    shutil.copytree(ROOT / "tests" / "toylab", lab, ignore=shutil.ignore_patterns("__pycache__"))
    yaml = lab / "grading.yaml"
    text = yaml.read_text()
    domain = "     domain: {x: tensor B T, mask: mask B T},\n"
    assert domain in text
    yaml.write_text(text.replace(domain, "").replace("  mean.matches_reference:", "  # mean.matches_reference:"))
    (lab / "grading" / "lab.py").write_text(HOOKS)
    done = subprocess.run([sys.executable, "-c", CHECK], cwd=ROOT, capture_output=True, text=True, timeout=300,
                          env={**os.environ, "AUTOGRADER_LAB": str(lab)})
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr[-3000:]
