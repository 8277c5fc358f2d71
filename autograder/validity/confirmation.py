"""Confirmation inputs that tell every two mistakes apart: a hint is shown only when one mistake alone reproduces
the submission's answers on its function's confirmation inputs (diagnosis.py), so two mistakes that answer alike
on all of them are never named, and a mistake the bank lacks that answers like one of them on those inputs gets
that one's name (a wrong hint). `validate` checks every pair of the bank's mistakes that the diagnosis of a
failed check of a function could weigh against each other: the mistakes of the function's part, seen through
the function, whose answers differ from the reference's on some of its confirmation inputs (one that answers
as the reference does there is never named: a mistake only in gradients, say). A pair the lab declares the
same diagnosis (its bank package's SAME_DIAGNOSIS: {frozenset of two mistake ids: why}) is not a miss.

    unseparated()  -> [("grpo_policy_loss", "grpo_loss.sum_norm_by_tokens", "grpo_loss.sum_norm_by_longest"), ...]
"""

from __future__ import annotations

from itertools import combinations

from autograder.checks import lab_inputs
from autograder.judge import diagnosis
from autograder.lab import bank, config, registry
from autograder.lab.entries import contract_with


def unseparated(parts: list[str] | None = None) -> list[tuple[str, str, str]]:
    """(function, mistake id, mistake id) of each pair of candidates that agree on every confirmation input of the
    function (answers compared as the diagnosis compares them)."""
    from autograder.lab.reference import load_reference

    reference = load_reference()
    cfg = config.load()
    same = getattr(registry.lab_module("bank"), "SAME_DIAGNOSIS", {})
    pairs = []
    for part in parts or list(cfg.parts):
        for function in cfg.parts[part]:
            calls = tuple(lab_inputs.confirmation_inputs(function))
            correct = getattr(reference, function)
            answers = {e: [diagnosis.answer_of(contract_with(e, reference)[function], *c) for c in calls]
                       for e in bank.mistakes_of_part(part)}
            mine = [diagnosis.answer_of(correct, *c) for c in calls]
            weighed = [e for e, a in answers.items() if not diagnosis.agree(a, mine, calls, correct)]
            pairs += [(function, a.id, b.id) for a, b in combinations(weighed, 2)
                      if frozenset((a.id, b.id)) not in same
                      and diagnosis.agree(answers[a], answers[b], calls, correct)]
    return pairs
