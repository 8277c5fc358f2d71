"""Hidden checks of bradley_terry_loss and ranking_loss: against the reference and the all-pairs mean.

Valid domain (solutions/rlhf.py): bradley_terry_loss: P >= 1 pairs (1 and up to 16 drawn), rewards in
[-1000, 1000], so gaps from near-equal (|gap| <= 1e-3, next to rewards of any size) to +-2000 (both
signs), exact ties drawn only by the chosen examples (chosen.py), whose gradient (-1/2 per pair at a
tie: the loss is smooth there) is compared too. ranking_loss: N >= 1 prompts, K >= 2 responses (2 to 8
drawn), each row of `ranking` a permutation of 0..K-1 (identity and reversed drawn), rewards in
[-1000, 1000], distinct in a drawn row, tied (some or all) in chosen rows. float32, float64.
"""

from __future__ import annotations

import functools
import itertools

import torch
from hypothesis import strategies as st

from autograder.checks import Context, check
from autograder.checks.examples import for_all
from autograder.checks.strategies import DTYPES, bounded, floats
from autograder.checks.tools import call

from ...checks.public.rm_loss import BT_NAMES, RANKING_NAMES, bt, expect_grads

REWARD_MAX = 1000


def eighths(lo: int, hi: int) -> st.SearchStrategy[float]:
    """Multiples of 1/8 in [lo, hi], exact in float32 (they shrink faster and read better than floats)."""
    return st.integers(8 * lo, 8 * hi).map(lambda k: k / 8)


def _apart(lo: int, hi: int) -> st.SearchStrategy[tuple[float, float]]:
    return st.tuples(eighths(lo, hi), eighths(lo, hi)).filter(lambda p: p[0] != p[1])


# (r_better, r_worse) pairs: small to huge gaps, and near-equal rewards of any size (strategies built once)
NEAR_EQUAL = st.tuples(bounded(-REWARD_MAX + 1, REWARD_MAX - 1), floats(2.0 ** -12, 2.0 ** -10, width=32),
                       st.booleans()).map(lambda t: (t[0], t[0] + (t[1] if t[2] else -t[1]))
                                          if t[0] + t[1] != t[0] else (t[0], t[0] + 1 / 8))
PAIR_LISTS = [st.lists(_apart(-scale, scale), min_size=1, max_size=16) for scale in (4, 40, 300, REWARD_MAX)]
PAIR_LISTS.append(st.lists(NEAR_EQUAL, min_size=1, max_size=16))


@st.composite
def preference_pairs(draw) -> tuple[torch.Tensor, torch.Tensor]:
    """(r_better, r_worse), each (P,) with P in 1..16, small to huge gaps, never an exact tie.

    Exact ties are the chosen examples' (chosen.py): there the loss is smooth and its gradient is -1/2
    per pair (a formula built from abs or relu gives 0, and a reward model starting at w = 0 never learns).
    """
    dtype, pairs = draw(st.sampled_from(DTYPES)), draw(st.sampled_from(PAIR_LISTS).flatmap(lambda s: s))
    better = torch.tensor([p[0] for p in pairs], dtype=torch.float64)
    worse = torch.tensor([p[1] for p in pairs], dtype=torch.float64)
    if dtype == torch.float32:  # near-equal pairs must stay apart in float32
        worse = torch.where(better.float().double() == worse.float().double(), better + 1 / 8, worse)
    return better.to(dtype), worse.to(dtype)


@functools.lru_cache(maxsize=None)  # strategies are immutable; building them for every example is slow
def ranked_rows(K: int, max_n: int, scale: int) -> st.SearchStrategy[list]:
    """1 to max_n rows (rewards of K responses, all different; a permutation of range(K), often the
    identity or its reverse)."""
    rewards = st.lists(eighths(-scale, scale), min_size=K, max_size=K, unique=True)
    orders = st.one_of(st.permutations(range(K)), st.sampled_from([list(range(K)), list(range(K))[::-1]]))
    return st.lists(st.tuples(rewards, orders), min_size=1, max_size=max_n)


@st.composite
def rankings(draw, max_n: int = 8, min_k: int = 2, max_k: int = 8) -> tuple[torch.Tensor, torch.Tensor]:
    """(rewards (N, K) with distinct entries in each row, ranking (N, K) long: a permutation per row)."""
    dtype, K = draw(st.sampled_from(DTYPES)), draw(st.integers(min_k, max_k))
    rows = draw(ranked_rows(K, max_n, draw(st.sampled_from((10, REWARD_MAX)))))
    return (torch.tensor([r[0] for r in rows], dtype=dtype), torch.tensor([r[1] for r in rows], dtype=torch.long))


def _reference(fn, *args: torch.Tensor) -> tuple[torch.Tensor, list[torch.Tensor]]:
    """The reference's loss and its gradients in float64, for float inputs (others passed through)."""
    inputs = [a.double().requires_grad_() if a.is_floating_point() else a for a in args]
    loss = fn(*inputs)
    grads = torch.autograd.grad(loss, [a for a in inputs if a.requires_grad])
    return loss.detach(), list(grads)


def _all_pairs_mean(rewards: torch.Tensor, ranking: torch.Tensor) -> torch.Tensor:
    """The mean over prompts n and pairs i < j of -log sigmoid(r[n, ranking[n, i]] - r[n, ranking[n, j]])."""
    r = rewards.double()
    terms = [-torch.nn.functional.logsigmoid(r[n, ranking[n, i]] - r[n, ranking[n, j]])
             for n in range(r.shape[0]) for i, j in itertools.combinations(range(r.shape[1]), 2)]
    return torch.stack(terms).mean()


@check("rm_loss.bt_matches_reference",
       "bradley_terry_loss and its gradients match the reference (1-16 pairs, gaps from 1e-3 to 2000, float32/64)",
       functions=("bradley_terry_loss",))
def bt_matches_reference(ctx: Context) -> None:
    def body(case):
        r_better, r_worse = case
        answer = bt(ctx, r_better, r_worse, grad=(0, 1))
        loss, grads = _reference(ctx.ref.bradley_terry_loss, r_better, r_worse)
        answer.expect_close(ctx, answer.value, loss.to(r_better.dtype), "the loss differs from the reference")
        for got, expected, name in zip(expect_grads(answer, BT_NAMES), grads, BT_NAMES):
            answer.expect_close(ctx, got, expected.to(r_better.dtype),
                                f"the gradient with respect to {name} differs from the reference")
    for_all(ctx, preference_pairs(), body, chosen="bradley_terry_loss")


@check("rm_loss.ranking_matches_reference",
       "ranking_loss and its gradient match the reference (N 1-8 prompts, K 2-8 responses, float32/64)",
       functions=("ranking_loss",))
def ranking_matches_reference(ctx: Context) -> None:
    def body(case):
        rewards, ranking = case
        answer = call(ctx, "ranking_loss", rewards, ranking, grad=(0,), names=RANKING_NAMES, shape=())
        loss, (grad,) = _reference(ctx.ref.ranking_loss, rewards, ranking)
        answer.expect_close(ctx, answer.value, loss.to(rewards.dtype), "the loss differs from the reference")
        (got,) = expect_grads(answer, RANKING_NAMES[:1])
        answer.expect_close(ctx, got, grad.to(rewards.dtype),
                            "the gradient with respect to rewards differs from the reference")
    for_all(ctx, rankings(), body, chosen="ranking_loss")


@check("rm_loss.ranking_pairs_mean",
       "ranking_loss is the mean over all ranked pairs (not a sum, not only some pairs)",
       functions=("ranking_loss",))
def ranking_pairs_mean(ctx: Context) -> None:
    def body(case):
        rewards, ranking = case
        answer = call(ctx, "ranking_loss", rewards, ranking, names=RANKING_NAMES, shape=())
        answer.expect_close(ctx, answer.value, _all_pairs_mean(rewards, ranking).to(rewards.dtype),
                            "the loss should be the mean of -log sigmoid(r_a - r_b) over ALL K(K-1)/2 pairs "
                            "(a ranked above b) of every prompt")
        twice = call(ctx, "ranking_loss", torch.cat([rewards, rewards]), torch.cat([ranking, ranking]),
                     names=RANKING_NAMES, shape=())
        twice.expect_close(ctx, twice.value, answer.value,
                           "listing every prompt twice changed the loss (expected: the loss of the prompts "
                           "listed once): average over pairs and prompts, do not sum")
    for_all(ctx, rankings(max_n=4), body)
