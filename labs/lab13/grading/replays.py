"""Lab 13's facts for replaying the reference's GRPO, Dr. GRPO, DPO and IPO runs (registry.Replays; the engine's
autograder/replay/).

Its training passes answers on as they are (training.py): the minibatches get rows of group_advantages' answer,
dpo_loss gets sequence_logprob's per-row values (and rows of the reference's), and sequence_logprob's backward
gets dpo_loss's gradients; the engine finds each of these while recording, so no transform is declared. The
pace's pieces: a no-grad forward pass of the SFT policy over one sampled row (~1.4 ms) and a forward and
backward pass over 32 (~8 ms).
"""

from __future__ import annotations

import random
from collections.abc import Callable

import torch

from autograder import registry
from autograder.paths import use_world

use_world()
import tinylm  # noqa: E402


def _pace_pieces() -> dict[str, Callable[[], object]]:
    policy = tinylm.load_sft()
    short, long = (tinylm.sample(policy, tinylm.make_batch(rows, random.Random(0))[0], temperature=1.0)
                   for rows in (1, 32))

    def forward() -> None:
        with torch.no_grad():
            tinylm.sequence_logprobs(policy, short)

    def forward_backward() -> None:
        tinylm.sequence_logprobs(policy, long).sum().backward()
        policy.zero_grad(set_to_none=True)

    return {"short": forward, "long": forward_backward}


FACTS = registry.Replays(pace_pieces=_pace_pieces)
