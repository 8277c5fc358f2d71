"""The engine's e2e plots (autograder/judge/plots.py): a well-formed SVG document whatever the numbers (a diverged
run's nan and inf break its line), round ticks covering the values, every text escaped. tests/test_report_browser.py
shows them in a real browser."""

from __future__ import annotations

import math
import xml.etree.ElementTree as ET

import pytest

from autograder.judge import plots

SVG = "{http://www.w3.org/2000/svg}"


def drawn(histories: dict, judged=("gold",), **names) -> ET.Element:
    (title, svg), = plots.e2e_plots("kl_penalty", histories, judged, **names)
    assert svg.startswith(b"<svg") and "per training step" in title
    return ET.fromstring(svg)


def test_a_run_with_nan_and_inf_is_drawn_in_finite_pieces():
    history = [{"gold": v} for v in (0.1, 0.2, math.nan, 0.4, math.inf, -math.inf, 0.5, 0.6)]
    root = drawn({"run": history})
    lines = root.findall(f"{SVG}polyline")
    assert [len(line.get("points").split()) for line in lines] == [2, 1, 2]
    assert all(math.isfinite(float(n)) for line in lines for xy in line.get("points").split() for n in xy.split(","))


def test_every_text_is_escaped_and_the_labels_are_used():
    root = drawn({"run": [{"gold": 1.0}, {"gold": 2.0}], "<b>x</b>": [{"gold": 1.5}, {"gold": 0.5}]},
                 labels={"gold": "gold & <score>"}, runs={"run": "your run"})
    texts = [t.text for t in root.iter(f"{SVG}text")]
    assert "gold & <score>" in texts and "your <b>x</b> run" in texts and "your run" in texts


@pytest.mark.parametrize("low, high", [(0.0, 1.0), (-0.37, 2.9), (0.5, 0.5), (-1e-6, 3e-6), (0.0, 69.0)])
def test_ticks_are_round_and_cover_the_values(low, high):
    ticks = plots.nice_ticks(low, high)
    assert ticks[0] <= low and ticks[-1] >= high and 3 <= len(ticks) <= 12
    spacing = ticks[1] - ticks[0]
    assert round(spacing / 10 ** math.floor(math.log10(spacing)), 6) in (1, 2, 5, 10)


def test_no_metric_no_plot():
    assert plots.e2e_plots("kl_penalty", {"run": [{"kl": 1.0}]}, ("gold",)) == []
    assert plots.e2e_plots("kl_penalty", {}, ("gold",)) == []
