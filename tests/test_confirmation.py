"""Confirmation inputs cover pairs, not lockstep (autograder/validity/confirmation.py, autograder/checks/chosen.py
confirmation_rows): in every lab, the confirmation calls of each function reach every pair of its factors'
non-degenerate levels, and no two mistakes a diagnosis weighs agree on all of them unless the lab declares them
one diagnosis (its bank's SAME_DIAGNOSIS, each with its reason)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from autograder.lab.paths import ROOT

LABS = {"lab12": ROOT, "lab13": ROOT / "labs" / "lab13", "toylab": ROOT / "tests" / "toylab"}


def in_lab(lab: str, code: str) -> str:
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=600,
                          env={**os.environ, "AUTOGRADER_LAB": str(LABS[lab])})
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


PAIRS = """
import dataclasses
from autograder.checks import lab_inputs
from autograder.checks.differential import lab_domains
from autograder.checks.factors import covered_pairs, possible_pairs
from autograder.sandbox.remote import parameter_names
domains = lab_domains()
chosen = registry.lab_module('checks.hidden.chosen') if registry.has_module('checks.hidden.chosen') else None
for function, factors in (domains.FACTORS.items() if domains else ()):
    allowed = getattr(chosen, '_CONFIRM', {}).get(function, {})  # a lab's own factors: its non-degenerate levels
    narrowed = tuple(dataclasses.replace(f, levels=allowed.get(f.name, f.levels)) for f in factors)
    reached = set()
    for args, kwargs in lab_inputs.confirmation_inputs(function):
        reached |= covered_pairs(factors, {**dict(zip(parameter_names(function), args)), **kwargs})
    missing = possible_pairs(narrowed, domains.IMPOSSIBLE.get(function, {})) - reached
    assert not missing, (function, sorted(missing)[:3])
"""


@pytest.mark.parametrize("lab", LABS)
def test_confirmation_inputs_reach_every_pair_of_levels_and_tell_every_two_mistakes_apart(lab):
    """Every pair of levels of a function's factors (its lab's non-degenerate ones, or those derived from its declared
    domain) is in some confirmation input, and no two mistakes a diagnosis weighs agree on all of them."""
    out = in_lab(lab, "from autograder.lab import registry\n"
                      "from autograder.validity.confirmation import unseparated\n"
                      "registry.lab()\n"
                      + PAIRS
                      + "print(unseparated())\n")
    assert out.strip() == "[]"


def test_lockstep_confirmation_inputs_let_two_mistakes_agree():
    """Lab 13's old confirmation inputs cycled row layouts in lockstep with aggregations: token_sum_norm met only
    rows of one length, where dividing by B x the longest row is dividing by the number of tokens, so a Dr. GRPO
    sum normalised by B x the longest row was named sum_norm_by_tokens. validate now fails on such a pair."""
    out = in_lab("lab13", "from autograder.lab import registry\n"
                          "from autograder.checks.factors import rows_class\n"
                          "from autograder.validity.confirmation import unseparated\n"
                          "from autograder.checks import lab_inputs\n"
                          "lab = registry.lab()\n"
                          "calls = lab_inputs.confirmation_inputs('grpo_policy_loss')\n"
                          "def one_length(mask):  # every row as long as the others: padded when T >= 2\n"
                          "    made = mask.new_ones(mask.shape)\n"
                          "    made[:, 1:][:, -1:] = 0\n"
                          "    return made\n"
                          "lockstep = tuple(((*a[:4], one_length(a[4]), *a[5:]), k) if a[7] == 'token_sum_norm'\n"
                          "                 else (a, k) for a, k in calls)\n"
                          "assert {rows_class(a[4]) for a, _ in lockstep if a[7] == 'token_sum_norm'} \\\n"
                          "    <= {'padded rows of one length', 'one padded row', 'full rows', 'one full row'}\n"
                          "lab_inputs.confirmation_inputs = lambda f, mine=lab_inputs.confirmation_inputs: \\\n"
                          "    lockstep if f == 'grpo_policy_loss' else mine(f)\n"
                          "print(unseparated(['grpo_loss']))\n")
    assert "('grpo_policy_loss', 'grpo_loss.sum_norm_by_tokens', 'grpo_loss.sum_norm_by_longest')" in out
