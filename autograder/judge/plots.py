"""Plots of a lab's end-to-end runs for the HTML report, as SVG documents: a panel per metric a test judges, per
training step, the submission's run(s) against the reference's band (the 10th-90th percentile over the calibration's
seeds, the lab's grading/data/reference_band.json, written by `calibrate`); a metric without a band is drawn
without one, and its panel says so. Every lab plots through this module: a lab's own hook only names its metrics
and runs. Drawn by hand (lines, a polygon, text): a grade that plots imports no matplotlib (~0.45 s of CPU and
~70 MB a lane), and the report shows the document as an image, which runs nothing.

    e2e_plots("ptx", {"ptx": history, "no ptx": history}, ("accuracy",),
              labels={"accuracy": "arithmetic accuracy"}, runs={"ptx": "your run with ptx"}, step="PPO iteration")
    -> [(title, SVG bytes)]
"""

from __future__ import annotations

import html
import json
import math
from collections.abc import Mapping, Sequence

from autograder.lab.paths import LAB_DATA

BAND_FILE = LAB_DATA / "reference_band.json"
PANEL = (340, 250)                  # a panel's width and height, in pixels
MARGIN = (56, 14, 28, 40)           # inside a panel: left (y tick labels), right, top (title), bottom (x ticks, label)
LEGEND = 30                         # the legend's row below the panels
MIN_WIDTH = 600                     # a one-panel figure stays wide enough for its legend
COLOURS = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd")
BAND_LABEL = "reference, 10-90% of seeds"


def reference_band(test: str) -> dict:
    """{metric: {"lo": [...], "hi": [...]}} for an e2e test, or {} before calibration wrote it."""
    if not BAND_FILE.exists():
        return {}
    return json.loads(BAND_FILE.read_text()).get(test, {})


def e2e_plots(test: str, histories: Mapping[str, list[dict]], judged: tuple[str, ...],
              labels: Mapping[str, str] | None = None, runs: Mapping[str, str] | None = None,
              step: str = "training step") -> list[tuple[str, bytes]]:
    """One figure for the runs of an e2e test (run name -> its history: one dict of metrics per step): a panel per
    metric it judges (its registration's `plotted`; none named: every metric of `labels`) that every history holds,
    one legend below the panels. `labels`: a metric's panel title; `runs`: a run's legend ("your run" by default)."""
    labels, runs = labels or {}, runs or {}
    metrics = [m for m in judged or tuple(labels) if all(m in h for run in histories.values() for h in run)]
    if not metrics or not histories:
        return []
    band = reference_band(test)
    legends = [runs.get(name, "your run" if name == "run" else f"your {name} run") for name in histories]
    width = max(MIN_WIDTH, PANEL[0] * len(metrics))
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{PANEL[1] + LEGEND}" '
             f'viewBox="0 0 {width} {PANEL[1] + LEGEND}" font-family="DejaVu Sans, Arial, sans-serif" '
             'font-size="11"><rect width="100%" height="100%" fill="white"/>']
    x0 = (width - PANEL[0] * len(metrics)) / 2  # the panels centred over the legend
    for i, key in enumerate(metrics):
        lines = [[float(h[key]) for h in history] for history in histories.values()]
        title = labels.get(key, key) + ("" if key in band else "  (no reference band yet)")
        parts += _panel(x0 + i * PANEL[0], title, step, band.get(key), lines)
    parts += _legend(width, PANEL[1], legends, banded=any(k in band for k in metrics))
    parts.append("</svg>")
    shown = ", ".join(labels.get(m, m) for m in metrics)
    return [(f"{test}: {shown} per {step}, your run against the reference band", "".join(parts).encode())]


def _panel(x0: float, title: str, step: str, band: dict | None, lines: list[list[float]]) -> list[str]:
    """One panel's elements, its left edge at x0."""
    left, right, top, bottom = x0 + MARGIN[0], x0 + PANEL[0] - MARGIN[1], MARGIN[2], PANEL[1] - MARGIN[3]
    lo, hi = (band["lo"], band["hi"]) if band else ([], [])
    values = [v for v in [*lo, *hi, *(v for line in lines for v in line)] if math.isfinite(v)] or [0.0]
    steps = max([len(lo), *(len(line) for line in lines)]) - 1 or 1
    y_ticks = nice_ticks(min(values), max(values))
    y_min, y_max = y_ticks[0], y_ticks[-1]
    x = lambda s: left + (right - left) * s / steps                               # noqa: E731
    y = lambda v: bottom - (bottom - top) * (v - y_min) / ((y_max - y_min) or 1)  # noqa: E731
    out = [f'<text x="{(left + right) / 2:.1f}" y="{top - 9}" text-anchor="middle" font-size="12">'
           f'{html.escape(title)}</text>']
    for v in y_ticks:
        out.append(f'<line x1="{left}" x2="{right}" y1="{y(v):.1f}" y2="{y(v):.1f}" stroke="#e6e6e6"/>'
                   f'<text x="{left - 5}" y="{y(v) + 4:.1f}" text-anchor="end">{_number(v, y_ticks)}</text>')
    for s in [t for t in nice_ticks(0, steps, integers=True) if t <= steps]:
        out.append(f'<line x1="{x(s):.1f}" x2="{x(s):.1f}" y1="{top}" y2="{bottom}" stroke="#e6e6e6"/>'
                   f'<text x="{x(s):.1f}" y="{bottom + 15}" text-anchor="middle">{_number(s, [0, 1])}</text>')
    if lo:
        edge = [(x(s), y(v)) for s, v in enumerate(lo)] + [(x(s), y(v)) for s, v in reversed(list(enumerate(hi)))]
        out.append(f'<polygon points="{_points(edge)}" fill="#d9d9d9"/>')
    for colour, line in zip(COLOURS * 4, lines):
        for segment in _finite_segments(line):
            out.append(f'<polyline points="{_points([(x(s), y(v)) for s, v in segment])}" fill="none" '
                       f'stroke="{colour}" stroke-width="1.6" stroke-linejoin="round"/>')
    out.append(f'<rect x="{left}" y="{top}" width="{right - left}" height="{bottom - top}" fill="none" '
               f'stroke="#888"/><text x="{(left + right) / 2:.1f}" y="{bottom + 32}" text-anchor="middle">'
               f'{html.escape(step)}</text>')
    return out


def _legend(width: float, y0: float, legends: list[str], banded: bool) -> list[str]:
    """The legend row, centred below the panels: the band's swatch (when a panel has one), then each run's line."""
    entries = ([("band", BAND_LABEL)] if banded else []) + [(c, text) for c, text in zip(COLOURS * 4, legends)]
    widths = [26 + 6.2 * len(text) + 18 for _, text in entries]
    x, out = (width - sum(widths)) / 2, []
    for (swatch, text), w in zip(entries, widths):
        mid = y0 + LEGEND / 2
        out.append(f'<rect x="{x:.1f}" y="{mid - 5:.1f}" width="20" height="10" fill="#d9d9d9"/>' if swatch == "band"
                   else f'<line x1="{x:.1f}" x2="{x + 20:.1f}" y1="{mid:.1f}" y2="{mid:.1f}" stroke="{swatch}" '
                        'stroke-width="2"/>')
        out.append(f'<text x="{x + 26:.1f}" y="{mid + 4:.1f}">{html.escape(text)}</text>')
        x += w
    return out


def nice_ticks(low: float, high: float, integers: bool = False) -> list[float]:
    """4 to 8 round tick values (1, 2 or 5 times a power of ten apart) covering [low, high]."""
    if high - low < 1e-12:
        low, high = low - 0.5 * (abs(low) or 1), high + 0.5 * (abs(high) or 1)
    raw = (high - low) / 5
    power = 10 ** math.floor(math.log10(raw))
    spacing = next(m * power for m in (1, 2, 5, 10) if m * power >= raw)
    if integers:
        spacing = max(1.0, round(spacing))
    first, last = math.floor(low / spacing), math.ceil(high / spacing)
    return [k * spacing for k in range(first, last + 1)]


def _number(value: float, ticks: Sequence[float]) -> str:
    """A tick label with as many decimals as the ticks' spacing needs."""
    spacing = abs(ticks[1] - ticks[0]) if len(ticks) > 1 else 1.0
    decimals = max(0, -math.floor(math.log10(spacing))) if spacing < 1 else 0
    return f"{value:.{decimals}f}".replace("-", "\u2212") if value != 0 else "0"


def _points(xy: list[tuple[float, float]]) -> str:
    return " ".join(f"{a:.1f},{b:.1f}" for a, b in xy)


def _finite_segments(line: list[float]) -> list[list[tuple[int, float]]]:
    """The runs of finite values of a line (a diverged step, nan or inf, breaks it), each as (step, value)."""
    segments: list[list[tuple[int, float]]] = [[]]
    for s, v in enumerate(line):
        if math.isfinite(v):
            segments[-1].append((s, v))
        elif segments[-1]:
            segments.append([])
    return [seg for seg in segments if seg]
