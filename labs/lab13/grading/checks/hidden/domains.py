"""The factors of each contract function's valid domain (solutions/posttrain.py states the domain; each
check module's docstring says how its strategies draw it), whose levels its differential check must reach
in pairs (the engine's autograder/checks/factors.py says what a factor is and which pairs a call reaches).

    DIFFERENTIAL["grpo_policy_loss"]  -> its differential check, "grpo_loss.matches_reference"
    FACTORS["grpo_policy_loss"]       -> dtype, T, rows, clip_eps, beta, aggregation; per token: A, ratio, d
    IMPOSSIBLE["grpo_policy_loss"]    -> the pairs of levels no valid call has, each with its reason

`python -m autograder --lab labs/lab13 validate` (autograder/validity/coverage.py) runs every check on the
reference, records its calls, and fails on a possible pair that a differential check never reaches; the
chosen examples (chosen.py) are built from a pairwise covering array of these levels. The other functions are not
here: their domains (and per-unit factors: a pair's, a group's) are declared in grading.yaml, and their factors and
chosen examples are derived from them (autograder/checks/declared.py, units.py).
"""

from __future__ import annotations

from typing import Optional

import torch

from autograder.checks.factors import (
    CLIP_LEVELS,
    RATIO_LEVELS,
    SIGN_LEVELS,
    T1_HAS_NO_PADDING,
    Factor,
    Pair,
    clip_class,
    dtype_factor,
    ratio_class,
    rows_factor,
    sign_class,
    t_factor,
    tokens,
)

DIFFERENTIAL = {"grpo_policy_loss": "grpo_loss.matches_reference"}

# ---------------------------------------------------------------- grpo_policy_loss
BETA_LEVELS = ("0", "strictly inside (0, 1)", "1")
AGGREGATIONS = ("token_mean", "seq_mean_token_mean", "token_sum_norm")
# d = ref_logp - logp, the k3 term's log-ratio (|d| < 20 in chosen examples, so that a ratio beyond e^20 fits)
KL_LEVELS = ("d = 0", "0 < |d| <= 1e-3", "-10 <= d < -1e-3", "1e-3 < d <= 10", "d < -10", "d > 10")


def beta_class(beta: float) -> str:
    return BETA_LEVELS[0] if beta == 0 else (BETA_LEVELS[2] if beta == 1 else BETA_LEVELS[1])


def kl_class(d: float) -> str:
    if d == 0:
        return KL_LEVELS[0]
    if abs(d) <= 1e-3:
        return KL_LEVELS[1]
    return KL_LEVELS[(2 if abs(d) <= 10 else 4) + (d > 0)]


def _row_of_tokens(a: dict, values: torch.Tensor) -> list[float]:
    """A per-row value (B,) repeated on each of the row's generated tokens, row by row."""
    return values.double()[:, None].expand_as(a["mask"])[a["mask"].bool()].tolist()


def _ratio_tokens(a: dict) -> list[Optional[str]]:
    return [ratio_class(r, a["clip_eps"]) for r in torch.exp(torch.tensor(tokens(a, "logp"))
                                                             - torch.tensor(tokens(a, "old_logp"))).tolist()]


def _kl_tokens(a: dict) -> list[str]:
    return [kl_class(d) for d in (torch.tensor(tokens(a, "ref_logp")) - torch.tensor(tokens(a, "logp"))).tolist()]


FACTORS: dict[str, tuple[Factor, ...]] = {
    "grpo_policy_loss": (
        dtype_factor("logp"), t_factor("logp"), rows_factor(),
        Factor("clip_eps", CLIP_LEVELS, lambda a: clip_class(a["clip_eps"])),
        Factor("beta", BETA_LEVELS, lambda a: beta_class(a["beta"])),
        Factor("aggregation", AGGREGATIONS, lambda a: a["aggregation"]),
        Factor("A", SIGN_LEVELS, lambda a: [sign_class(x) for x in _row_of_tokens(a, a["advantages"])], per="token"),
        Factor("ratio", RATIO_LEVELS, _ratio_tokens, per="token"),
        Factor("d", KL_LEVELS, _kl_tokens, per="token"),
    ),
}

IMPOSSIBLE: dict[str, dict[Pair, str]] = {"grpo_policy_loss": T1_HAS_NO_PADDING}
