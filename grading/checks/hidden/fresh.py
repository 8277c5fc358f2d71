"""Fresh twins of a public check's calls: the same kind and size of input, with values no student has seen.

    args, kwargs = twin("compute_gae", args, kwargs, valid=True, position=0)   # new values (a hidden seed)

A public check shows its inputs (they teach); tools.public makes its points also need the reference's
answers on a twin of every call it made. A twin keeps the function, every shape and dtype, the mask, the
requested gradients and the scalar settings (gamma, lam, clip_eps, beta, kind), and the padding's garbage.
Its values at generated positions are drawn around the shown ones (within 0.5 + |x| / 2 of each), clipped
to the argument's declared range (RANGES, from solutions/rlhf.py's contract); an argument equal to an
earlier one (a tie such as bradley_terry_loss(s, s)) stays equal to that one's twin; a `ranking` gets a
new permutation per row. PPO's losses are kept away from their kinks, as the hidden checks keep them
(where min, max or clip switch branches the gradient is not defined and any subgradient would be fair).
A rejected input (valid=False: an unknown `kind`) gets another rejected name (REJECTED_KINDS).
"""

from __future__ import annotations

import zlib

import torch

from autograder.sandbox.remote import parameter_names

SEED = 912_377_041  # the judge's own: twins are the same in every grade, on every machine
LOGPROB = (-40.0, 0.0)
SCALE = (-10.0, 10.0)     # rewards, values, advantages, returns
RM = (-1000.0, 1000.0)    # rewards of the reward-model losses
RANGES: dict[str, dict[str, tuple[float, float]]] = {  # function -> argument -> range at generated positions
    "bradley_terry_loss": {"r_better": RM, "r_worse": RM},
    "ranking_loss": {"rewards": RM},
    "compute_gae": {"rewards": SCALE, "values": SCALE},
    "ppo_policy_loss": {"logp": LOGPROB, "old_logp": LOGPROB, "advantages": SCALE},
    "ppo_value_loss": {"values": SCALE, "old_values": SCALE, "returns": SCALE},
    "kl_estimate": {"logp": LOGPROB, "ref_logp": LOGPROB},
    "shaped_rewards": {"scores": (-50.0, 50.0), "logp": LOGPROB, "ref_logp": LOGPROB},
}
REJECTED_KINDS = ("k0", "k4", "k5", "kl", "KL", "K2", "K3", "abs", "mse", "low_var_kl", "full", " k1", "")
MARGIN = 1e-3  # distance kept from a kink of PPO's losses (as in checks/hidden/ppo_clip.py)


def twin(function: str, args: tuple, kwargs: dict, valid: bool, position: int) -> tuple[tuple, dict]:
    """The (args, kwargs) of the fresh twin of a public check's `position`-th call, `function(*args, **kwargs)`."""
    gen = torch.Generator().manual_seed(SEED + zlib.crc32(f"{function}/{position}".encode()))
    names = parameter_names(function)
    values = dict(zip(names, args)) | dict(kwargs)
    mask = values.get("mask")
    drawn: dict[str, object] = {}
    ranges = RANGES[function]
    for name, x in values.items():
        tie = next((k for k in drawn if k in ranges and name in ranges and _equal(values[k], x)), None)
        if tie is not None:
            drawn[name] = drawn[tie].clone()  # type: ignore[attr-defined]
        elif name == "ranking":
            drawn[name] = torch.stack([torch.randperm(x.shape[1], generator=gen) for _ in range(x.shape[0])])
        elif name == "kind" and not valid:
            drawn[name] = _rejected_kind(x, gen)
        elif name in ranges:
            drawn[name] = _around(x, ranges[name], mask, gen)
        else:
            drawn[name] = x  # the mask, and the scalar settings
    drawn = _away_from_kinks(function, drawn)
    return tuple(drawn[n] for n in names[:len(args)]), {k: drawn[k] for k in kwargs}


def scale(function: str, args: tuple) -> float:
    """A twin's rounding allowance where it is wider than the derived one (Lab.twin_scale): the policy loss's sum
    of |ratio * A| over generated tokens, a sequential float32 sum's worst case; 0 for the others (the derived
    allowance, sum |x dF/dx|, serves them)."""
    if function != "ppo_policy_loss":
        return 0.0
    logp, old_logp, advantages, mask = args[:4]
    ratio = torch.exp(logp.double() - old_logp.double())
    return float((ratio * advantages.double()).abs()[mask.bool()].sum())


def _equal(a, b) -> bool:
    return a.shape == b.shape and a.dtype == b.dtype and bool(torch.equal(a, b))


def _around(x: torch.Tensor, bounds: tuple[float, float], mask, gen: torch.Generator) -> torch.Tensor:
    """New values within 0.5 + |x| / 2 of the shown ones, clipped to `bounds`; padding (mask == 0) kept."""
    shown = x.double()
    u = torch.rand(x.shape, generator=gen, dtype=torch.float64) * 2 - 1
    new = (shown + u * (0.5 + shown.abs() / 2)).clamp(*bounds)
    if isinstance(mask, torch.Tensor) and mask.shape == x.shape:
        new = torch.where(mask.bool(), new, shown)
    return new.to(x.dtype)


def _rejected_kind(shown: object, gen: torch.Generator) -> str:
    others = [k for k in REJECTED_KINDS if k != shown]
    return others[int(torch.randint(len(others), (), generator=gen))]


def _away_from_kinks(function: str, a: dict) -> dict:
    """PPO's inputs moved off the points where the loss switches branches (the gradient is undefined there)."""
    if function == "ppo_policy_loss":
        eps = a["clip_eps"]
        ratio = torch.exp(a["logp"].double() - a["old_logp"].double())
        near = ((ratio - (1 + eps)).abs() <= MARGIN) | ((ratio - (1 - eps)).abs() <= MARGIN)
        a["logp"] = torch.where(near, a["old_logp"], a["logp"])
    elif function == "ppo_value_loss":
        eps = a["clip_eps"]
        v, old, ret = a["values"].double(), a["old_values"].double(), a["returns"].double()
        at_clip = ((v - old).abs() - eps).abs() <= MARGIN
        a["values"] = torch.where(at_clip, a["old_values"], a["values"])
        v = a["values"].double()
        v_clip = old + torch.clamp(v - old, -eps, eps)
        tie = (((v - ret) ** 2 - (v_clip - ret) ** 2).abs() <= MARGIN) & ((v - old).abs() > eps)
        a["returns"] = torch.where(tie, a["old_values"], a["returns"])
    return a
