"""Plots of end-to-end runs (PNG bytes) for the HTML report: per PPO iteration, the metrics a test
judges, the submission's run(s) against the reference's band (the 10th-90th percentile over
calibration seeds, from data/reference_band.json; a metric the calibration has no band for is drawn
without one, and its panel says so).

    e2e_plots("ptx", {"ptx": history, "no ptx": history}, ("accuracy",))   # [(title, PNG bytes)]
"""

from __future__ import annotations

import io
import json
from pathlib import Path

BAND_FILE = Path(__file__).with_name("data") / "reference_band.json"
LABELS = {"rm_score": "RM score", "gold": "gold score", "kl": "KL to SFT (nats)",
          "malformed": "malformed fraction", "accuracy": "arithmetic accuracy"}
RUNS = {"run": "your run", "ptx": "your run with ptx", "no ptx": "your run without ptx"}
PANEL_INCHES = (4.2, 3.0)
MIN_WIDTH_INCHES = 6.5  # a one-panel figure stays wide enough for its legend and readable ticks


def reference_band(test: str) -> dict:
    """{metric: {"lo": [...], "hi": [...]}} for an e2e test, or {} before calibration wrote it."""
    if not BAND_FILE.exists():
        return {}
    return json.loads(BAND_FILE.read_text()).get(test, {})


def e2e_plots(test: str, histories: dict[str, list[dict]], judged: tuple[str, ...]) -> list[tuple[str, bytes]]:
    """One figure for the runs of an e2e test: a panel per metric it judges (its registration's `plotted`),
    one legend below the panels."""
    metrics = [m for m in judged or tuple(LABELS) if all(m in h for run in histories.values() for h in run)]
    if not metrics:
        return []
    band = reference_band(test)
    width = max(MIN_WIDTH_INCHES, PANEL_INCHES[0] * len(metrics))
    from matplotlib.figure import Figure  # imported by the grades that plot only (~0.5 s of CPU)

    height = PANEL_INCHES[1] + 0.5
    fig = Figure(figsize=(width, height))  # fixed margins, in inches: a constrained layout cost 40%
    fig.subplots_adjust(left=0.65 / width, right=1 - 0.15 / width, top=1 - 0.3 / height, bottom=0.85 / height,
                        wspace=0.2)
    axes = fig.subplots(1, len(metrics), squeeze=False)[0]
    for ax, key in zip(axes, metrics):
        if key in band:
            lo, hi = band[key]["lo"], band[key]["hi"]
            ax.fill_between(range(len(lo)), lo, hi, color="0.85", label="reference, 10-90% of seeds")
        for name, history in histories.items():
            ax.plot([h[key] for h in history], label=RUNS.get(name, f"your {name} run"), linewidth=1.6)
        ax.set_title(LABELS.get(key, key) + ("" if key in band else "  (no reference band yet)"), fontsize=10)
        ax.set_xlabel("PPO iteration")
        ax.grid(alpha=0.3)
    handles, labels = axes[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=len(labels), fontsize=9, frameon=False)
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=80, metadata={"Software": None})
    names = ", ".join(LABELS.get(m, m) for m in metrics)
    return [(f"{test}: {names} per PPO iteration, your run against the reference band", buf.getvalue())]
