"""Mistakes of masked_mean."""

import torch

from autograder.lab.bank import mistake, variant


@mistake("mean", "masked_mean", "plain_mean", hint="your mean counts the padding: divide by mask.sum()")
def masked_mean(x, mask):
    return (x * mask).mean()


@variant("mean", "masked_mean", "where_then_sum")
def masked_mean(x, mask):  # noqa: F811
    return torch.where(mask > 0, x, torch.zeros_like(x)).sum() / mask.sum()
