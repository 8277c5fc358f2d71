"""The hooks of a lab that writes no grading/lab.py: each derived from its grading.yaml (registry.lab imports this
module by name, as it would the lab's own lab.py). Importing it registers them, and the lab's end-to-end tests
(its grading/e2e_tests.py, when there is one).

    parts         the training bundle: a namespace of the contract functions (parts.masked_mean)
    probe inputs  one draw per function from its declared domain (autograder/checks/domains.py)
    twins, confirmation inputs and chosen examples: the engine's, derived from each declared domain for every lab
                  (checks/lab_inputs.py)
    plots         its e2e tests' runs against the reference's band, each metric named as it is (judge/plots.py)
    data files    the property checks' shipped draws (checks/examples.py)
"""

from __future__ import annotations

import types

from autograder.checks import domains, examples
from autograder.judge import diagnosis, plots
from autograder.lab import config, registry

if registry.has_module("e2e_tests"):
    registry.lab_module("e2e_tests")

registry.register_lab(registry.Lab(
    name=config.current().lab,
    make_parts=lambda functions: types.SimpleNamespace(**functions),
    probe_inputs=domains.probe_inputs,
    diagnose=diagnosis.diagnose,
    plot=plots.e2e_plots,  # each metric named as its history names it
    data_files=(registry.DataFile(examples.DATA_FILE, examples.is_current, examples.write),),
))
