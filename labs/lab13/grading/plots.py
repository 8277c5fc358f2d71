"""Plots of Lab 13's end-to-end runs (PNG bytes) for the HTML report: a panel per metric a test judges, per
training step (GRPO iteration, DPO step), the submission's run against the reference's band (the 10th-90th
percentile over the calibration's 50 seeds, from data/reference_band.json, written by `calibrate`; a metric
without a band is drawn without one, and its panel says so).

    e2e_plots("dpo_gold", {"run": history}, ("loss", "margin"))   # [(title, PNG bytes)]
"""

from __future__ import annotations

import io
import json
from pathlib import Path

BAND_FILE = Path(__file__).with_name("data") / "reference_band.json"
LABELS = {"reward": "mean reward", "equal_groups": "fraction of all-equal groups", "length": "answer length",
          "loss": "loss", "margin": "margin (nats)", "chosen_logp_change": "chosen log-prob change (nats)"}
PANEL_INCHES = (4.2, 3.0)
MIN_WIDTH_INCHES = 6.5


def reference_band(test: str) -> dict:
    """{metric: {"lo": [...], "hi": [...]}} for an e2e test, or {} before calibration wrote it."""
    if not BAND_FILE.exists():
        return {}
    return json.loads(BAND_FILE.read_text()).get(test, {})


def e2e_plots(test: str, histories: dict[str, list[dict]], judged: tuple[str, ...]) -> list[tuple[str, bytes]]:
    """One figure for the runs of an e2e test: a panel per plotted metric its history holds, one legend below."""
    metrics = [m for m in judged if all(m in h for run in histories.values() for h in run)]
    if not metrics or not histories:
        return []
    band = reference_band(test)
    from matplotlib.figure import Figure  # imported by the grades that plot only (~0.5 s of CPU)

    width, height = max(MIN_WIDTH_INCHES, PANEL_INCHES[0] * len(metrics)), PANEL_INCHES[1] + 0.5
    fig = Figure(figsize=(width, height))  # fixed margins, in inches: a constrained layout cost 40%
    fig.subplots_adjust(left=0.65 / width, right=1 - 0.15 / width, top=1 - 0.3 / height, bottom=0.85 / height,
                        wspace=0.2)
    axes = fig.subplots(1, len(metrics), squeeze=False)[0]
    for ax, key in zip(axes, metrics):
        if key in band:
            lo, hi = band[key]["lo"], band[key]["hi"]
            ax.fill_between(range(len(lo)), lo, hi, color="0.85", label="reference, 10-90% of seeds")
        for name, history in histories.items():
            ax.plot([h[key] for h in history], label=f"your {name}", linewidth=1.6)
        ax.set_title(LABELS.get(key, key) + ("" if key in band else "  (no reference band)"), fontsize=10)
        ax.set_xlabel("training step")
        ax.grid(alpha=0.3)
    handles, labels = axes[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=len(labels), fontsize=9, frameon=False)
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=80, metadata={"Software": None})
    names = ", ".join(LABELS.get(m, m) for m in metrics)
    return [(f"{test}: {names} per training step, your run against the reference band", buf.getvalue())]
