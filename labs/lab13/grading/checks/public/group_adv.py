"""Public checks of group_advantages: hand-computed examples, no reference needed."""

from __future__ import annotations

import torch

from autograder.checks import Context, check
from autograder.checks.tools import call, public

from .common import ADV_NAMES


@check("group_adv.known_values", "group_advantages with and without the std on three hand-computed groups",
       functions=("group_advantages",))
@public
def known_values(ctx: Context) -> None:
    # three groups of 4: [1, 0, 0, 0], [1, 1, 1, 1] (all equal), [2, 0, 1, 1]
    rewards = torch.tensor([1.0, 0.0, 0.0, 0.0, 1.0, 1.0, 1.0, 1.0, 2.0, 0.0, 1.0, 1.0], dtype=torch.float64)
    # means 0.25, 1, 1: centred [0.75, -0.25, -0.25, -0.25], [0, 0, 0, 0], [1, -1, 0, 0]  (Dr. GRPO)
    centred = torch.tensor([0.75, -0.25, -0.25, -0.25, 0.0, 0.0, 0.0, 0.0, 1.0, -1.0, 0.0, 0.0], dtype=torch.float64)
    answer = call(ctx, "group_advantages", rewards, 4, normalize_std=False, eps=1e-2, names=ADV_NAMES, shape=(12,))
    answer.expect_close(ctx, answer.value, centred,
                        "without the std (Dr. GRPO) each advantage is the reward minus its group's mean")
    # sample stds (divide by 3): sqrt(0.75 / 3) = 0.5, 0, sqrt(2 / 3) = 0.8165; with eps = 0.01:
    #   0.75 / 0.51 = 1.470588, -0.25 / 0.51 = -0.490196;  0 / 0.01 = 0;  1 / 0.826497 = 1.209926
    a, b, c = 0.75 / 0.51, -0.25 / 0.51, 1 / ((2 / 3) ** 0.5 + 0.01)
    expected = torch.tensor([a, b, b, b, 0.0, 0.0, 0.0, 0.0, c, -c, 0.0, 0.0], dtype=torch.float64)
    answer = call(ctx, "group_advantages", rewards, 4, normalize_std=True, eps=1e-2, names=ADV_NAMES, shape=(12,))
    answer.expect_close(ctx, answer.value, expected,
                        "with the std, each centred reward is divided by (its group's sample std + eps): "
                        "torch.std's default (divide by group_size - 1), eps added outside the square root")
