"""Lab 12's hooks (registry.Lab), registered when the engine imports this module for a full grade.

The training code's function bundle, tiny probe inputs, the mistake diagnosis (the engine's, over this lab's
bank), the plots, the chosen inputs that confirm a diagnosis, the fresh twins of the public checks' inputs,
and the data files computed from the lab's code (`python -m autograder refresh`). Importing it registers
the end-to-end tests (e2e_tests.py); the checks register from checks/ (autograder.checks.load_all).
"""

from __future__ import annotations

from autograder import replay
from autograder.checks import examples
from autograder.judge import diagnosis
from autograder.lab import registry
from autograder.lab.paths import use_world

from . import baseline, e2e_tests, plots, replays  # noqa: F401  (e2e_tests: its @e2e_test registrations)
from .checks.hidden import chosen, fresh

use_world()
import training  # noqa: E402

registry.register_lab(registry.Lab(
    name="lab12",
    make_parts=lambda functions: training.Parts(**functions),
    probe_inputs=training.probe_inputs,
    diagnose=diagnosis.diagnose,
    plot=plots.e2e_plots,
    confirmation_calls=chosen.confirmation_calls,
    twin=fresh.twin,
    twin_scale=fresh.scale,
    data_files=(  # examples.json first (the checks), then baseline.json, which replays.bin depends on
        registry.DataFile(examples.DATA_FILE, examples.is_current, examples.write),
        registry.DataFile(baseline.DATA_FILE, baseline.is_current, baseline.write),
        registry.DataFile(replay.DATA_FILE, replay.is_current, replay.write_reference),
    ),
    band_metrics=("rm_score", "gold", "kl"),  # per PPO iteration
    chosen_examples=chosen.examples,
    replays=replays.FACTS,
))
