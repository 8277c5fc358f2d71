"""Lab 13's facts for replaying the reference's GRPO, Dr. GRPO, DPO and IPO runs (registry.Replays; the engine's
autograder/replay/).

Its training passes answers on as they are (training.py): the minibatches get rows of group_advantages' answer,
dpo_loss gets sequence_logprob's per-row values (and rows of the reference's), and sequence_logprob's backward
gets dpo_loss's gradients; the engine finds each of these while recording, so no transform is declared.
"""

from __future__ import annotations

from autograder.lab import registry

FACTS = registry.Replays()
