"""What every registered e2e test tells a student: its failure sentence names each criterion's measured value
and threshold, and every metric its plot shows has a reference band (issue 22)."""

from __future__ import annotations

import json

import pytest

from autograder.judge import e2e
from autograder.judge.e2e import threshold
from autograder.judge.plots import BAND_FILE
from autograder.lab import config

REGISTRY = e2e.load_all()


def _value(c: e2e.Criterion, spec, inside: bool) -> float:
    """A value 0.25 inside (or outside) the criterion's threshold."""
    step = 0.25 if inside else -0.25
    bound = threshold(spec, c.bound)
    return bound + step if c.side.startswith(">") else bound - step


@pytest.mark.parametrize("name", sorted(REGISTRY))
def test_each_failure_names_every_measured_value_and_threshold(name):
    test, spec = REGISTRY[name], config.load().e2e[name]
    for failing in test.criteria:
        metrics = {c.metric: _value(c, spec, inside=c is not failing) for c in test.criteria}
        message = test.verdict(spec, metrics)
        assert message.startswith(failing.message + ": "), message
        for c in test.criteria:
            label = c.label or c.metric.replace("_", " ")
            verdict = "failed" if c is failing else "met"
            assert f"{label} {metrics[c.metric]:.3f} (needs {c.side} {threshold(spec, c.bound):g}: {verdict})" \
                in message, (c.metric, message)
    assert test.verdict(spec, {c.metric: _value(c, spec, inside=True) for c in test.criteria}) == ""


@pytest.mark.parametrize("value", [float("nan"), float("inf"), float("-inf")])
@pytest.mark.parametrize("name", sorted(REGISTRY))
def test_a_metric_that_is_not_a_number_fails_its_criterion(name, value):
    """A training that diverged measures nan (or inf), which compares false with every bound: it never passes."""
    test, spec = REGISTRY[name], config.load().e2e[name]
    for c in test.criteria:
        assert c.fails(spec, value), (c.metric, value)
        metrics = {k.metric: value if k is c else _value(k, spec, inside=True) for k in test.criteria}
        assert test.verdict(spec, metrics).startswith(c.message + ": ")


@pytest.mark.parametrize("name", sorted(REGISTRY))
def test_a_criterion_never_passes_unmeasured(name):
    """A measurement may leave out the metrics of criteria after one that fails; a metric left out where every
    criterion before it is met fails the test (a lab's slip), and every left-out metric reads "not measured"."""
    test, spec = REGISTRY[name], config.load().e2e[name]
    for i, missing in enumerate(test.criteria):
        met = {c.metric: _value(c, spec, inside=True) for c in test.criteria[:i]}
        message = test.verdict(spec, met)
        assert message.startswith(f"{missing.metric_words} was not measured: "), message
        for c in test.criteria[i:]:
            assert f"{c.metric_words} not measured (needs {c.side} " in message, message
    first = test.criteria[0]  # it fails, the rest are left out: its own message
    assert test.verdict(spec, {first.metric: _value(first, spec, inside=False)}).startswith(first.message + ": ")


@pytest.mark.parametrize("name", sorted(n for n, t in REGISTRY.items() if t.plotted))
def test_every_plotted_metric_has_a_reference_band(name):
    band = json.loads(BAND_FILE.read_text())
    missing = [m for m in REGISTRY[name].plotted if m not in band.get(name, {})]
    assert not missing, f"{name}: no reference band for {missing}: run `python -m autograder calibrate`"
    n = len(band[name][REGISTRY[name].plotted[0]]["lo"])
    assert n == config.load().e2e[name]["ppo"]["iterations"], "the band is per PPO iteration"
    for metric in REGISTRY[name].plotted:
        lo, hi = band[name][metric]["lo"], band[name][metric]["hi"]
        assert len(lo) == len(hi) == n and all(a <= b for a, b in zip(lo, hi)), metric

