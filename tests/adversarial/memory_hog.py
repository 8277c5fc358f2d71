# Touch many gigabytes inside compute_gae (one page at a time, so resident memory really grows).
import torch as _torch


def compute_gae(rewards, values, mask, gamma=1.0, lam=0.95):
    blocks = []
    while True:
        blocks.append(_torch.ones(1 << 26))  # 256 MB each, written
