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
from autograder.checks.factors import covered_pairs, possible_pairs
from autograder.sandbox.remote import parameter_names
dom, chosen = registry.lab_module('checks.hidden.domains'), registry.lab_module('checks.hidden.chosen')
for function, factors in dom.FACTORS.items():
    allowed = chosen._CONFIRM[function]
    narrowed = tuple(dataclasses.replace(f, levels=allowed.get(f.name, f.levels)) for f in factors)
    reached = set()
    for args, kwargs in registry.lab().confirmation_calls(function):
        reached |= covered_pairs(factors, {**dict(zip(parameter_names(function), args)), **kwargs})
    missing = possible_pairs(narrowed, dom.IMPOSSIBLE.get(function, {})) - reached
    assert not missing, (function, sorted(missing)[:3])
"""


@pytest.mark.parametrize("lab", LABS)
def test_confirmation_inputs_reach_every_pair_of_levels_and_tell_every_two_mistakes_apart(lab):
    """Every pair of the non-degenerate levels of a function's factors is in some confirmation input (the labs
    that declare factors), and no two mistakes a diagnosis weighs agree on all of them."""
    out = in_lab(lab, "from autograder.lab import registry\n"
                      "from autograder.validity.confirmation import unseparated\n"
                      "registry.lab()\n"
                      + (PAIRS if lab != "toylab" else "")
                      + "print(unseparated())\n")
    assert out.strip() == "[]"


def test_lockstep_confirmation_inputs_let_two_mistakes_agree():
    """Lab 13's old confirmation inputs cycled row layouts in lockstep with aggregations: token_sum_norm met only
    rows of one length, where dividing by B x the longest row is dividing by the number of tokens, so a Dr. GRPO
    sum normalised by B x the longest row was named sum_norm_by_tokens. validate now fails on such a pair."""
    out = in_lab("lab13", "from autograder.lab import registry\n"
                          "from autograder.checks.factors import rows_class\n"
                          "from autograder.validity.confirmation import unseparated\n"
                          "lab = registry.lab()\n"
                          "calls = lab.confirmation_calls('grpo_policy_loss')\n"
                          "lockstep = tuple(c for c in calls if c[1]['aggregation'] != 'token_sum_norm'\n"
                          "                 or rows_class(c[0][4]) in ('full rows', 'padded rows of one length'))\n"
                          "registry.register_lab(__import__('dataclasses').replace(lab, confirmation_calls=\n"
                          "    lambda f: lockstep if f == 'grpo_policy_loss' else lab.confirmation_calls(f)))\n"
                          "print(unseparated(['grpo_loss']))\n")
    assert "('grpo_policy_loss', 'grpo_loss.sum_norm_by_tokens', 'grpo_loss.sum_norm_by_longest')" in out
