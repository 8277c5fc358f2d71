"""Lab 13's hooks (registry.Lab), registered when the engine imports this module for a full grade.

The training code's function bundle, tiny probe inputs, the engine's mistake diagnosis over this lab's bank with
its confirmation inputs, the plots, the fresh twins of the public checks' inputs, the differential checks' chosen
examples and the data file computed from the lab's code (the checks' shipped examples: `refresh`). The inputs are
this lab's for grpo_policy_loss; the engine derives the other functions' from their declared domains
(autograder/checks/lab_inputs.py), and runs this lab's chosen examples and confirmation inputs after them.
Importing it registers the end-to-end tests (e2e_tests.py); the checks register from checks/
(autograder.checks.load_all).
"""

from __future__ import annotations

import torch

from autograder import replay
from autograder.checks import examples
from autograder.judge import diagnosis
from autograder.lab import config, registry
from autograder.lab.paths import use_world

from . import e2e_tests, plots, replays  # noqa: F401  (e2e_tests: its @e2e_test registrations)
from .checks.hidden import chosen

use_world()
import training  # noqa: E402

LOGPROB_ARGS = ("old_logp", "ref_logp")


def twin(function: str, args: tuple, kwargs: dict, valid: bool, position: int) -> tuple[tuple, dict]:
    """A fresh input like a public check's of grpo_policy_loss (the function whose domain grading.yaml does not
    declare: the engine draws the others' from theirs): the same shapes, dtype, mask and settings, new values.

    Log-probs are drawn in [-10, 0); `logp` sits within +-0.5 of `old_logp`, so both clip branches occur;
    advantages are standard normal. The mask and every non-tensor argument are kept."""
    if not valid:
        return args, dict(kwargs)
    g = torch.Generator().manual_seed(13_000 + position)
    names = config.current().contract[function].parameters
    drawn: dict[str, torch.Tensor] = {}
    for name, a in zip(names, args):
        if not isinstance(a, torch.Tensor) or name == "mask":
            continue
        if name in LOGPROB_ARGS:
            drawn[name] = -10 * torch.rand(a.shape, generator=g, dtype=torch.float64)
        elif name != "logp":
            drawn[name] = torch.randn(a.shape, generator=g, dtype=torch.float64)
    if "logp" in names[:len(args)]:
        old = drawn["old_logp"]
        drawn["logp"] = old + (torch.rand(old.shape, generator=g, dtype=torch.float64) - 0.5)
    fresh = tuple(drawn[n].to(a.dtype) if n in drawn else a for n, a in zip(names, args))
    return fresh, dict(kwargs)


registry.register_lab(registry.Lab(
    name="lab13",
    make_parts=lambda functions: training.Parts(**functions),
    probe_inputs=training.probe_inputs,
    diagnose=diagnosis.diagnose,
    plot=plots.e2e_plots,
    confirmation_calls=chosen.confirmation_calls,
    twin=twin,
    data_files=(  # the checks' examples, then the recorded trainings
        registry.DataFile(examples.DATA_FILE, examples.is_current, examples.write),
        registry.DataFile(replay.DATA_FILE, replay.is_current, replay.write_reference),
    ),
    band_metrics=("reward", "loss", "margin"),  # per GRPO iteration (reward), per DPO step (loss, margin)
    chosen_examples=chosen.examples,
    replays=replays.FACTS,
))
