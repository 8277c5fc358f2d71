"""The regions of each contract function's valid domain that the checks must reach (solutions/rlhf.py
states the domain; each check module's docstring says how its strategies draw it).

    REGIONS["compute_gae"]["T = 1"](call)  -> does this call (argument name -> value) reach it?

`autograder/validity/coverage.py` runs every check on the reference, records the calls it makes, and
counts the calls in each region; tests/test_strategies.py asserts that each function's differential
check (DIFFERENTIAL) reaches every region of its function.
"""

from __future__ import annotations

from typing import Callable

import torch

Region = Callable[[dict], bool]

# the check that compares a function with the reference on its whole domain
DIFFERENTIAL = {
    "bradley_terry_loss": "rm_loss.bt_matches_reference",
    "ranking_loss": "rm_loss.ranking_matches_reference",
    "compute_gae": "gae.matches_reference",
    "ppo_policy_loss": "ppo_clip.policy_matches_reference",
    "ppo_value_loss": "ppo_clip.value_matches_reference",
    "kl_estimate": "kl.estimate_matches_reference",
    "shaped_rewards": "kl.shaped_matches_reference",
}


def _lengths(a: dict) -> torch.Tensor:
    return a["mask"].sum(1)


def _padded(a: dict, name: str) -> torch.Tensor:
    return a[name][~a["mask"].bool()]


def _shape_regions(first: str) -> dict[str, Region]:
    """Sizes, masks and dtypes, for a function with a `mask` argument and (B, T) input `first`."""
    return {
        "T = 1": lambda a: a["mask"].shape[1] == 1,
        "B = 1 (a single row)": lambda a: a["mask"].shape[0] == 1,
        "long rows (T >= 24)": lambda a: a["mask"].shape[1] >= 24,
        "ragged rows (lengths differ)": lambda a: bool(_lengths(a).unique().numel() > 1),
        "a full row (no padding)": lambda a: bool((_lengths(a) == a["mask"].shape[1]).any()),
        "padded positions": lambda a: bool((a["mask"] == 0).any()),
        "float32": lambda a: a[first].dtype == torch.float32,
        "float64": lambda a: a[first].dtype == torch.float64,
    }


def _garbage(name: str, size: float) -> dict[str, Region]:
    return {f"garbage |{name}| > {size:g} at padding": lambda a: bool((_padded(a, name).abs() > size).any())}


def _ratio(a: dict) -> torch.Tensor:
    return torch.exp(a["logp"].double() - a["old_logp"].double())[a["mask"].bool()]


def _generated(a: dict, name: str) -> torch.Tensor:
    return a[name].double()[a["mask"].bool()]


def _policy_region(test: Callable[[torch.Tensor, torch.Tensor, float], torch.Tensor]) -> Region:
    return lambda a: bool(test(_ratio(a), _generated(a, "advantages"), a["clip_eps"]).any())


def _d(a: dict) -> torch.Tensor:
    d = a["logp"].double() - a["ref_logp"].double()
    return d[a["mask"].bool()] if "mask" in a else d.reshape(-1)


def _kind_is(kind: str) -> Region:
    return lambda a: a["kind"] == kind


def _kinds() -> dict[str, Region]:
    return {f"kind = {k!r}": _kind_is(k) for k in ("k1", "k2", "k3")}


def _d_regions() -> dict[str, Region]:
    return {
        "near-equal log-probs (0 < |d| <= 1e-3)": lambda a: bool(((_d(a).abs() <= 1e-3) & (_d(a) != 0)).any()),
        "d = 0": lambda a: bool((_d(a) == 0).any()),
        "d > 10": lambda a: bool((_d(a) > 10).any()),
        "d < -10": lambda a: bool((_d(a) < -10).any()),
        "|d| > 20": lambda a: bool((_d(a).abs() > 20).any()),
        "|d| = 40 (the bound)": lambda a: bool((_d(a).abs() >= 40 - 1e-4).any()),
    }


def _gap(a: dict) -> torch.Tensor:
    return a["r_better"].double() - a["r_worse"].double()


def _ranking_is(order: Callable[[int], list[int]]) -> Region:
    return lambda a: any(row == order(a["ranking"].shape[1]) for row in a["ranking"].tolist())


REGIONS: dict[str, dict[str, Region]] = {
    "bradley_terry_loss": {
        "P = 1 (one pair)": lambda a: a["r_better"].numel() == 1,
        "P >= 10": lambda a: a["r_better"].numel() >= 10,
        "gap < 0 (the worse scored higher)": lambda a: bool((_gap(a) < 0).any()),
        "|gap| > 100": lambda a: bool((_gap(a).abs() > 100).any()),
        "|gap| > 1000": lambda a: bool((_gap(a).abs() > 1000).any()),
        "near-equal rewards (|gap| <= 1e-3)": lambda a: bool((_gap(a).abs() <= 1e-3).any()),
        "near-equal rewards of size > 100": lambda a: bool(((_gap(a).abs() <= 1e-3)
                                                            & (a["r_better"].abs() > 100)).any()),
        "float32": lambda a: a["r_better"].dtype == torch.float32,
        "float64": lambda a: a["r_better"].dtype == torch.float64,
    },
    "ranking_loss": {
        "K = 2": lambda a: a["rewards"].shape[1] == 2,
        "K >= 6": lambda a: a["rewards"].shape[1] >= 6,
        "N = 1 (one prompt)": lambda a: a["rewards"].shape[0] == 1,
        "identity ranking": _ranking_is(lambda K: list(range(K))),
        "reversed ranking": _ranking_is(lambda K: list(range(K))[::-1]),
        "|reward| > 100": lambda a: bool((a["rewards"].abs() > 100).any()),
        "float32": lambda a: a["rewards"].dtype == torch.float32,
        "float64": lambda a: a["rewards"].dtype == torch.float64,
    },
    "compute_gae": {
        **_shape_regions("rewards"), **_garbage("values", 100), **_garbage("rewards", 100),
        "gamma = 0": lambda a: a["gamma"] == 0, "gamma = 1": lambda a: a["gamma"] == 1,
        "0 < gamma < 1": lambda a: 0 < a["gamma"] < 1,
        "lam = 0": lambda a: a["lam"] == 0, "lam = 1": lambda a: a["lam"] == 1,
        "|value| = 10 (the bound)": lambda a: bool((_generated(a, "values").abs() == 10).any()),
    },
    "ppo_policy_loss": {
        **_shape_regions("logp"),
        "ratio > 1 + eps with A > 0 (clipped)": _policy_region(lambda r, A, e: (r > 1 + e) & (A > 0)),
        "ratio > 1 + eps with A < 0": _policy_region(lambda r, A, e: (r > 1 + e) & (A < 0)),
        "ratio < 1 - eps with A > 0": _policy_region(lambda r, A, e: (r < 1 - e) & (A > 0)),
        "ratio < 1 - eps with A < 0 (clipped)": _policy_region(lambda r, A, e: (r < 1 - e) & (A < 0)),
        "ratio > 3 with A < 0 (where dual clip differs)": _policy_region(lambda r, A, e: (r > 3) & (A < 0)),
        "|log ratio| > 20": _policy_region(lambda r, A, e: r.log().abs() > 20),
        "ratio = 1": _policy_region(lambda r, A, e: r == 1),
        "clip_eps != 0.2": lambda a: a["clip_eps"] != 0.2,
        "clip_eps >= 0.5": lambda a: a["clip_eps"] >= 0.5,
        "|A| = 10 (the bound)": lambda a: bool((_generated(a, "advantages").abs() == 10).any()),
    },
    "ppo_value_loss": {
        **_shape_regions("values"), **_garbage("returns", 100),
        "|values - old| > eps, the clipped error larger": lambda a: bool(_value_sides(a)[0].any()),
        "|values - old| > eps, the unclipped error larger": lambda a: bool(_value_sides(a)[1].any()),
        "|values - old| < eps": lambda a: bool(((_generated(a, "values") - _generated(a, "old_values")).abs()
                                               < a["clip_eps"]).any()),
        "|values - old| > 1": lambda a: bool(((_generated(a, "values") - _generated(a, "old_values")).abs()
                                             > 1).any()),
        "clip_eps != 0.2": lambda a: a["clip_eps"] != 0.2,
    },
    "kl_estimate": {
        **_kinds(), **_d_regions(),
        "T = 1": lambda a: a["logp"].shape[1] == 1,
        "long rows (T >= 24)": lambda a: a["logp"].shape[1] >= 24,
        "float32": lambda a: a["logp"].dtype == torch.float32,
        "float64": lambda a: a["logp"].dtype == torch.float64,
    },
    "shaped_rewards": {
        **_shape_regions("logp"), **_kinds(), **_d_regions(),
        "beta = 0": lambda a: a["beta"] == 0, "beta = 1": lambda a: a["beta"] == 1,
        "|score| > 10": lambda a: bool((a["scores"].abs() > 10).any()),
        "|score| = 50 (the bound)": lambda a: bool((a["scores"].abs() == 50).any()),
    },
}


def _value_sides(a: dict) -> tuple[torch.Tensor, torch.Tensor]:
    v, old, ret = (_generated(a, k) for k in ("values", "old_values", "returns"))
    eps = a["clip_eps"]
    v_clip = old + torch.clamp(v - old, -eps, eps)
    outside = (v - old).abs() > eps
    clipped_err, err = (v_clip - ret) ** 2, (v - ret) ** 2
    return outside & (clipped_err > err), outside & (err > clipped_err)
