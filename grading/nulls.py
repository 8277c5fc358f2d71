"""Lab 12's own null submissions: whole submissions whose answers ignore their input, beyond the family the
engine derives from the contract (autograder/validity/derived_nulls.py: constants, zeros with the graph kept,
noise, each argument echoed, raising, the shown inputs memorised). Each must score 0 on every test
(`validate` grades them all); tests/test_nulls_distinct.py fails on one that answers as a derived null.

    source = null_source(NULLS["echo_first"])      # the text of an rlhf.py with the seven functions

A null is one answer rule per contract function, written as the body of that function (the contract's
argument names are in scope, and `_fill(like, shape, c)` gives a tensor of the input's dtype): inputs echoed
in pairs (the first, the second), advantages of 0 with returns = values, losses that ignore the log-probs.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass

from autograder.lab import config
from autograder.lab.reference import load_reference


@dataclass(frozen=True)
class Null:
    name: str
    description: str
    bodies: dict[str, str]      # contract function -> its body (one expression, returned)


NULLS = {n.name: n for n in [
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
]}

HELPERS = '''
import torch

def _fill(like, shape, c):
    return torch.full(tuple(shape), c, dtype=like.dtype)
'''


def _signature(ref, name: str) -> str:
    return str(inspect.signature(getattr(ref, name))).split(" ->")[0]


def null_source(null: Null) -> str:
    """The text of an rlhf.py whose seven contract functions follow `null`'s answer rules."""
    ref = load_reference()
    parts = [f'"""Null submission {null.name!r}: {null.description}."""', HELPERS]
    for name in config.current().functions:
        parts.append(f"def {name}{_signature(ref, name)}:\n    return {null.bodies[name]}\n")
    return "\n\n".join(parts) + "\n"
