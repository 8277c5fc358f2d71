"""The regions of each contract function's valid domain that the checks must reach (solutions/rlhf.py
states the domain; each check module's docstring says how its strategies draw it), alone and in pairs.

    REGIONS["compute_gae"]["T = 1"](call)  -> does this call (argument name -> value) reach it?
    FACTORS["compute_gae"]                 -> its factors: dtype, T, row layout, gamma, lam (levels each)
    IMPOSSIBLE["compute_gae"]              -> the pairs of levels no valid call has, each with its reason

The engine's autograder/checks/factors.py says what a factor is and which pairs of levels a call reaches
(covered_pairs, possible_pairs); autograder/validity/coverage.py runs every check on the reference,
records the calls it makes, and counts the calls in each region and the pairs of levels they reach;
tests/test_strategies.py asserts that each function's differential check (DIFFERENTIAL) reaches every
region and every possible pair.
"""

from __future__ import annotations

from typing import Callable, Optional

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


# ---------------------------------------------------------------- factors: the regions in combination
# A factor classifies a call into one of a few named levels: per call (its dtype, its row layout, its
# gamma) or per unit (each generated token, preference pair or ranked row gets a level). Pairwise
# coverage asks, for every two factors of a function, that every possible pair of their levels occurs in
# some call of its differential check: two per-call levels in one call; a per-call and a per-unit level
# in one call, with one of its units; two per-unit levels in one unit (ONE token with A < 0 and a ratio
# above 1 + eps).


KINDS = ("k1", "k2", "k3")
KIND_LEVELS = (*KINDS, "rejected")
BETA_LEVELS = ("0", "0 < beta < 1e-3", "1e-3 <= beta < 1", "1")
D_LEVELS = ("d = 0", "0 < |d| <= 1e-3", "-10 <= d < -1e-3", "1e-3 < d <= 10", "-20 <= d < -10", "10 < d <= 20",
            "d < -20", "d > 20")
CLIP_SIDES = ("|v - old| <= eps", "|v - old| > eps, the clipped error larger",
              "|v - old| > eps, the unclipped error larger")
GAP_LEVELS = ("tie (gap = 0)", "0 < |gap| <= 1e-3", "-100 <= gap < -1e-3", "1e-3 < gap <= 100", "gap < -100",
              "gap > 100")
SIZE_LEVELS = ("|r| <= 100", "|r| > 100")
ORDER_LEVELS = ("identity", "reversed", "another permutation")
TIE_LEVELS = ("all different", "some tied", "all tied")


def unit_class(x: float) -> str:
    return "0" if x == 0 else ("1" if x == 1 else "strictly inside (0, 1)")


def beta_class(beta: float) -> str:
    return "0" if beta == 0 else ("1" if beta == 1 else ("0 < beta < 1e-3" if beta < 1e-3 else "1e-3 <= beta < 1"))


def d_class(d: float) -> str:
    a = abs(d)
    if a == 0:
        return D_LEVELS[0]
    if a <= 1e-3:
        return D_LEVELS[1]
    level = 2 if a <= 10 else (4 if a <= 20 else 6)
    return D_LEVELS[level + (d > 0)]


def gap_class(gap: float) -> str:
    if gap == 0:
        return GAP_LEVELS[0]
    if abs(gap) <= 1e-3:
        return GAP_LEVELS[1]
    if abs(gap) <= 100:
        return GAP_LEVELS[2 + (gap > 0)]
    return GAP_LEVELS[4 + (gap > 0)]


def size_class(r: float) -> str:
    return SIZE_LEVELS[abs(r) > 100]


def order_class(row: list[int]) -> str:
    identity = list(range(len(row)))
    return ORDER_LEVELS[0] if row == identity else (ORDER_LEVELS[1] if row == identity[::-1] else ORDER_LEVELS[2])


def tie_class(row: list[float]) -> str:
    distinct = len(set(row))
    return TIE_LEVELS[0] if distinct == len(row) else (TIE_LEVELS[2] if distinct == 1 else TIE_LEVELS[1])


def _d_tokens(a: dict) -> list[str]:
    return [d_class(d) for d in (torch.tensor(tokens(a, "logp")) - torch.tensor(tokens(a, "ref_logp"))).tolist()]


def _ratio_tokens(a: dict) -> list[str]:
    return [ratio_class(r, a["clip_eps"]) for r in torch.exp(torch.tensor(tokens(a, "logp"))
                                                             - torch.tensor(tokens(a, "old_logp"))).tolist()]


def _clip_sides(a: dict) -> list[Optional[str]]:
    v, old, ret = (torch.tensor(tokens(a, k), dtype=torch.float64) for k in ("values", "old_values", "returns"))
    eps = a["clip_eps"]
    v_clip = old + torch.clamp(v - old, -eps, eps)
    clipped_err, err = (v_clip - ret) ** 2, (v - ret) ** 2
    return [CLIP_SIDES[0] if abs(s) <= eps else (CLIP_SIDES[1] if c > e else (CLIP_SIDES[2] if e > c else None))
            for s, c, e in zip((v - old).tolist(), clipped_err.tolist(), err.tolist())]


def _pairs(a: dict) -> list[tuple[float, float]]:
    return list(zip(a["r_better"].double().tolist(), a["r_worse"].double().tolist()))


def _ranked_rows(a: dict) -> list[tuple[list[float], list[int]]]:
    return list(zip(a["rewards"].double().tolist(), a["ranking"].tolist()))


FACTORS: dict[str, tuple[Factor, ...]] = {
    "bradley_terry_loss": (
        dtype_factor("r_better"),
        Factor("P", ("P = 1", "2 <= P < 10", "P >= 10"),
               lambda a: "P = 1" if a["r_better"].numel() == 1 else ("P >= 10" if a["r_better"].numel() >= 10
                                                                     else "2 <= P < 10")),
        Factor("gap", GAP_LEVELS, lambda a: [gap_class(b - w) for b, w in _pairs(a)], per="pair"),
        Factor("size", SIZE_LEVELS, lambda a: [size_class(max(abs(b), abs(w))) for b, w in _pairs(a)], per="pair"),
    ),
    "ranking_loss": (
        dtype_factor("rewards"),
        Factor("N", ("N = 1", "N > 1"), lambda a: "N = 1" if a["rewards"].shape[0] == 1 else "N > 1"),
        Factor("K", ("K = 2", "3 <= K < 6", "K >= 6"),
               lambda a: "K = 2" if a["rewards"].shape[1] == 2 else ("K >= 6" if a["rewards"].shape[1] >= 6
                                                                     else "3 <= K < 6")),
        Factor("ranking", ORDER_LEVELS, lambda a: [order_class(o) for _, o in _ranked_rows(a)], per="row"),
        Factor("ties", TIE_LEVELS, lambda a: [tie_class(r) for r, _ in _ranked_rows(a)], per="row"),
        Factor("size", SIZE_LEVELS, lambda a: [size_class(max(map(abs, r))) for r, _ in _ranked_rows(a)], per="row"),
    ),
    "compute_gae": (
        dtype_factor("rewards"), t_factor("rewards"), rows_factor(),
        Factor("gamma", ("0", "strictly inside (0, 1)", "1"), lambda a: unit_class(a["gamma"])),
        Factor("lam", ("0", "strictly inside (0, 1)", "1"), lambda a: unit_class(a["lam"])),
    ),
    "ppo_policy_loss": (
        dtype_factor("logp"), t_factor("logp"), rows_factor(),
        Factor("clip_eps", CLIP_LEVELS, lambda a: clip_class(a["clip_eps"])),
        Factor("A", SIGN_LEVELS, lambda a: [sign_class(x) for x in tokens(a, "advantages")], per="token"),
        Factor("ratio", RATIO_LEVELS, _ratio_tokens, per="token"),
    ),
    "ppo_value_loss": (
        dtype_factor("values"), t_factor("values"), rows_factor(),
        Factor("clip_eps", CLIP_LEVELS, lambda a: clip_class(a["clip_eps"])),
        Factor("values - old", SIGN_LEVELS,
               lambda a: [sign_class(v - o) for v, o in zip(tokens(a, "values"), tokens(a, "old_values"))],
               per="token"),
        Factor("clip side", CLIP_SIDES, _clip_sides, per="token"),
    ),
    "kl_estimate": (
        dtype_factor("logp"), t_factor("logp"),
        Factor("B", ("B = 1", "B > 1"), lambda a: "B = 1" if a["logp"].shape[0] == 1 else "B > 1"),
        Factor("kind", KIND_LEVELS, lambda a: a["kind"] if a["kind"] in KINDS else "rejected"),
        Factor("d", D_LEVELS, _d_tokens, per="token"),
    ),
    "shaped_rewards": (
        dtype_factor("logp"), t_factor("logp"), rows_factor(),
        Factor("kind", KIND_LEVELS, lambda a: a["kind"] if a["kind"] in KINDS else "rejected"),
        Factor("beta", BETA_LEVELS, lambda a: beta_class(a["beta"])),
        Factor("d", D_LEVELS, _d_tokens, per="token"),
    ),
}

IMPOSSIBLE: dict[str, dict[Pair, str]] = {
    **{fn: T1_HAS_NO_PADDING for fn in ("compute_gae", "ppo_policy_loss", "shaped_rewards")},
    "ppo_value_loss": {
        **T1_HAS_NO_PADDING,
        **{(("values - old", "= 0"), ("clip side", side)): "values = old_values is inside the clip range"
           for side in CLIP_SIDES[1:]},
    },
    "ranking_loss": {
        (("K", "K = 2"), ("ranking", "another permutation")): "K = 2 has only the identity and its reverse",
        (("K", "K = 2"), ("ties", "some tied")): "K = 2: two tied rewards are all of the row's rewards",
    },
}
