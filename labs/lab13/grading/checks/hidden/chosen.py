"""Chosen inputs: examples that the differential checks run besides hypothesis's draws, and the
confirmation inputs of the diagnosis. Both are built here, not drawn, from levels of the factors in
domains.py, so that they reach what hypothesis's first draws often do not (a token with A < 0 beyond e^20
next to a k3 log-ratio above 10).

    examples("grpo_policy_loss")            -> [(Ragged([where, log_ratio, ref, adv], mask), eps, beta, agg), ...]
    confirmation_calls("grpo_policy_loss")  -> ((args, kwargs), ...) non-degenerate calls reaching every pair

The other functions' are derived from their domains declared in grading.yaml (autograder/checks/declared.py,
units.py); this module adds what a declaration does not give (checks/lab_inputs.py runs them after the derived
ones): group_advantages' groups of equal real rewards whose float32 mean is not exactly their value (that
rounding is a property of the arithmetic, not a level), and the training's own inputs.

`examples(f)` is one example per row of a pairwise covering array of f's factors (the engine's
autograder/checks/covering.py: every possible pair of levels in some example), then the training's own
regime (training.py: float32 groups of 8 binary rewards for 16 prompts, GRPO's minibatches of 64 ragged
rows of 4 tokens with clip_eps 0.2, beta 0.04, token_mean, and Dr. GRPO's beta 0, token_sum_norm; DPO's
and IPO's batches of 64 pairs at beta 0.1, after their derived examples). Each is in the form of the check's
strategy, so the check's own body runs it. Everything is seeded (the engine's autograder/checks/chosen.py:
random.Random of the function's name and the row).
"""

from __future__ import annotations

import functools
import math
import random
from typing import Callable

import torch

from autograder.checks.chosen import (
    clip_eps_of,
    confirmation_rows,
    dtype_of,
    grid,
    log_ratio_of,
    on_tokens,
    prefix_mask,
    random_unit,
    row_lengths,
    seeded,
    signed,
)
from autograder.checks.covering import Row, covering_rows
from autograder.checks.factors import T_CLASSES
from autograder.checks.strategies import LOGPROB_MIN, Ragged, logprob_pair

from ...checks.hidden import domains as dom

UNITS = 8       # tokens an example can give designated levels, where it has room
ROOM = -LOGPROB_MIN  # log-probs lie in [-ROOM, 0]


def _capacity(levels: dict[str, str]) -> int:
    """How many tokens of an example get designated levels: one where there is one row, else UNITS."""
    return 1 if levels.get("rows", "").startswith("one") else UNITS


# ---------------------------------------------------------------- group_advantages
def _equal(r: random.Random, G: int, dtype: torch.dtype) -> float:
    """A reward in [-10, 10] whose mean over G copies, computed in `dtype`, is not exactly itself (about 1 in 5
    in float32; the first of 50 tries, else the last): where r - mean is a rounding error, not 0."""
    for _ in range(50):
        x = float(torch.tensor(r.uniform(-10, 10), dtype=dtype))
        if float(torch.full((G,), x, dtype=dtype).mean()) != x:
            break
    return x


def _equal_groups(r: random.Random) -> list[tuple]:
    """float32 batches of a group of equal real rewards whose mean is not exactly their value (`_equal`) beside a
    group of distinct ones, as group_advantages' check gets its arguments: where r - mean is a rounding error, not 0,
    which dividing by std + eps = eps magnifies. The declared domain's groups reach that rounding only by chance."""
    made = []
    for G, normalize, eps in ((3, True, 1e-8), (5, True, 1e-6), (8, True, 1e-2), (4, False, 1e-6)):
        rewards = [_equal(r, G, torch.float32)] * G + [r.uniform(-10, 10) for _ in range(G)]
        made.append((torch.tensor(rewards, dtype=torch.float32), G, normalize, eps))
    return made


# ---------------------------------------------------------------- grpo_policy_loss
# d level -> (sign, |d| from, to): |d| < 19.5, so that a log-ratio beyond 20 fits beside it
_D_RANGES = {"-10 <= d < -1e-3": (-1, 1 / 64, 10), "1e-3 < d <= 10": (1, 1 / 64, 10), "d < -10": (-1, 10.125, 19.5),
             "d > 10": (1, 10.125, 19.5)}


def _kl_d(r: random.Random, level: str) -> float:
    """d = ref_logp - logp of the level."""
    if level == "d = 0":
        return 0.0
    if level == "0 < |d| <= 1e-3":
        return r.choice((-1, 1)) * r.randint(1, 4) * 2.0 ** -12
    sign, lo, hi = _D_RANGES[level]
    return sign * grid(r, lo, hi, 1 / 64)


def _token(r: random.Random, unit: dict[str, str], eps: float) -> tuple[float, float, float]:
    """(where, log_ratio, d) of one generated token with the unit's ratio and d levels, placed so that logp,
    old_logp = logp - log_ratio and ref_logp = logp + d all lie in [-40, 0]."""
    d = _kl_d(r, unit["d"])
    lr = log_ratio_of(r, unit["ratio"], eps)
    if lr * d > 0 and abs(lr) + abs(d) > ROOM:  # old_logp and ref_logp on opposite sides of logp: 40 apart at most
        lr = math.copysign(grid(r, 20.5, ROOM - abs(d), 1 / 64), lr)
    low, high = max(-ROOM, -ROOM + lr, -ROOM - d), min(0.0, lr, -d)
    logp = r.uniform(low, high)
    room = ROOM - abs(lr)  # logprob_pair: the higher of the pair sits |where| of the way down this room
    top = logp if lr >= 0 else logp - lr
    return (min(1.0, -top / room) if room > 0 else 0.0), lr, d


def _grpo_tokens(r: random.Random, levels: dict[str, str], designated: list, lengths: list[int]) -> list[list[dict]]:
    """Each row's tokens' levels: designated units one to a row (a row has one advantage), at a random token;
    every other token random levels with its row's sign of A."""
    factors, impossible = dom.FACTORS["grpo_policy_loss"], dom.IMPOSSIBLE["grpo_policy_loss"]
    rows_of = r.sample(range(len(lengths)), len(designated))
    mine = dict(zip(rows_of, designated))
    rows = []
    for b, n in enumerate(lengths):
        sign = mine[b]["A"] if b in mine else r.choice(dom.SIGN_LEVELS)
        tokens = [{**random_unit(factors, impossible, levels, r), "A": sign} for _ in range(n)]
        if b in mine:
            tokens[r.randrange(n)] = mine[b]
        rows.append(tokens)
    return rows


def _beta(r: random.Random, level: str) -> float:
    return float(level) if level in ("0", "1") else r.choice((0.04, 0.1, 0.5))


def _grpo(r: random.Random, levels: dict[str, str], designated: list) -> tuple:
    dtype, eps = dtype_of(levels), clip_eps_of(r, levels["clip_eps"])
    beta = _beta(r, levels["beta"])
    lengths, T = row_lengths(r, levels["T"], levels["rows"], len(designated), min_rows=len(designated))
    mask = prefix_mask(lengths, T, dtype)
    rows = _grpo_tokens(r, levels, designated, lengths)
    placed = [_token(r, u, eps) for row in rows for u in row]
    where = on_tokens([p[0] for p in placed], mask, 1.0, r, dtype)
    log_ratio = on_tokens([p[1] for p in placed], mask, ROOM, r, dtype)
    logp, _ = logprob_pair(where, log_ratio)
    ref = logp.double()[mask.bool()] + torch.tensor([p[2] for p in placed], dtype=torch.float64)
    ref_logp = on_tokens(ref.clamp(LOGPROB_MIN, 0.0).tolist(), mask, ROOM, r, dtype)
    signs = [signed(r, row[0]["A"]) for row in rows]
    adv = on_tokens([a for a, n in zip(signs, lengths) for _ in range(n)], mask, 10.0, r, dtype)
    return Ragged([where, log_ratio, ref_logp, adv], mask), eps, beta, levels["aggregation"]


BUILDERS: dict[str, Callable[[random.Random, dict, list], object]] = {"grpo_policy_loss": _grpo}


# ---------------------------------------------------------------- the training's own regime
def _binary_groups(r: random.Random, N: int = 16, G: int = 8) -> list[float]:
    """N groups of G rewards as the addition task gives them: some all wrong, some all right, most mixed."""
    p = [r.choice((0.0, 0.1, 0.5, 0.8, 1.0)) for _ in range(N)]
    return [float(r.random() < q) for q in p for _ in range(G)]


def _preference_batches(r: random.Random) -> list[tuple]:
    """DPO's and IPO's batches as training.py makes them, as the derived check's argument tuples: 64 pairs at
    beta 0.1, the first step (policy = reference) and a later one; log-probs on the grid 2^-14 (checks/units.py)."""
    def fine(x: float) -> float:
        return round(x * 2 ** 14) / 2 ** 14
    ref_c, ref_r = ([-fine(r.uniform(0.5, 15)) for _ in range(64)] for _ in range(2))
    moved_c = [min(0.0, x + fine(r.gauss(-1, 2))) for x in ref_c]
    moved_r = [min(0.0, x + fine(r.gauss(-3, 2))) for x in ref_r]
    return [(*(torch.tensor(x, dtype=torch.float32) for x in (pc, pr, ref_c, ref_r)), 0.1)
            for pc, pr in ((ref_c, ref_r), (moved_c, moved_r))]


def _extras(function: str) -> list:
    """A declared function's examples beyond those derived from its domain: group_advantages' equal groups whose mean
    rounds, then the training's inputs."""
    made = _equal_groups(seeded(function, "rounding")) if function == "group_advantages" else []
    return made + _training(function)


def _training(function: str) -> list:
    """Inputs as training.py makes them: GRPO (16 prompts x 8 answers, minibatches of 64 of the 128 rows of 4
    tokens, clip_eps 0.2, beta 0.04, token_mean, std-normalised; Dr. GRPO: beta 0, token_sum_norm, no std), DPO
    and IPO (_preference_batches); float32; [] for sequence_logprob."""
    r, f32 = seeded(function, "training"), torch.float32
    if function == "group_advantages":
        rewards = torch.tensor(_binary_groups(r), dtype=f32)
        return [(rewards, 8, True, 1e-6), (rewards, 8, False, 1e-6)]
    if function in ("dpo_loss", "ipo_loss"):
        return _preference_batches(r)
    if function != "grpo_policy_loss":
        return []
    lengths = [r.choice((2, 3, 3, 4, 4, 4)) for _ in range(64)]
    lengths[0] = 4
    mask = prefix_mask(lengths, 4, f32)
    n = sum(lengths)
    made = []
    for beta, aggregation, normalize in ((0.04, "token_mean", True), (0.0, "token_sum_norm", False)):
        rewards = torch.tensor(_binary_groups(r, 8), dtype=torch.float64).view(-1, 8)
        adv = rewards - rewards.mean(1, keepdim=True)
        adv = (adv / (rewards.std(1, keepdim=True) + 1e-6) if normalize else adv).reshape(-1).tolist()
        where = on_tokens([r.uniform(0, 0.2) for _ in range(n)], mask, 1.0, r, f32)
        log_ratio = on_tokens([r.gauss(0, 0.15) for _ in range(n)], mask, 0.0, r, f32)
        logp, _ = logprob_pair(where, log_ratio)
        ref = (logp.double()[mask.bool()] + torch.tensor([r.gauss(0, 0.3) for _ in range(n)])).clamp(max=0.0)
        ref_logp = on_tokens(ref.tolist(), mask, ROOM, r, f32)
        advantages = on_tokens([a for a, k in zip(adv, lengths) for _ in range(k)], mask, 0.0, r, f32)
        made.append((Ragged([where, log_ratio, ref_logp, advantages], mask), 0.2, beta, aggregation))
    return made


# ---------------------------------------------------------------- what the checks and the diagnosis use
def _build(function: str, row: Row, key: object) -> object:
    return BUILDERS[function](seeded(function, key), row.levels, row.units)


@functools.lru_cache(maxsize=None)
def examples(function: str) -> tuple:
    """The chosen examples of `function`'s differential check (see the module docstring). A function whose domain is
    declared: its extras (the engine runs them after the ones it derives: checks/lab_inputs.py)."""
    if function not in dom.FACTORS:
        return tuple(_extras(function))
    factors = dom.FACTORS[function]
    per_unit = any(f.per != "call" for f in factors)
    rows = covering_rows(factors, dom.IMPOSSIBLE.get(function, {}), _capacity if per_unit else (lambda levels: 0))
    return tuple(_build(function, row, i) for i, row in enumerate(rows)) + tuple(_training(function))


def call_of(function: str, example) -> tuple[tuple, dict]:
    """The contract call (args, kwargs) that a check makes for an example of its strategy."""
    if function == "group_advantages":
        rewards, G, normalize, eps = example
        return (rewards, G), {"normalize_std": normalize, "eps": eps}
    if function == "grpo_policy_loss":
        from ...checks.hidden.grpo_loss import inputs
        logp, old_logp, ref_logp, adv, mask, eps, beta, aggregation = inputs(example)
        return (logp, old_logp, ref_logp, adv, mask), {"clip_eps": eps, "beta": beta, "aggregation": aggregation}
    raise KeyError(function)


# per function: the levels its confirmation inputs may take (the others: all of the factor's), non-degenerate ones:
# several groups or rows, T >= 2. The inputs are a pairwise covering array of these (chosen.confirmation_rows).
_CONFIRM: dict[str, dict[str, tuple[str, ...]]] = {"grpo_policy_loss": {"T": T_CLASSES[1:]}}


@functools.lru_cache(maxsize=None)
def confirmation_calls(function: str) -> tuple[tuple[tuple, dict], ...]:
    """Chosen, non-degenerate calls of grpo_policy_loss: one per row of a pairwise covering array of its factors
    narrowed to _CONFIRM (both dtypes, every pair of levels, the rows' units designated); group_advantages' equal
    groups whose mean rounds (the engine's derived confirmation inputs come first). The engine derives the other
    functions' from their declared domains."""
    if function == "group_advantages":
        return tuple(call_of(function, e) for e in _equal_groups(seeded(function, "rounding")))
    if function not in dom.FACTORS:
        return ()
    rows = confirmation_rows(dom.FACTORS[function], dom.IMPOSSIBLE.get(function, {}), _CONFIRM[function], _capacity)
    return tuple(call_of(function, BUILDERS[function](seeded(function, "confirm", i), row.levels, row.units))
                 for i, row in enumerate(rows))
