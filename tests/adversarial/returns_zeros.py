# No attack: compute_gae honestly returns zeros. The lying attacks must score exactly what this scores.
import torch as _torch


def compute_gae(rewards, values, mask, gamma=1.0, lam=0.95):
    return _torch.zeros_like(rewards), _torch.zeros_like(rewards)
