"""Lab 12's facts for replaying the reference's PPO runs (registry.Replays; the engine's autograder/replay/).

How the training passes an answer on (training.train_ppo): compute_gae gets on_tokens of shaped_rewards' answer,
the minibatches get rows of masked_whiten(on_tokens(advantages)) and of on_tokens(returns), each with the mask of
the call that answered. The pace's pieces: a no-grad forward pass of the SFT policy over one sampled row
(~1.4 ms) and a forward and backward pass over 32 (~8 ms, a PPO minibatch's). The runs optimise against the
reference RM of the shipped baseline.
"""

from __future__ import annotations

import random
from collections.abc import Callable

import torch

from autograder import registry
from autograder.paths import use_world

from . import baseline

use_world()
import tinylm  # noqa: E402
import training  # noqa: E402


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


def _whitened(x, mask):
    return training.masked_whiten(training.on_tokens(x, mask), mask)


FACTS = registry.Replays(pace_pieces=_pace_pieces,
                         passes_on={"on_tokens": training.on_tokens, "whitened": _whitened},
                         depends_on=(baseline.DATA_FILE,))
