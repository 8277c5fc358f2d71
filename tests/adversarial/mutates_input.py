# Purity: kl_estimate writes into its input (d = logp; d -= ref_logp), as students do; in their own
# run_experiments.py that overwrites the rollout's old_logp. The sandbox sends copies, so only the child's
# before/after comparison can see it: every call of it must fail, and shaped_rewards's (it calls kl_estimate).
import torch as _torch


def kl_estimate(logp, ref_logp, kind="k1"):
    if kind not in ("k1", "k2", "k3"):
        raise ValueError(f"unknown kind {kind!r}")
    d = logp
    d -= ref_logp  # in place: the caller's logp now holds logp - ref_logp
    if kind == "k1":
        return d
    if kind == "k2":
        return d ** 2 / 2
    return _torch.exp(-d) - 1 + d
