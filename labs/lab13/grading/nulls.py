"""Lab 13's own null submissions, beyond the family the engine derives from the contract
(autograder/validity/derived_nulls.py: constants, zeros with the graph kept, noise, each argument echoed,
raising, the shown inputs memorised). Each must score 0 in every check and fail every e2e test
(`python -m autograder --lab labs/lab13 validate --e2e`); tests/test_nulls_distinct.py fails on one that
answers as a derived null.

A null is one answer rule per contract function, the body of that function (its parameters in scope): the
first input echoed (a sequence's first token), and losses that never look at the policy's log-probs.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from autograder.lab import config, paths


@dataclass(frozen=True)
class Null:
    name: str
    description: str
    bodies: dict[str, str]


NULLS = {n.name: n for n in [
    Null("echo_first", "the first input echoed back (its mean where a scalar is due)", {
        "group_advantages": "rewards.clone()",
        "grpo_policy_loss": "logp.mean()",
        "sequence_logprob": "token_logp[:, 0].clone()",
        "dpo_loss": "policy_chosen.mean()",
        "ipo_loss": "policy_chosen.mean()"}),
    Null("input_blind_losses", "losses of the fixed inputs only (old and reference log-probs), with a zero graph", {
        "group_advantages": "rewards - rewards.mean()",
        "grpo_policy_loss": "-(advantages[:, None] * mask).sum() / mask.sum() + (logp * 0.0).sum()",
        "sequence_logprob": "(mask * 0.0).sum(1) + (token_logp * 0.0).sum(1)",
        "dpo_loss": "-torch.nn.functional.logsigmoid(beta * (ref_chosen - ref_rejected)).mean() "
                    "+ (policy_chosen * 0.0).sum() + (policy_rejected * 0.0).sum()",
        "ipo_loss": "((ref_chosen - ref_rejected - 1 / (2 * beta)) ** 2).mean() "
                    "+ (policy_chosen * 0.0).sum() + (policy_rejected * 0.0).sum()"}),
]}

HELPERS = '''
import torch
'''


def null_source(null: Null) -> str:
    """The text of a posttrain.py whose functions answer by `null`'s rules (the reference's signatures)."""
    tree = ast.parse(paths.REFERENCE.read_text())
    signatures = {node.name: node.args for node in tree.body if isinstance(node, ast.FunctionDef)}
    parts = [HELPERS]
    for name in config.current().functions:
        arguments = signatures[name]
        for arg in [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs]:
            arg.annotation = None
        parts.append(f"\ndef {name}({ast.unparse(arguments)}):\n    return {null.bodies[name]}\n")
    return "\n".join(parts)
