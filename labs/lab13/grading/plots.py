"""Plots of Lab 13's end-to-end runs (PNG bytes) for the HTML report: a panel per metric a test judges, per
training step, the submission's run (no reference band: Lab 13 ships no band file yet).

    e2e_plots("dpo_gold", {"run": history}, ("loss", "margin"))   # [(title, PNG bytes)]
"""

from __future__ import annotations

import io

import matplotlib

matplotlib.use("Agg")
from matplotlib.figure import Figure  # noqa: E402

LABELS = {"reward": "mean reward", "equal_groups": "fraction of all-equal groups", "length": "answer length",
          "loss": "loss", "margin": "margin (nats)", "chosen_logp_change": "chosen log-prob change (nats)"}
PANEL_INCHES = (4.2, 3.0)
MIN_WIDTH_INCHES = 6.5


def e2e_plots(test: str, histories: dict[str, list[dict]], judged: tuple[str, ...]) -> list[tuple[str, bytes]]:
    """One figure for the runs of an e2e test: a panel per plotted metric its history holds."""
    metrics = [m for m in judged if all(m in h for run in histories.values() for h in run)]
    if not metrics or not histories:
        return []
    fig = Figure(figsize=(max(MIN_WIDTH_INCHES, PANEL_INCHES[0] * len(metrics)), PANEL_INCHES[1] + 0.5),
                 layout="constrained")
    for ax, key in zip(fig.subplots(1, len(metrics), squeeze=False)[0], metrics):
        for name, history in histories.items():
            ax.plot([h[key] for h in history], label=f"your {name}", linewidth=1.6)
        ax.set_title(LABELS.get(key, key), fontsize=10)
        ax.set_xlabel("training step")
        ax.grid(alpha=0.3)
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=80, metadata={"Software": None})
    names = ", ".join(LABELS.get(m, m) for m in metrics)
    return [(f"{test}: {names} per training step, your run", buf.getvalue())]
