# Return tensors far larger than the inputs (128 MB each, twice the frame limit).
import torch as _torch


def compute_gae(rewards, values, mask, gamma=1.0, lam=0.95):
    big = _torch.zeros(1 << 25)
    return big, big
