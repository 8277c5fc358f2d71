"""Lab 12 (RLHF on a tiny transformer), as the engine sees it: importing this module registers the lab.

It registers the end-to-end tests (autograder/e2e_tests.py) and the hooks of registry.Lab: the training
code's function bundle, tiny probe inputs, the mistake diagnosis and the plots. Its checks register
themselves under autograder/checks/ (loaded by checks.load_all()).
"""

from __future__ import annotations

from autograder import (
    diagnosis,
    e2e_tests,  # noqa: F401  (its @e2e_test registrations)
    plots,
    registry,
)
from autograder.paths import use_world

use_world()
import training  # noqa: E402

registry.register_lab(registry.Lab(
    name="lab12",
    make_parts=lambda functions: training.Parts(**functions),
    probe_inputs=training.probe_inputs,
    diagnose=diagnosis.diagnose,
    plot=plots.e2e_plots,
))
