"""Hand-computed examples of both functions."""

from __future__ import annotations

import torch

from autograder.checks import Context, check
from autograder.checks.tools import call, public


@check("mean.known_values", "masked_mean on a hand-computed example", functions=("masked_mean",))
@public
def mean_known_values(ctx: Context) -> None:
    x = torch.tensor([[1.0, 2.0, 9.0], [3.0, 9.0, 9.0]])
    mask = torch.tensor([[1.0, 1.0, 0.0], [1.0, 0.0, 0.0]])
    answer = call(ctx, "masked_mean", x, mask, names=("x", "mask"), shape=())
    answer.expect_close(ctx, answer.value, torch.tensor(2.0), "the masked mean of 1, 2 and 3 is 2")


@check("scale.known_values", "scale on a hand-computed example", functions=("scale",))
@public
def scale_known_values(ctx: Context) -> None:
    x = torch.tensor([1.0, -2.0, 0.5])
    answer = call(ctx, "scale", x, 3.0, names=("x", "factor"), shape=(3,))
    answer.expect_close(ctx, answer.value, torch.tensor([3.0, -6.0, 1.5]), "x times 3")
