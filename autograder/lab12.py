"""Lab 12 (RLHF on a tiny transformer), as the engine sees it: importing this module registers the lab.

It registers the end-to-end tests (autograder/e2e_tests.py) and the hooks of registry.Lab: the training
code's function bundle, tiny probe inputs, the mistake diagnosis, the plots and the data files computed from
the lab's code (`python -m autograder refresh`). Its checks register
themselves under autograder/checks/ (loaded by checks.load_all()).
"""

from __future__ import annotations

from pathlib import Path

from autograder import (
    baseline,
    checks,
    diagnosis,
    e2e_tests,  # noqa: F401  (its @e2e_test registrations)
    plots,
    registry,
    replay,
)
from autograder.paths import use_world

use_world()
import training  # noqa: E402

EXAMPLES = Path(checks.__file__).resolve().parent / "hidden" / "examples.json"  # the hidden checks' draws


def _examples_current() -> bool:
    from autograder.checks.hidden import examples  # hidden: not in the student bundle
    return examples.is_current()


def _write_examples() -> object:
    from autograder.checks.hidden import examples
    return examples.write()


def _write_replays() -> object:
    replay.write(replay.record_reference())
    return None


registry.register_lab(registry.Lab(
    name="lab12",
    make_parts=lambda functions: training.Parts(**functions),
    probe_inputs=training.probe_inputs,
    diagnose=diagnosis.diagnose,
    plot=plots.e2e_plots,
    data_files=(  # examples.json first (the checks), then baseline.json, which replays.bin depends on
        registry.DataFile(EXAMPLES, _examples_current, _write_examples),
        registry.DataFile(baseline.DATA_FILE, baseline.is_current, baseline.write),
        registry.DataFile(replay.REPLAYS, replay.is_current, _write_replays),
    ),
))
