"""Both functions against the reference, values and gradients, on seeded inputs."""

from __future__ import annotations

import torch

from autograder.checks import Context, check
from autograder.checks.tools import Call, expect_like_reference


def _inputs(seed: int) -> tuple[torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(seed)
    rows, tokens = 1 + seed % 3, 2 + seed % 4
    mask = (torch.rand(rows, tokens, generator=g) < 0.7).float()
    mask[:, 0] = 1.0
    return torch.randn(rows, tokens, generator=g, dtype=torch.float64), mask.double()


@check("mean.matches_reference", "masked_mean matches the reference (values and gradients)", functions=("masked_mean",))
def mean_matches(ctx: Context) -> None:
    for seed in range(8):
        x, mask = _inputs(seed)
        expect_like_reference(ctx, Call("masked_mean", (x.requires_grad_(), mask), grad=(0,), names=("x", "mask"),
                                        shape=()))


@check("scale.matches_reference", "scale matches the reference", functions=("scale",))
def scale_matches(ctx: Context) -> None:
    for seed in range(8):
        x, _ = _inputs(seed)
        expect_like_reference(ctx, Call("scale", (x, 0.5 + seed), names=("x", "factor"), shape=tuple(x.shape)))
