"""What Lab 12's plots name (the engine draws them: autograder/judge/plots.py): its metrics' panel titles, its
runs' legends, per PPO iteration.

    e2e_plots("ptx", {"ptx": history, "no ptx": history}, ("accuracy",))   # [(title, PNG bytes)]
"""

from __future__ import annotations

import functools

from autograder.judge import plots

LABELS = {"rm_score": "RM score", "gold": "gold score", "kl": "KL to SFT (nats)",
          "malformed": "malformed fraction", "accuracy": "arithmetic accuracy"}
RUNS = {"run": "your run", "ptx": "your run with ptx", "no ptx": "your run without ptx"}

e2e_plots = functools.partial(plots.e2e_plots, labels=LABELS, runs=RUNS, step="PPO iteration")
