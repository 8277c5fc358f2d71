"""Lab 12's facts for replaying the reference's trainings (registry.Replays; the engine's autograder/replay/).

How the training passes an answer on (training.train_ppo): compute_gae gets on_tokens of shaped_rewards' answer,
the minibatches get rows of masked_whiten(on_tokens(advantages)) and of on_tokens(returns), each with the mask of
the call that answered. The runs optimise against the reference RM of the shipped baseline. The reward model's
training passes no answer on (each loss's gradient goes into the optimiser, not into a later call's inputs).
"""

from __future__ import annotations

from autograder.lab import registry
from autograder.lab.paths import use_world

from . import baseline

use_world()
import training  # noqa: E402


def _whitened(x, mask):
    return training.masked_whiten(training.on_tokens(x, mask), mask)


FACTS = registry.Replays(passes_on={"on_tokens": training.on_tokens, "whitened": _whitened},
                         depends_on=(baseline.DATA_FILE,))
