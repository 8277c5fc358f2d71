"""Hidden checks of kl_estimate and shaped_rewards: against the reference and the estimators' properties.

Valid domain (solutions/rlhf.py): log-probs in [-40, 0] at every position (so d = logp - ref_logp in
[-40, 40]: near-equal log-probs, |d| of 10, 20 and 40 drawn), kind exactly "k1", "k2" or "k3" (every
other kind raises ValueError: the differential checks' chosen examples try chosen.REJECTED), float32
and float64, (B, T) with T = 1, single rows and rows of 24-48 tokens. shaped_rewards also: scores in
[-50, 50], beta in [0, 1] (both bounds drawn), prefix masks with at least one generated token per row
(ragged and full rows), log-probs at padded positions garbage within [-40, 0].
"""

from __future__ import annotations

import functools

import torch
from hypothesis import strategies as st

from autograder.checks import Context, check, tools
from autograder.checks.examples import for_all
from autograder.checks.strategies import DTYPES, LOG_RATIOS, bounded, logprob_pair, ragged_ranges
from autograder.checks.tools import call, fmt, tolerances

from ...checks.public.kl import KL_NAMES, SHAPED_NAMES, expect_unknown_kind_rejected

KINDS = ("k1", "k2", "k3")
WHERE = (0.0, 1.0)  # where a pair of log-probs sits in [-40, 0] (strategies.logprob_pair)


def eighths(lo: int, hi: int) -> st.SearchStrategy[float]:
    """Multiples of 1/8 in [lo, hi], exact in float32 (they shrink faster and read better than floats)."""
    return st.integers(8 * lo, 8 * hi).map(lambda k: k / 8)


LOGITS = eighths(-19, 19)  # log_softmax of 2-6 of them stays within [-40, 0]


@functools.lru_cache(maxsize=None)  # strategies are immutable; building them for every example is slow
def row_pairs(T: int, elements: st.SearchStrategy[float], max_b: int) -> st.SearchStrategy[list]:
    """1 to max_b rows, each a pair of T-long lists (rows are list items so that shrinking drops whole rows)."""
    row = st.lists(elements, min_size=T, max_size=T)
    return st.lists(st.tuples(row, row), min_size=1, max_size=max_b)


@st.composite
def logprob_pairs(draw) -> tuple[torch.Tensor, torch.Tensor, str]:
    """(logp, ref_logp, kind): dense (B, T) log-probs in [-40, 0] (no mask: every position counts)."""
    kind = draw(st.sampled_from(KINDS))
    inp = draw(ragged_ranges((WHERE, LOG_RATIOS), garbage=(1.0, 40.0)))
    logp, ref_logp = logprob_pair(*inp.tensors)
    return logp, ref_logp, kind


@st.composite
def categoricals(draw, max_b: int = 4, max_v: int = 6) -> tuple[torch.Tensor, torch.Tensor, str]:
    """(logp, ref_logp, kind): row b holds log p(x) and log q(x) for every x of a categorical pair (p_b, q_b)."""
    kind, dtype, V = draw(st.sampled_from(KINDS)), draw(st.sampled_from(DTYPES)), draw(st.integers(2, max_v))
    rows = draw(row_pairs(V, LOGITS, max_b))
    logits = [torch.tensor([r[i] for r in rows], dtype=torch.float64) for i in (0, 1)]
    logp, ref_logp = (torch.log_softmax(x, 1).to(dtype) for x in logits)
    return logp, ref_logp, kind


@st.composite
def rollouts(draw):
    """(scores (B,), logp, ref_logp, mask (B, T), beta, kind): ragged prefix masks, scores in [-50, 50],
    log-probs in [-40, 0] everywhere (garbage ones at padded positions)."""
    kind, beta = draw(st.sampled_from(KINDS)), draw(bounded(0.0, 1.0))
    inp = draw(ragged_ranges((WHERE, LOG_RATIOS), garbage=(1.0, 40.0)))
    logp, ref_logp = logprob_pair(*inp.tensors)
    B = len(inp.mask)
    scores = torch.tensor(draw(st.lists(bounded(-50.0, 50.0), min_size=B, max_size=B)), dtype=inp.dtype)
    return scores, logp, ref_logp, inp.mask, beta, kind


def expect_rejected(ctx: Context, function: str, args: tuple, kwargs: dict, names: tuple[str, ...]) -> None:
    """The reference rejected this call (ValueError): the submission must too (an unknown kind, as in public.kl)."""
    if tools.RECORDED is not None:  # as tools.call records the calls it makes (validity/coverage.py)
        tools.RECORDED.append((function, args, kwargs))
    expect_unknown_kind_rejected(ctx, function, args, kwargs, names)


@check("kl.estimate_matches_reference",
       "kl_estimate matches the reference (k1, k2, k3; |logp - ref_logp| up to 40; float32/64); other kinds "
       "(other libraries' names, case variants, '') raise ValueError",
       functions=("kl_estimate",))
def estimate_matches_reference(ctx: Context) -> None:
    def body(case):
        logp, ref_logp, kind = case
        try:
            expected = ctx.ref.kl_estimate(logp.double(), ref_logp.double(), kind)
        except ValueError:
            return expect_rejected(ctx, "kl_estimate", (logp, ref_logp), {"kind": kind}, KL_NAMES)
        answer = call(ctx, "kl_estimate", logp, ref_logp, kind=kind, names=KL_NAMES, shape=tuple(logp.shape))
        answer.expect_close(ctx, answer.value, expected.to(logp.dtype), f"kind={kind!r} differs from the reference")
    for_all(ctx, logprob_pairs(), body, chosen="kl_estimate")


@check("kl.unbiased_and_nonnegative",
       "k1 and k3 average to KL(p || q) exactly over a categorical p; k2 and k3 are never negative",
       functions=("kl_estimate",))
def unbiased_and_nonnegative(ctx: Context) -> None:
    def body(case):
        logp, ref_logp, kind = case
        answer = call(ctx, "kl_estimate", logp, ref_logp, kind=kind, names=KL_NAMES, shape=tuple(logp.shape))
        k = answer.value.double()
        if kind in ("k2", "k3"):
            _, atol = tolerances(ctx, logp.dtype)
            if not (k >= -atol).all():
                raise answer.fail(f"kind={kind!r} gave a negative estimate: {kind} is >= 0 for every d",
                                  expected="every entry >= 0", got=fmt(k))
        if kind in ("k1", "k3"):
            p = logp.double().exp()
            kl = (p * (logp.double() - ref_logp.double())).sum(1)
            answer.expect_close(ctx, (p * k).sum(1), kl.to(logp.dtype),
                                f"kind={kind!r} is biased: row b holds log p(x), log q(x) for every x of a "
                                f"categorical pair, so sum_x p(x) * {kind}(x) must equal KL(p || q) "
                                "(shown: KL per row, and your estimator averaged over p)")
    for_all(ctx, categoricals(), body)


@check("kl.shaped_matches_reference",
       "shaped_rewards matches the reference (ragged and full rows, T = 1 to 48, scores up to +-50, beta in [0, 1], "
       "k1/k2/k3, float32/64); other kinds raise ValueError",
       functions=("shaped_rewards",))
def shaped_matches_reference(ctx: Context) -> None:
    def body(case):
        scores, logp, ref_logp, mask, beta, kind = case
        try:
            expected = ctx.ref.shaped_rewards(scores.double(), logp.double(), ref_logp.double(), mask.double(), beta,
                                              kind) + 0.0  # + 0.0 turns -0.0 into 0.0 for the report
        except ValueError:
            return expect_rejected(ctx, "shaped_rewards", tuple(case), {}, SHAPED_NAMES)
        answer = call(ctx, "shaped_rewards", scores, logp, ref_logp, mask, beta, kind, names=SHAPED_NAMES,
                      shape=tuple(mask.shape))
        rtol, atol = tolerances(ctx, scores.dtype)
        wrong = ~torch.isclose(answer.value.double(), expected, rtol=rtol, atol=atol) & mask.bool()
        last = torch.zeros_like(wrong)
        last[torch.arange(mask.shape[0]), mask.sum(1).long() - 1] = True
        if (wrong & ~last).any():
            message = ("the rewards of generated tokens before the last differ from the reference "
                       "(expected: -beta * kl_estimate(logp, ref_logp, kind) there)")
        else:
            message = ("the reward of the last generated token differs from the reference "
                       "(expected: its KL penalty plus the row's score)")
        answer.expect_close(ctx, answer.value, expected.to(scores.dtype), message, mask)
    for_all(ctx, rollouts(), body, chosen="shaped_rewards")
