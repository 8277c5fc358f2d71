"""Plots of end-to-end runs (PNG bytes) for the HTML report: the submission's run against the
reference's band (the 10th-90th percentile over calibration seeds, from data/reference_band.json)."""

from __future__ import annotations

import io
import json
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

BAND_FILE = Path(__file__).with_name("data") / "reference_band.json"
METRICS = (("rm_score", "RM score"), ("gold", "gold score"), ("kl", "KL to reference"))


def reference_band(test: str) -> dict:
    """{metric: {"lo": [...], "hi": [...]}} for an e2e test, or {} before calibration wrote it."""
    if not BAND_FILE.exists():
        return {}
    return json.loads(BAND_FILE.read_text()).get(test, {})


def e2e_plots(test: str, histories: dict[str, list[dict]]) -> list[tuple[str, bytes]]:
    """One figure (RM score, gold, KL per iteration) for the runs of an e2e test."""
    band = reference_band(test)
    fig, axes = plt.subplots(1, len(METRICS), figsize=(12, 3.2))
    for ax, (key, label) in zip(axes, METRICS):
        if key in band:
            lo, hi = band[key]["lo"], band[key]["hi"]
            ax.fill_between(range(len(lo)), lo, hi, color="0.85", label="reference (10-90%)")
        for name, history in histories.items():
            ax.plot([h[key] for h in history], label=f"your {name}")
        ax.set_title(label)
        ax.set_xlabel("PPO iteration")
    axes[0].legend(fontsize=8)
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=80, metadata={"Software": None})
    plt.close(fig)
    return [(f"{test}: RM score, gold score and KL per iteration", buf.getvalue())]
