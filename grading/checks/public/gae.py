"""Public checks of compute_gae: hand-computed examples, no reference needed."""

from __future__ import annotations

import torch

from autograder.checks import Context, check
from autograder.checks.tools import call, public

NAMES = ("rewards", "values", "mask")


@check("gae.known_values", "compute_gae on a small hand-computed example (ragged mask)",
       functions=("compute_gae",))
@public
def known_values(ctx: Context) -> None:
    # Row 0 uses the whole budget (4 tokens), row 1 has 1 generated token, row 2 has 2; padded positions
    # hold garbage on purpose.
    rewards = torch.tensor([[0.0, 0.0, 1.0, 0.0], [2.0, 9.0, 9.0, 9.0], [1.0, -1.0, 9.0, 9.0]])
    values = torch.tensor([[0.5, 0.25, 0.5, 0.25], [1.0, 9.0, 9.0, 9.0], [0.0, 2.0, 9.0, 9.0]])
    mask = torch.tensor([[1.0, 1.0, 1.0, 1.0], [1.0, 0.0, 0.0, 0.0], [1.0, 1.0, 0.0, 0.0]])
    # gamma = 0.5, lam = 0.75:  delta_t = r_t + gamma V_{t+1} - V_t,  A_t = delta_t + 0.375 A_{t+1}
    # row 0: delta = [-0.375, 0, 0.625, -0.25]   A_3 = -0.25,  A_2 = 0.625 - 0.09375 = 0.53125,
    #        A_1 = 0.375 * 0.53125 = 0.19921875,  A_0 = -0.375 + 0.375 * 0.19921875 = -0.30029296875
    # row 1: delta = [1.0],                     A = [1.0]
    # row 2: delta = [1 + 0.5 * 2 - 0, -1 - 2] = [2, -3],   A = [2 - 0.375 * 3, -3] = [0.875, -3]
    advantages = torch.tensor([[-0.30029296875, 0.19921875, 0.53125, -0.25], [1.0, 0.0, 0.0, 0.0],
                               [0.875, -3.0, 0.0, 0.0]])
    answer = call(ctx, "compute_gae", rewards, values, mask, gamma=0.5, lam=0.75, names=NAMES,
                  shape=(3, 4), tuple_of=2)
    adv, ret = answer.value
    answer.expect_close(ctx, adv, advantages, "advantages differ from the hand-computed ones", mask)
    answer.expect_close(ctx, ret, advantages + values, "returns should be advantages + values", mask)
