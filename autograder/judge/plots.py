"""Plots of a lab's end-to-end runs (PNG bytes) for the HTML report: a panel per metric a test judges, per training
step, the submission's run(s) against the reference's band (the 10th-90th percentile over the calibration's seeds,
the lab's grading/data/reference_band.json, written by `calibrate`); a metric without a band is drawn without one,
and its panel says so. Every lab plots through this module: a lab's own hook only names its metrics and runs.

    e2e_plots("ptx", {"ptx": history, "no ptx": history}, ("accuracy",),
              labels={"accuracy": "arithmetic accuracy"}, runs={"ptx": "your run with ptx"}, step="PPO iteration")
    -> [(title, PNG bytes)]
"""

from __future__ import annotations

import io
import json
from collections.abc import Mapping

from autograder.lab.paths import LAB_DATA

BAND_FILE = LAB_DATA / "reference_band.json"
PANEL_INCHES = (4.2, 3.0)
MIN_WIDTH_INCHES = 6.5  # a one-panel figure stays wide enough for its legend and readable ticks


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
    from matplotlib.figure import Figure  # imported by the grades that plot only (~0.5 s of CPU)

    width, height = max(MIN_WIDTH_INCHES, PANEL_INCHES[0] * len(metrics)), PANEL_INCHES[1] + 0.5
    fig = Figure(figsize=(width, height))  # fixed margins, in inches: a constrained layout cost 40% more CPU
    fig.subplots_adjust(left=0.65 / width, right=1 - 0.15 / width, top=1 - 0.3 / height, bottom=0.85 / height,
                        wspace=0.2)
    axes = fig.subplots(1, len(metrics), squeeze=False)[0]
    for ax, key in zip(axes, metrics):
        if key in band:
            lo, hi = band[key]["lo"], band[key]["hi"]
            ax.fill_between(range(len(lo)), lo, hi, color="0.85", label="reference, 10-90% of seeds")
        for name, history in histories.items():
            legend = runs.get(name, "your run" if name == "run" else f"your {name} run")
            ax.plot([h[key] for h in history], label=legend, linewidth=1.6)
        ax.set_title(labels.get(key, key) + ("" if key in band else "  (no reference band yet)"), fontsize=10)
        ax.set_xlabel(step)
        ax.grid(alpha=0.3)
    handles, names = axes[0].get_legend_handles_labels()
    fig.legend(handles, names, loc="lower center", ncol=len(names), fontsize=9, frameon=False)
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=80, metadata={"Software": None})
    shown = ", ".join(labels.get(m, m) for m in metrics)
    return [(f"{test}: {shown} per {step}, your run against the reference band", buf.getvalue())]
