# Answer with the wrong shapes: shaped_rewards (2**19, 1, 1) (broadcast by the training loop, it
# would blow up the judge's memory), kl_estimate flattened, compute_gae's advantages (1,) (broadcastable).
import torch as _torch

_reference = {name: globals()[name] for name in ("compute_gae", "kl_estimate", "shaped_rewards")}


def shaped_rewards(scores, logp, ref_logp, mask, beta, kind="k1"):
    return _torch.zeros(2 ** 19, 1, 1, dtype=logp.dtype)


def kl_estimate(logp, ref_logp, kind="k1"):
    return _reference["kl_estimate"](logp, ref_logp, kind).reshape(-1)


def compute_gae(rewards, values, mask, gamma=1.0, lam=0.95):
    advantages, returns = _reference["compute_gae"](rewards, values, mask, gamma, lam)
    return advantages.sum().reshape(1), returns
