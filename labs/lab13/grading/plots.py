"""What Lab 13's plots name (the engine draws them: autograder/judge/plots.py): its metrics' panel titles, per
training step (GRPO iteration, DPO step).

    e2e_plots("dpo_gold", {"run": history}, ("loss", "margin"))   # [(title, PNG bytes)]
"""

from __future__ import annotations

import functools

from autograder.judge import plots

LABELS = {"reward": "mean reward", "equal_groups": "fraction of all-equal groups", "length": "answer length",
          "loss": "loss", "margin": "margin (nats)", "chosen_logp_change": "chosen log-prob change (nats)"}

e2e_plots = functools.partial(plots.e2e_plots, labels=LABELS)
