"""The null-submission family: whole submissions whose answers ignore their input. Each must score 0
in every check of every part (`validate` grades them all).

    source = null_source(NULLS["zeros"])      # the text of an rlhf.py with the seven functions

A null is one answer rule per contract function, written as the body of that function (the
contract's argument names are in scope, and `_fill(like, shape, c)` / `_noise(like, shape)` give a
tensor of the input's dtype). What counts as "ignoring the input" is per function: a constant or
random tensor of the right shape, zeros that keep the graph (`(x * 0).sum()`: training runs, nothing
learns), an input echoed back (reduced to the right shape), advantages of 0 with returns = values, a
loss that ignores the log-probs, and every input the student is shown hard-coded (`memorized`: the
handout's tests and the self-check's public checks (autograder/validity/shown.py), answered with the
reference's values and gradients and its ValueError on exactly those inputs, zeros on any other).

The engine derives a null family of its own from the contract (autograder/validity/derived_nulls.py); these
add to it.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass

from autograder import config
from autograder.reference import load_reference
from autograder.validity.shown import shown_calls


@dataclass(frozen=True)
class Null:
    name: str
    description: str
    bodies: dict[str, str]      # contract function -> its body (one expression, returned)


def _constant(c: str) -> dict[str, str]:
    return {"bradley_terry_loss": f"_fill(r_better, (), {c})",
            "ranking_loss": f"_fill(rewards, (), {c})",
            "compute_gae": f"(_fill(rewards, rewards.shape, {c}), _fill(rewards, rewards.shape, {c}))",
            "ppo_policy_loss": f"_fill(logp, (), {c})",
            "ppo_value_loss": f"_fill(values, (), {c})",
            "kl_estimate": f"_fill(logp, logp.shape, {c})",
            "shaped_rewards": f"_fill(logp, logp.shape, {c})"}


NULLS = {n.name: n for n in [
    Null("zeros", "every answer 0 (of the right shape and dtype)", _constant("0.0")),
    Null("ones", "every answer 1", _constant("1.0")),
    Null("log2", "every answer log 2 = 0.693 (the loss of equal rewards)", _constant("0.6931471805599453")),
    Null("minus_one", "every answer -1", _constant("-1.0")),
    Null("zeros_graph", "every answer 0 with the graph kept ((x * 0).sum()): the training runs, nothing learns", {
        "bradley_terry_loss": "(r_better * 0.0).sum() + (r_worse * 0.0).sum()",
        "ranking_loss": "(rewards * 0.0).sum()",
        "compute_gae": "(rewards * 0.0 + values * 0.0, rewards * 0.0 + values * 0.0)",
        "ppo_policy_loss": "(logp * 0.0).sum()", "ppo_value_loss": "(values * 0.0).sum()",
        "kl_estimate": "logp * 0.0 + ref_logp * 0.0", "shaped_rewards": "logp * 0.0 + ref_logp * 0.0"}),
    Null("random", "seeded random numbers of the right shape (the same for every call of a shape)", {
        "bradley_terry_loss": "_noise(r_better, ())", "ranking_loss": "_noise(rewards, ())",
        "compute_gae": "(_noise(rewards, rewards.shape), _noise(values, values.shape))",
        "ppo_policy_loss": "_noise(logp, ())", "ppo_value_loss": "_noise(values, ())",
        "kl_estimate": "_noise(logp, logp.shape)", "shaped_rewards": "_noise(logp, logp.shape)"}),
    Null("echo_first", "the first input echoed back (its mean where a scalar is due)", {
        "bradley_terry_loss": "r_better.mean()", "ranking_loss": "rewards.mean()",
        "compute_gae": "(rewards.clone(), values.clone())",
        "ppo_policy_loss": "logp.mean()", "ppo_value_loss": "values.mean()",
        "kl_estimate": "logp.clone()", "shaped_rewards": "logp.clone()"}),
    Null("echo_second", "the second input echoed back (its mean where a scalar is due)", {
        "bradley_terry_loss": "r_worse.mean()", "ranking_loss": "rewards.sum() * 0.0",
        "compute_gae": "(values.clone(), rewards.clone())",
        "ppo_policy_loss": "old_logp.mean()", "ppo_value_loss": "old_values.mean()",
        "kl_estimate": "ref_logp.clone()", "shaped_rewards": "ref_logp.clone()"}),
    Null("returns_are_values", "advantages 0 and returns = values; losses of the inputs' targets only", {
        "bradley_terry_loss": "(r_better * 0.0).mean()", "ranking_loss": "(rewards * 0.0).mean()",
        "compute_gae": "(torch.zeros_like(rewards), values.clone())",
        "ppo_policy_loss": "(advantages * mask).sum() * 0.0",
        "ppo_value_loss": "0.5 * (((returns - old_values) ** 2) * mask).sum() / mask.sum()",
        "kl_estimate": "torch.zeros_like(logp)", "shaped_rewards": "torch.zeros_like(logp)"}),
    Null("ignores_logprobs", "PPO losses and KL terms that never look at the (new) log-probs or values", {
        "bradley_terry_loss": "_fill(r_better, (), 0.6931471805599453)",
        "ranking_loss": "_fill(rewards, (), 0.6931471805599453)",
        "compute_gae": "(rewards * mask, (rewards + values) * mask)",
        "ppo_policy_loss": "-(advantages * mask).sum() / mask.sum()",
        "ppo_value_loss": "0.5 * (((old_values - returns) ** 2) * mask).sum() / mask.sum()",
        "kl_estimate": "torch.zeros_like(logp)",
        "shaped_rewards": "torch.zeros_like(logp)"}),
    Null("memorized", "every shown input's answer hard-coded (handout tests, public checks), zeros elsewhere", {
        name: f"_memorized({name!r}, locals())" for name in config.current().functions}),
]}

HELPERS = '''
import torch

def _fill(like, shape, c):
    return torch.full(tuple(shape), c, dtype=like.dtype)

def _noise(like, shape):
    generator = torch.Generator().manual_seed(1234)
    return torch.rand(tuple(shape), generator=generator, dtype=torch.float64).to(like.dtype) * 4 - 2
'''

MEMORIZER = '''
MEMORY = {memory!r}

def _memorized(name, arguments):
    args = [arguments[k] for k in _ARGS[name]]
    for fn, inputs, answer, grads, raises in MEMORY:
        if fn == name and len(inputs) == len(args) and all(_equal(a, b) for a, b in zip(args, inputs)):
            if raises:
                raise ValueError("memorized")
            like = next(a for a in args if isinstance(a, torch.Tensor) and a.is_floating_point())
            if name == "compute_gae":
                return tuple(torch.tensor(a, dtype=like.dtype) for a in answer)
            value = torch.tensor(answer, dtype=like.dtype)
            for i, g in grads.items():  # the memorized gradient, attached: value + sum(g * (x - x.detach()))
                if args[i].requires_grad:
                    value = value + (torch.tensor(g, dtype=like.dtype) * (args[i] - args[i].detach())).sum()
            return value
    return _fallback(name, args)

def _equal(a, b):
    if not isinstance(b, tuple):
        return not isinstance(a, torch.Tensor) and a == b
    dtype, data = b
    return (isinstance(a, torch.Tensor) and str(a.dtype) == dtype
            and torch.equal(a.detach(), torch.tensor(data, dtype=a.dtype)))

def _fallback(name, args):
    like = args[0]
    if name == "compute_gae":
        return torch.zeros_like(like), torch.zeros_like(like)
    if name == "kl_estimate":
        return torch.zeros_like(like)
    if name == "shaped_rewards":
        return torch.zeros_like(args[1])
    return torch.zeros((), dtype=like.dtype)
'''
def _signature(ref, name: str) -> str:
    return str(inspect.signature(getattr(ref, name))).split(" ->")[0]


def null_source(null: Null) -> str:
    """The text of an rlhf.py whose seven contract functions follow `null`'s answer rules."""
    ref = load_reference()
    parts = [f'"""Null submission {null.name!r}: {null.description}."""', HELPERS]
    if any("_memorized" in body for body in null.bodies.values()):
        args = {name: list(inspect.signature(getattr(ref, name)).parameters) for name in config.current().functions}
        parts.append(f"_ARGS = {args!r}")
        parts.append(MEMORIZER.format(memory=shown_calls()))
    for name in config.current().functions:
        parts.append(f"def {name}{_signature(ref, name)}:\n    return {null.bodies[name]}\n")
    return "\n\n".join(parts) + "\n"
