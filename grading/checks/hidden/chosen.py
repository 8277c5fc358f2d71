"""Chosen inputs: examples that the differential checks run besides hypothesis's draws, and the
confirmation inputs of the diagnosis. Both are built here, not drawn, from levels of the factors in
domains.py, so that they separate what hypothesis's first draws often do not (k1 with beta > 1e-3
and a negative log-ratio, full rows with T >= 2 and gamma inside (0, 1), exact ties of rewards).

    examples("compute_gae")            -> [(Ragged([rewards, values], mask), gamma, lam), ...]
    confirmation_calls("compute_gae")  -> ((args, kwargs), ...) non-degenerate calls reaching every pair

`examples(f)` is, in this order: one example per row of a pairwise covering array of f's factors
(the engine's autograder/checks/covering.py: every possible pair of levels in some example), one
example per name of REJECTED not yet tried (kl_estimate and shaped_rewards: a kind the contract
rejects, which the reference answers with ValueError), and one example in the training's own regime
(float32, B = 32 rollouts of T = 4 tokens with ragged rows, k1, beta = 0.2, gamma = 1, lam = 0.95;
the reward model's first step, where every pair ties). Each is in the form of the check's strategy,
so the check's own body runs it. Everything is seeded and deterministic (random.Random from the
function's name and the row). The pieces the builders share with other labs' (masks of a row layout,
values on the generated tokens, ratios of a clip level...) are the engine's autograder/checks/chosen.py.
"""

from __future__ import annotations

import functools
import math
import random
from typing import Any, Callable

import torch

from autograder.checks.chosen import (
    clip_eps_of,
    confirmation_rows,
    dtype_of,
    grid,
    log_ratio_of,
    on_tokens,
    place_units,
    prefix_mask,
    row_lengths,
    seeded,
    signed,
    t_of,
)
from autograder.checks.covering import Row, covering_rows
from autograder.checks.factors import T_CLASSES
from autograder.checks.strategies import LOGPROB_MIN, Ragged, logprob_pair

from ...checks.hidden import domains as dom

# kinds the contract rejects: other libraries' names (verl's kl_penalty, its straight-through "+" forms),
# case variants, near misses, the empty string
REJECTED = ("kl", "abs", "mse", "low_var_kl", "full", "k1+", "K1", "K2", "K3", "k4", "k0", "k", "k1 ", " k1", "",
            "kl1")
UNITS = 8       # units (tokens, pairs, ranked rows) an example can give designated levels, where it has room
GAP = 2.0 ** -12  # the smallest near-equal gap used (a multiple of it stays exact in float32 up to |r| = 1024)


# ---------------------------------------------------------------- shared pieces
def _capacity(levels: dict[str, str]) -> int:
    """How many units of an example get designated levels: one where there is only one, else UNITS."""
    single = (levels.get("T") == "T = 1" and (levels.get("rows", "").startswith("one") or levels.get("B") == "B = 1")
              or levels.get("P") == "P = 1" or levels.get("N") == "N = 1")
    return 1 if single else UNITS


def _units(function: str, levels: dict[str, str], designated: list, n: int, r: random.Random) -> list[dict[str, str]]:
    return place_units(dom.FACTORS[function], dom.IMPOSSIBLE.get(function, {}), levels, designated, n, r)


def _unit_value(rng: random.Random, level: str) -> float:
    if level in ("0", "1"):
        return float(level)
    return rng.randint(3, 61) / 64  # strictly inside (0, 1), exact in float32


def _d(rng: random.Random, level: str) -> float:
    """A log-ratio d = logp - ref_logp of the level (|d| <= 40)."""
    if level == "d = 0":
        return 0.0
    if level == "0 < |d| <= 1e-3":
        return rng.choice((-1, 1)) * rng.randint(1, 4) * GAP
    lo, hi = (1 / 64, 10) if "10" in level and "20" not in level else ((10.125, 20) if "10" in level else (20.125, 40))
    negative = level.startswith("-") or level.startswith("d <")
    return (-1 if negative else 1) * grid(rng, lo, hi, 1 / 64)


def _logprobs(rng: random.Random, ds: list[float], mask: torch.Tensor,
              dtype: torch.dtype) -> tuple[torch.Tensor, torch.Tensor]:
    """(logp, ref_logp), log-probs in [-40, 0] with logp - ref_logp = ds on the generated tokens; garbage
    (log-probs in range) at padded positions."""
    where = on_tokens([rng.random() for _ in ds], mask, 1.0, rng, torch.float64)
    d = on_tokens(ds, mask, -LOGPROB_MIN, rng, torch.float64)
    logp, ref_logp = logprob_pair(where, d)
    return logp.to(dtype), ref_logp.to(dtype)


def _kind(level: str, rejected: list[str]) -> str:
    """The kind of a level; "rejected" takes the next name of REJECTED (round robin)."""
    if level != "rejected":
        return level
    name = REJECTED[len(rejected) % len(REJECTED)]
    rejected.append(name)
    return name


# ---------------------------------------------------------------- one builder per function
def _gae(rng: random.Random, levels: dict[str, str], designated: list, rejected: list) -> tuple:
    dtype = dtype_of(levels)
    lengths, T = row_lengths(rng, levels["T"], levels["rows"], 0)
    mask = prefix_mask(lengths, T, dtype)
    n = sum(lengths)
    rewards = on_tokens([grid(rng, -10, 10) for _ in range(n)], mask, 1e3, rng, dtype)
    values = on_tokens([grid(rng, -10, 10) for _ in range(n)], mask, 1e3, rng, dtype)
    return Ragged([rewards, values], mask), _unit_value(rng, levels["gamma"]), _unit_value(rng, levels["lam"])


def _policy(rng: random.Random, levels: dict[str, str], designated: list, rejected: list) -> tuple:
    dtype, eps = dtype_of(levels), clip_eps_of(rng, levels["clip_eps"])
    lengths, T = row_lengths(rng, levels["T"], levels["rows"], len(designated))
    mask = prefix_mask(lengths, T, dtype)
    units = _units("ppo_policy_loss", levels, designated, sum(lengths), rng)
    where = on_tokens([rng.random() for _ in units], mask, 1.0, rng, dtype)
    log_ratio = on_tokens([log_ratio_of(rng, u["ratio"], eps) for u in units], mask, -LOGPROB_MIN, rng, dtype)
    advantages = on_tokens([signed(rng, u["A"]) for u in units], mask, 1e3, rng, dtype)
    return Ragged([where, log_ratio, advantages], mask), eps


def _value_token(rng: random.Random, unit: dict[str, str], eps: float) -> tuple[float, float, float]:
    """(old_values, values - old_values, returns) of one token with the unit's levels, all in [-10, 10]."""
    side, direction = unit["clip side"], unit["values - old"]
    if side == dom.CLIP_SIDES[0]:
        step = 0.0 if direction == "= 0" else (-1 if direction == "< 0" else 1) * rng.uniform(0.1, 0.9) * eps
    else:
        step = (-1 if direction == "< 0" else 1) * rng.uniform(eps + 0.05, eps + 3)
    old = rng.uniform(-10 + max(0, -step), 10 - max(0, step))
    v, v_clip = old + step, old + max(-eps, min(eps, step))
    if side == dom.CLIP_SIDES[1]:      # returns beyond values, away from old: the clipped error is larger
        ret = v + math.copysign(rng.uniform(0.1, 3), step)
    elif side == dom.CLIP_SIDES[2]:    # returns on old's side of v_clip: the unclipped error is larger
        ret = v_clip - math.copysign(rng.uniform(0.1, 3), step)
    else:
        ret = rng.uniform(-10, 10)
    return old, step, max(-10.0, min(10.0, ret))


def _value(rng: random.Random, levels: dict[str, str], designated: list, rejected: list) -> tuple:
    dtype, eps = dtype_of(levels), clip_eps_of(rng, levels["clip_eps"])
    lengths, T = row_lengths(rng, levels["T"], levels["rows"], len(designated))
    mask = prefix_mask(lengths, T, dtype)
    tokens = [_value_token(rng, u, eps) for u in _units("ppo_value_loss", levels, designated, sum(lengths), rng)]
    old, step, ret = ([t[i] for t in tokens] for i in range(3))
    return Ragged([on_tokens(old, mask, 1e3, rng, dtype), on_tokens(step, mask, 0.0, rng, dtype),
                   on_tokens(ret, mask, 1e3, rng, dtype)], mask), eps


def _kl(rng: random.Random, levels: dict[str, str], designated: list, rejected: list) -> tuple:
    dtype = dtype_of(levels)
    T = t_of(rng, levels["T"], max(2, len(designated)))
    B = 1 if levels["B"] == "B = 1" else max(rng.randint(2, 4), -(-len(designated) // T))
    mask = torch.ones(B, T, dtype=dtype)
    units = _units("kl_estimate", levels, designated, B * T, rng)
    logp, ref_logp = _logprobs(rng, [_d(rng, u["d"]) for u in units], mask, dtype)
    return logp, ref_logp, _kind(levels["kind"], rejected)


def _beta(rng: random.Random, level: str) -> float:
    if level in ("0", "1"):
        return float(level)
    return rng.choice((2.0 ** -11, 2.0 ** -14, 1e-4)) if level == "0 < beta < 1e-3" else rng.randint(1, 63) / 64


def _shaped(rng: random.Random, levels: dict[str, str], designated: list, rejected: list) -> tuple:
    dtype = dtype_of(levels)
    lengths, T = row_lengths(rng, levels["T"], levels["rows"], len(designated))
    mask = prefix_mask(lengths, T, dtype)
    units = _units("shaped_rewards", levels, designated, sum(lengths), rng)
    logp, ref_logp = _logprobs(rng, [_d(rng, u["d"]) for u in units], mask, dtype)
    scores = torch.tensor([grid(rng, -50, 50) for _ in lengths], dtype=dtype)
    return scores, logp, ref_logp, mask, _beta(rng, levels["beta"]), _kind(levels["kind"], rejected)


def _gap(rng: random.Random, unit: dict[str, str]) -> tuple[float, float]:
    """(r_better, r_worse) with the unit's gap and size levels (rewards in [-1000, 1000])."""
    level, small = unit["gap"], unit["size"] == "|r| <= 100"
    bound = 100 if small else 1000
    if level == dom.GAP_LEVELS[0]:
        gap = 0.0
    elif level == dom.GAP_LEVELS[1]:
        gap = rng.choice((-1, 1)) * rng.randint(1, 4) * GAP
    elif level in dom.GAP_LEVELS[2:4]:
        gap = (-1 if "-100" in level else 1) * grid(rng, 1 / 8, 100)
    else:
        gap = (-1 if "<" in level else 1) * grid(rng, 100.125, 199.875 if small else 1999)
    while True:  # a large reward: most draws have one
        worse = grid(rng, max(-bound, -bound - gap), min(bound, bound - gap))
        if small or max(abs(worse), abs(worse + gap)) > 100:
            return worse + gap, worse


def _bt(rng: random.Random, levels: dict[str, str], designated: list, rejected: list) -> tuple:
    dtype = dtype_of(levels)
    P = {"P = 1": 1, "2 <= P < 10": rng.randint(max(2, len(designated)), 9),
         "P >= 10": rng.randint(10, 16)}[levels["P"]]
    pairs = [_gap(rng, u) for u in _units("bradley_terry_loss", levels, designated, P, rng)]
    return (torch.tensor([p[0] for p in pairs], dtype=dtype), torch.tensor([p[1] for p in pairs], dtype=dtype))


def _ranked_row(rng: random.Random, K: int, unit: dict[str, str]) -> tuple[list[float], list[int]]:
    bound = 100 if unit["size"] == "|r| <= 100" else 1000
    values: list[float] = []
    while len(values) < {"all different": K, "some tied": K - 1, "all tied": 1}[unit["ties"]]:
        x = grid(rng, -bound, bound)
        values += [x] if x not in values else []
    if bound == 1000 and max(map(abs, values)) <= 100:
        values[0] = rng.choice((-1, 1)) * grid(rng, 100.125, 1000)
    rewards = values + [rng.choice(values) for _ in range(K - len(values))]
    rng.shuffle(rewards)
    order = list(range(K))
    if unit["ranking"] == "reversed":
        order.reverse()
    elif unit["ranking"] == "another permutation":
        while order in (list(range(K)), list(range(K))[::-1]):
            rng.shuffle(order)
    return rewards, order


def _ranking(rng: random.Random, levels: dict[str, str], designated: list, rejected: list) -> tuple:
    dtype = dtype_of(levels)
    K = {"K = 2": 2, "3 <= K < 6": rng.randint(3, 5), "K >= 6": rng.randint(6, 8)}[levels["K"]]
    N = 1 if levels["N"] == "N = 1" else rng.randint(max(2, len(designated)), 8)
    rows = [_ranked_row(rng, K, u) for u in _units("ranking_loss", levels, designated, N, rng)]
    return (torch.tensor([r for r, _ in rows], dtype=dtype), torch.tensor([o for _, o in rows], dtype=torch.long))


BUILDERS: dict[str, Callable[[random.Random, dict, list, list], tuple]] = {
    "bradley_terry_loss": _bt, "ranking_loss": _ranking, "compute_gae": _gae, "ppo_policy_loss": _policy,
    "ppo_value_loss": _value, "kl_estimate": _kl, "shaped_rewards": _shaped,
}


# ---------------------------------------------------------------- the training's own regime
def _training(function: str) -> tuple:
    """One input as the lab's training makes it (assignment/training.py: PPO's batches of 32 rollouts of
    4 tokens, minibatches of 16, k1, beta = 0.2, gamma = 1, lam = 0.95; the reward model's first step of
    1024 rankings of 4 responses, its weights 0: every reward ties)."""
    rng, f32 = seeded(function, "training"), torch.float32
    B = 16 if function.startswith("ppo") else 32
    lengths = [rng.choice((1, 2, 3, 4, 4, 4)) for _ in range(B)]
    lengths[0] = 4
    mask = prefix_mask(lengths, 4, f32)
    n = sum(lengths)
    if function == "bradley_terry_loss":
        return torch.zeros(6 * 1024, dtype=f32), torch.zeros(6 * 1024, dtype=f32)
    if function == "ranking_loss":
        orders = [rng.sample(range(4), 4) for _ in range(1024)]
        return torch.zeros(1024, 4, dtype=f32), torch.tensor(orders, dtype=torch.long)
    if function == "compute_gae":
        rewards = on_tokens([rng.gauss(0, 0.3) for _ in range(n)], mask, 0.0, rng, f32)
        rewards[torch.arange(B), torch.tensor(lengths) - 1] += torch.tensor([rng.uniform(-3, 3) for _ in range(B)])
        values = on_tokens([rng.uniform(-2, 2) for _ in range(n)], mask, 0.0, rng, f32)
        return Ragged([rewards, values], mask), 1.0, 0.95
    if function == "ppo_policy_loss":
        where = on_tokens([rng.uniform(0, 0.2) for _ in range(n)], mask, 1.0, rng, f32)
        log_ratio = on_tokens([rng.gauss(0, 0.15) for _ in range(n)], mask, 0.0, rng, f32)
        advantages = on_tokens([max(-3, min(3, rng.gauss(0, 1))) for _ in range(n)], mask, 0.0, rng, f32)
        return Ragged([where, log_ratio, advantages], mask), 0.2
    if function == "ppo_value_loss":
        old = on_tokens([rng.uniform(-2, 2) for _ in range(n)], mask, 0.0, rng, f32)
        step = on_tokens([rng.gauss(0, 0.2) for _ in range(n)], mask, 0.0, rng, f32)
        return Ragged([old, step, on_tokens([rng.uniform(-3, 3) for _ in range(n)], mask, 0.0, rng, f32)], mask), 0.2
    full = torch.ones(B, 4, dtype=f32)
    if function == "kl_estimate":
        logp, ref_logp = _logprobs(rng, [rng.gauss(0, 0.5) for _ in range(4 * B)], full, f32)
        return logp, ref_logp, "k1"
    logp, ref_logp = _logprobs(rng, [rng.gauss(0, 0.5) for _ in range(n)], mask, f32)
    return torch.tensor([rng.uniform(-3, 3) for _ in range(B)], dtype=f32), logp, ref_logp, mask, 0.2, "k1"


# ---------------------------------------------------------------- what the checks and the diagnosis use
def _per_unit(function: str) -> bool:
    return any(f.per != "call" for f in dom.FACTORS[function])


def _build(function: str, row: Row, key: Any, rejected: list[str]) -> tuple:
    return BUILDERS[function](seeded(function, key), row.levels, row.units, rejected)


@functools.lru_cache(maxsize=None)
def examples(function: str) -> tuple:
    """The chosen examples of `function`'s differential check (see the module docstring)."""
    rows = covering_rows(dom.FACTORS[function], dom.IMPOSSIBLE.get(function, {}),
                         _capacity if _per_unit(function) else (lambda levels: 0))
    rejected: list[str] = []
    built = [_build(function, row, i, rejected) for i, row in enumerate(rows)]
    if "kind" in {f.name for f in dom.FACTORS[function]}:
        template = next(row for row in rows if row.levels["kind"] == "rejected")
        for i in range(len(REJECTED) - len(rejected)):
            built.append(_build(function, template, f"rejected {i}", rejected))
    return tuple(built) + (_training(function),)


def call_of(function: str, example: tuple) -> tuple[tuple, dict]:
    """The contract call (args, kwargs) that a check makes for an example of its strategy."""
    if function == "compute_gae":
        inp, gamma, lam = example
        return (*inp.tensors, inp.mask), {"gamma": gamma, "lam": lam}
    if function == "ppo_policy_loss":
        (where, log_ratio, advantages), mask = example[0].tensors, example[0].mask
        return (*logprob_pair(where, log_ratio), advantages, mask), {"clip_eps": example[1]}
    if function == "ppo_value_loss":
        (old, step, returns), mask = example[0].tensors, example[0].mask
        return (old + step, old, returns, mask), {"clip_eps": example[1]}
    if function == "kl_estimate":
        return example[:2], {"kind": example[2]}
    return tuple(example), {}


# per function: the levels its confirmation inputs may take (the others: all of the factor's), non-degenerate ones:
# T >= 2, several rows, gamma and lam inside (0, 1), beta > 0. The inputs are a pairwise covering array of these
# (chosen.confirmation_rows): every kind (a rejected one too) on every row layout, never in lockstep.
_INSIDE = ("strictly inside (0, 1)",)
_CONFIRM: dict[str, dict[str, tuple[str, ...]]] = {
    "compute_gae": {"T": T_CLASSES[1:], "gamma": _INSIDE, "lam": _INSIDE},
    "ppo_policy_loss": {"T": T_CLASSES[1:]},
    "ppo_value_loss": {"T": T_CLASSES[1:]},
    "kl_estimate": {"T": T_CLASSES[1:], "B": ("B > 1",)},
    "shaped_rewards": {"T": T_CLASSES[1:], "beta": ("1e-3 <= beta < 1",)},
    "bradley_terry_loss": {"P": ("2 <= P < 10", "P >= 10")},
    "ranking_loss": {"N": ("N > 1",)},
}


@functools.lru_cache(maxsize=None)
def confirmation_calls(function: str) -> tuple[tuple[tuple, dict], ...]:
    """Chosen, non-degenerate calls of `function`: one per row of a pairwise covering array of its factors
    narrowed to _CONFIRM (both dtypes, every pair of levels, the rows' units designated)."""
    rows = confirmation_rows(dom.FACTORS[function], dom.IMPOSSIBLE.get(function, {}), _CONFIRM[function], _capacity)
    rejected: list[str] = []
    return tuple(call_of(function, _build(function, row, f"confirm {i}", rejected)) for i, row in enumerate(rows))
