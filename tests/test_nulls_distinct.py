"""A lab's own nulls (grading/nulls.py) add to the family the engine derives from the contract
(autograder/validity/derived_nulls.py), never repeat it: one that answers as a derived null on every shown input
and every probe input is graded twice for nothing (validate grades each null on every test, e2e included).

Each lab runs in its own process (a process grades one lab)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from autograder.lab.paths import ROOT

SAME_AS_DERIVED = """
import torch
from autograder.lab import config, registry
from autograder.checks import local
from autograder.validity import derived_nulls, shown

def tensor(x):
    return torch.tensor(x[1], dtype=getattr(torch, x[0].split(".")[1])) if isinstance(x, tuple) else x

def inputs():
    calls = [(c[0], [tensor(a) for a in c[1]]) for c in shown.shown_calls()]
    return calls + [(name, list(args)) for name, args in registry.lab().probe_inputs().items()]

def answer(module, name, args):
    args = [a.detach().clone().requires_grad_(a.is_floating_point()) if isinstance(a, torch.Tensor) else a
            for a in args]
    try:
        out = getattr(module, name)(*args)
    except Exception as exc:
        return type(exc).__name__
    outs = out if isinstance(out, tuple) else (out,)
    return [(str(o.dtype), o.requires_grad, o.detach().tolist()) if isinstance(o, torch.Tensor) else o for o in outs]

calls = inputs()
nulls = registry.lab_module("nulls") if registry.has_module("nulls") else None  # none: the derived ones suffice
own = {n: local.module_from_source(nulls.null_source(null), "own_" + n) for n, null in nulls.NULLS.items()} \
    if nulls else {}
derived = {n.name: local.module_from_source(derived_nulls.source(n), "derived_" + n.name)
           for n in derived_nulls.nulls()}
for name, module in own.items():
    for other, twin in derived.items():
        if all(answer(module, f, a) == answer(twin, f, a) for f, a in calls):
            print(f"SAME {name} {other}")
print(f"compared {len(own)} x {len(derived)} on {len(calls)} calls")
"""


@pytest.mark.parametrize("lab", [".", "labs/lab13", "tests/toylab"])
def test_no_lab_null_answers_as_a_derived_null(lab):
    done = subprocess.run([sys.executable, "-c", SAME_AS_DERIVED], cwd=ROOT, capture_output=True, text=True,
                          timeout=600, env={**os.environ, "AUTOGRADER_LAB": str(ROOT / lab)})
    assert done.returncode == 0, done.stderr[-3000:]
    assert "compared" in done.stdout
    assert "SAME" not in done.stdout, f"{lab}: a null of its grading/nulls.py repeats the derived family:\n" \
                                      f"{done.stdout}"
