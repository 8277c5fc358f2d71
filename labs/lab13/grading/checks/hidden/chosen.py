"""Chosen inputs that a declaration does not give, run after those the engine derives from grading.yaml's domains
(autograder/checks/lab_inputs.py: derived first, then these), in the form each differential check draws (the
function's positional arguments):

    examples("grpo_policy_loss")            -> the training's own regime (two minibatches)
    examples("group_advantages")            -> float32 groups of equal rewards whose mean rounds, then the training's
    confirmation_calls("group_advantages")  -> those groups as (args, kwargs) calls (the derived ones come first)

group_advantages' groups of equal real rewards whose float32 mean is not exactly their value: that rounding is a
property of the arithmetic, not a level, and a declared domain reaches it only by chance. The training's regime
(training.py): float32 groups of 8 binary rewards for 16 prompts, GRPO's minibatches of 64 ragged rows of 4 tokens
with clip_eps 0.2, beta 0.04, token_mean, and Dr. GRPO's beta 0, token_sum_norm; DPO's and IPO's batches of 64 pairs
at beta 0.1. Everything is seeded (the engine's autograder/checks/chosen.py: random.Random of the function's name and
what it is for).
"""

from __future__ import annotations

import functools
import random

import torch

from autograder.checks.chosen import prefix_mask, seeded


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
    return _grpo_minibatches(r) if function == "grpo_policy_loss" else []


def _grpo_minibatches(r: random.Random) -> list[tuple]:
    """Two minibatches of 64 answers of 2 to 4 tokens (the first full), as grpo_policy_loss's positional arguments:
    sampled tokens' log-probs in [-8, 0], the policy within a few percent of the old one, the reference near it."""
    lengths = [r.choice((2, 3, 3, 4, 4, 4)) for _ in range(64)]
    lengths[0] = 4
    mask = prefix_mask(lengths, 4, torch.float32)

    def logprobs(centre: torch.Tensor | None, spread: float) -> torch.Tensor:
        drawn = [[-r.uniform(0, 8) if centre is None else float(centre[b, t]) + r.gauss(0, spread) for t in range(4)]
                 for b in range(64)]
        return torch.tensor(drawn, dtype=torch.float64).clamp(max=0.0)
    made = []
    for beta, aggregation, normalize in ((0.04, "token_mean", True), (0.0, "token_sum_norm", False)):
        rewards = torch.tensor(_binary_groups(r, 8), dtype=torch.float64).view(-1, 8)
        adv = rewards - rewards.mean(1, keepdim=True)
        adv = (adv / (rewards.std(1, keepdim=True) + 1e-6) if normalize else adv).reshape(-1)
        old_logp = logprobs(None, 0.0)
        logp = logprobs(old_logp, 0.15)
        ref_logp = logprobs(logp, 0.3)
        made.append((logp.float(), old_logp.float(), ref_logp.float(), adv.float(), mask, 0.2, beta, aggregation))
    return made


# ---------------------------------------------------------------- what the checks and the diagnosis use
@functools.lru_cache(maxsize=None)
def examples(function: str) -> tuple:
    """The chosen examples of `function`'s differential check beyond the derived ones (the module docstring)."""
    made = _equal_groups(seeded(function, "rounding")) if function == "group_advantages" else []
    return tuple(made + _training(function))


@functools.lru_cache(maxsize=None)
def confirmation_calls(function: str) -> tuple[tuple[tuple, dict], ...]:
    """group_advantages' equal groups whose mean rounds, as (args, kwargs) calls (the engine's derived confirmation
    inputs come first); none for the other functions (theirs are derived)."""
    if function != "group_advantages":
        return ()
    return tuple(((rewards, G), {"normalize_std": normalize, "eps": eps})
                 for rewards, G, normalize, eps in _equal_groups(seeded(function, "rounding")))
