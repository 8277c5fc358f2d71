"""Public checks of compute_gae: hand-computed examples, no reference needed."""

from __future__ import annotations

import torch

from autograder.checks import Context, check
from autograder.checks.tools import call

NAMES = ("rewards", "values", "mask")


@check("gae.known_values", "compute_gae on a small hand-computed example (ragged mask)",
       functions=("compute_gae",))
def known_values(ctx: Context) -> None:
    # Row 0 has 3 generated tokens, row 1 has 1; padded positions hold garbage on purpose.
    rewards = torch.tensor([[0.0, 0.0, 1.0, 9.0], [2.0, 9.0, 9.0, 9.0]])
    values = torch.tensor([[0.5, 0.25, 0.5, 9.0], [1.0, 9.0, 9.0, 9.0]])
    mask = torch.tensor([[1.0, 1.0, 1.0, 0.0], [1.0, 0.0, 0.0, 0.0]])
    # gamma = lam = 0.5:  delta_t = r_t + gamma V_{t+1} - V_t,  A_t = delta_t + gamma lam A_{t+1}
    # row 0: delta = [-0.375, 0, 0.5],  A = [-0.375 + 0.25 * 0.125, 0 + 0.25 * 0.5, 0.5]
    # row 1: delta = [1.0],             A = [1.0]
    advantages = torch.tensor([[-0.34375, 0.125, 0.5, 0.0], [1.0, 0.0, 0.0, 0.0]])
    answer = call(ctx, "compute_gae", rewards, values, mask, gamma=0.5, lam=0.5, names=NAMES,
                  shape=(2, 4), tuple_of=2)
    adv, ret = answer.value
    answer.expect_close(ctx, adv, advantages, "advantages differ from the hand-computed ones", mask)
    answer.expect_close(ctx, ret, advantages + values, "returns should be advantages + values", mask)
