# Return tensors far larger than the inputs (1 GB).
import torch as _torch


def compute_gae(rewards, values, mask, gamma=1.0, lam=0.95):
    big = _torch.zeros(1 << 28)
    return big, big
