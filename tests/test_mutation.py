"""Mistakes nobody wrote (issue 29): the mutants mutmut's operators make of each lab's reference solution regions,
graded on the unit checks, each survivor classified equivalent or a gap on fresh draws of the declared domain
(autograder/validity/mutation.py; docs/validity.md, Mutation). Each lab runs in its own process (AUTOGRADER_LAB).
The toy lab runs whole here; Lab 12 and Lab 13 run a seeded sample of 30 mutants each (slow: CI's slow step), and
completely in `make validate`."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

from autograder.lab.paths import ROOT

pytest.importorskip("mutmut", reason="mutmut (pyproject's dev extra) makes the mutants: pip install -e '.[dev]'")
TOYLAB, LAB13 = ROOT / "tests" / "toylab", ROOT / "labs" / "lab13"


def in_lab(lab, code: str, timeout: int = 600) -> str:
    """Run `code` in a process working on `lab`; its stdout."""
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], cwd=ROOT, capture_output=True, text=True,
                          timeout=timeout, env={**os.environ, "AUTOGRADER_LAB": str(lab)})
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return done.stdout


def test_the_mutants_are_mutmuts_own_inside_the_solution_regions_only():
    out = in_lab(TOYLAB, """
        from autograder.lab import paths
        from autograder.validity import mutants
        source = paths.REFERENCE.read_text()
        made = mutants.generate(source, ("masked_mean", "scale"))
        print(sorted((m.id, m.before, m.after) for m in made))
        regions = mutants.solution_lines(source)
        assert all(m.line in regions[m.function] for m in made)
        assert mutants.library().startswith("mutmut ")
        diff = made[0].diff(source).splitlines()
        assert diff == ["--- reference", "+++ masked_mean#1", "-    return (x * mask).sum() / mask.sum()",
                        "+    return (x * mask).sum() * mask.sum()"], diff
    """)
    assert out.strip() == str(sorted([
        ("masked_mean#1", "(x * mask).sum() / mask.sum()", "(x * mask).sum() * mask.sum()"),
        ("masked_mean#2", "(x * mask)", "(x / mask)"),
        ("scale#1", "x * factor", "x / factor"),
    ]))


def test_the_toy_labs_mutants_are_all_killed_on_its_checks():
    out = in_lab(TOYLAB, """
        from autograder.validity import mutation
        report = mutation.run(count=200)
        print(mutation.format_report(report))
        assert report.generated == 3 and len(report.of("killed")) == 3, report.verdicts
        assert all(v.detail.endswith("(CheckFailed)") for v in report.verdicts)
    """)
    assert "3 generated; 3 killed, 0 equivalent, 0 gap(s)" in out


def test_a_survivor_is_equivalent_or_a_gap_named_with_its_diff_and_an_input_where_it_differs():
    """Classification on its own: an equivalent rewrite (the bank's where_then_sum), a mutant wrong only on 3-row
    inputs (a gap: the draws find such an input and the report shows it), a hanging one (killed: out of time)."""
    out = in_lab(TOYLAB, """
        import torch
        from autograder.lab import paths
        from autograder.lab.reference import load_reference
        from autograder.validity import mutation
        from autograder.validity.mutants import Mutant
        source = paths.REFERENCE.read_text()
        body = "return (x * mask).sum() / mask.sum()"
        def mutant(name, new):
            assert body in source
            return Mutant(name, "masked_mean", 14, body, new, source.replace(body, new))
        ref, cache = load_reference(), {}
        same = mutant("same", "return torch.where(mask > 0, x, torch.zeros_like(x)).sum() / mask.sum()")
        verdict = mutation._classify(same, ref, ("masked_mean",), cache, 1000, 29)
        assert verdict.status == "equivalent", verdict.detail
        import re  # at least 1000 draws per dtype (the derived check's chosen examples come on top)
        assert int(re.search(r"masked_mean (\\d+)", verdict.detail).group(1)) >= 1000, verdict.detail
        gap = mutant("gap", "return (x * mask).sum() / mask.sum() if x.shape[0] < 3 else x.sum()")
        verdict = mutation._classify(gap, ref, ("masked_mean",), cache, 1000, 29)
        assert verdict.status == "gap" and "on masked_mean(x=tensor([[" in verdict.detail, verdict.detail
        report = mutation.Report("mutmut", "solutions/toy.py", 1, [verdict])
        text = mutation.format_report(report, source)
        assert "GAP gap" in text and "+    return (x * mask).sum() / mask.sum() if x.shape[0] < 3" in text, text
        mutation.TIME_LIMIT = 2.0
        hang = mutant("hang", "while True: pass")
        verdict = mutation._grade(hang, ref, ("masked_mean",))
        assert verdict.status == "killed" and "out of time" in verdict.detail, verdict
        print("ok")
    """)
    assert out.strip().endswith("ok")


def test_the_draws_tell_every_bank_mistake_from_the_reference():
    """The draws' power, measured: each of the bank's mistakes differs from the reference on some fresh draw."""
    out = in_lab(TOYLAB, """
        from autograder.validity import mutation
        print(mutation.bank_power(1000))
    """)
    assert out.strip() == "[]"


def test_validate_offers_the_mutation_run():
    done = subprocess.run([sys.executable, "-m", "autograder", "validate", "--help"], cwd=ROOT, capture_output=True,
                          text=True, timeout=120)
    assert "--mutation" in done.stdout and "--mutation-sample" in done.stdout


def _sampled(lab) -> str:
    return in_lab(lab, """
        from autograder.lab import paths
        from autograder.validity import mutation
        report = mutation.run(sample=30, seed=29, count=1000)
        print(mutation.format_report(report, paths.REFERENCE.read_text()))
        assert len(report.verdicts) == 30 and report.generated > 30
        assert not report.gaps, [(v.mutant.id, v.detail) for v in report.gaps]
    """, timeout=3000)


@pytest.mark.slow
def test_a_seeded_sample_of_lab12s_mutants_has_no_gap():
    assert "a seeded sample of 30 (seed 29)" in _sampled(ROOT)


@pytest.mark.slow
def test_a_seeded_sample_of_lab13s_mutants_has_no_gap():
    assert "a seeded sample of 30 (seed 29)" in _sampled(LAB13)
