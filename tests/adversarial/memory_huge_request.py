# Ask for 100 GB at once inside compute_gae.
import torch as _torch


def compute_gae(rewards, values, mask, gamma=1.0, lam=0.95):
    return _torch.empty(25 * (1 << 30)), _torch.empty(1)
