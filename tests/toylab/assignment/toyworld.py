"""The toy lab's given world: a target and the training loop the students' functions plug into."""

import torch


def target(seed: int) -> tuple[torch.Tensor, torch.Tensor]:
    """A (2, 4) target and a ragged mask, from a seed."""
    g = torch.Generator().manual_seed(seed)
    return torch.randn(2, 4, generator=g), torch.tensor([[1.0, 1.0, 1.0, 0.0], [1.0, 1.0, 0.0, 0.0]])


def fit(masked_mean, scale, seed: int, steps: int, lr: float) -> tuple[list[float], torch.Tensor]:
    """Gradient descent on w (2, 4) minimising masked_mean((w - scale(y, 2.0))^2, mask): the loss per step, and w."""
    y, mask = target(seed)
    goal = scale(y, 2.0)
    w = torch.zeros(2, 4, requires_grad=True)
    losses = []
    for _ in range(steps):
        loss = masked_mean((w - goal) ** 2, mask)
        w.grad = None
        loss.backward()
        with torch.no_grad():
            w -= lr / 4 * w.grad
        losses.append(float(loss.detach()))
    return losses, w.detach()


def error(w: torch.Tensor, seed: int) -> float:
    """What fit should reach, measured without the student's functions: the mean of (w - 2 y)^2 where mask is 1."""
    y, mask = target(seed)
    return float(((w - 2.0 * y) ** 2 * mask).sum() / mask.sum())
