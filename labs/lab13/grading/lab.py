"""Lab 13's hooks (registry.Lab), registered when the engine imports this module for a full grade.

The training code's function bundle, tiny probe inputs, the engine's mistake diagnosis over this lab's bank with
its confirmation inputs, the plots, the differential checks' chosen examples and the data file computed from the
lab's code (the checks' shipped examples: `refresh`). Every function declares its domain: the engine derives the fresh
twins, chosen examples and confirmation inputs from them (autograder/checks/lab_inputs.py), and runs this lab's chosen
examples and confirmation inputs after them.
Importing it registers the end-to-end tests (e2e_tests.py); the checks register from checks/
(autograder.checks.load_all).
"""

from __future__ import annotations

from autograder import replay
from autograder.checks import examples
from autograder.judge import diagnosis
from autograder.lab import registry
from autograder.lab.paths import use_world

from . import e2e_tests, plots, replays  # noqa: F401  (e2e_tests: its @e2e_test registrations)
from .checks.hidden import chosen

use_world()
import training  # noqa: E402

registry.register_lab(registry.Lab(
    name="lab13",
    make_parts=lambda functions: training.Parts(**functions),
    probe_inputs=training.probe_inputs,
    diagnose=diagnosis.diagnose,
    plot=plots.e2e_plots,
    confirmation_calls=chosen.confirmation_calls,
    data_files=(  # the checks' examples, then the recorded trainings
        registry.DataFile(examples.DATA_FILE, examples.is_current, examples.write),
        registry.DataFile(replay.DATA_FILE, replay.is_current, replay.write_reference),
    ),
    band_metrics=("reward", "loss", "margin"),  # per GRPO iteration (reward), per DPO step (loss, margin)
    chosen_examples=chosen.examples,
    replays=replays.FACTS,
))
