"""Toy lab: two small functions on tensors.

    masked_mean(x, mask)  the mean of x where mask is 1 (a 0-d tensor)
    scale(x, factor)      x times factor
"""

import torch


# ==== Part mean: the masked mean
def masked_mean(x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """The mean of x over the entries where mask is 1. x, mask: (B, T). Returns a 0-d tensor."""
    ### BEGIN SOLUTION
    return (x * mask).sum() / mask.sum()
    ### END SOLUTION


# ==== Part scale: scaling
def scale(x: torch.Tensor, factor: float) -> torch.Tensor:
    """x multiplied by factor. x: any shape. Returns a tensor of x's shape."""
    ### BEGIN SOLUTION
    return x * factor
    ### END SOLUTION
