"""Hidden checks of kl_estimate and shaped_rewards: against the reference and the estimators' properties."""

from __future__ import annotations

import functools

import torch
from hypothesis import strategies as st

from autograder.checks import Context, check
from autograder.checks.hidden.strategies import DTYPES, floats
from autograder.checks.public.kl import KL_NAMES, SHAPED_NAMES
from autograder.checks.tools import call, fmt, for_all, tolerances

KINDS = ("k1", "k2", "k3")


def eighths(lo: int, hi: int) -> st.SearchStrategy[float]:
    """Multiples of 1/8 in [lo, hi], exact in float32 (they shrink faster and read better than floats)."""
    return st.integers(8 * lo, 8 * hi).map(lambda k: k / 8)


# element strategies, built once (building strategies for every example is slow)
LOGPROBS, SCORES, LOGPROB_FLOATS = eighths(-8, 0), eighths(-4, 4), floats(-8.0, 0.0, width=32)
LOGITS = SCORES


@functools.lru_cache(maxsize=None)  # strategies are immutable; building them for every example is slow
def row_pairs(T: int, elements: st.SearchStrategy[float], max_b: int) -> st.SearchStrategy[list]:
    """1 to max_b rows, each a pair of T-long lists (rows are list items so that shrinking drops whole rows)."""
    row = st.lists(elements, min_size=T, max_size=T)
    return st.lists(st.tuples(row, row), min_size=1, max_size=max_b)


@st.composite
def logprob_pairs(draw, max_b: int = 8, max_t: int = 6) -> tuple[torch.Tensor, torch.Tensor, str]:
    """(logp, ref_logp, kind): dense (B, T) log-probs in [-8, 0], float32 or float64."""
    kind, dtype, T = draw(st.sampled_from(KINDS)), draw(st.sampled_from(DTYPES)), draw(st.integers(1, max_t))
    rows = draw(row_pairs(T, LOGPROB_FLOATS, max_b))
    return (torch.tensor([r[0] for r in rows], dtype=dtype), torch.tensor([r[1] for r in rows], dtype=dtype),
            kind)


@st.composite
def categoricals(draw, max_b: int = 4, max_v: int = 6) -> tuple[torch.Tensor, torch.Tensor, str]:
    """(logp, ref_logp, kind): row b holds log p(x) and log q(x) for every x of a categorical pair (p_b, q_b)."""
    kind, dtype, V = draw(st.sampled_from(KINDS)), draw(st.sampled_from(DTYPES)), draw(st.integers(2, max_v))
    rows = draw(row_pairs(V, LOGITS, max_b))
    logits = [torch.tensor([r[i] for r in rows], dtype=torch.float64) for i in (0, 1)]
    logp, ref_logp = (torch.log_softmax(x, 1).to(dtype) for x in logits)
    return logp, ref_logp, kind




@st.composite
def generated_row(draw, T: int) -> tuple[int, list[float], list[float], float]:
    """(n, logp[:n], ref_logp[:n], score): a response of n generated tokens, log-probs in [-8, 0]."""
    n = draw(st.integers(1, T))
    return n, [draw(LOGPROBS) for _ in range(n)], [draw(LOGPROBS) for _ in range(n)], draw(SCORES)


@st.composite
def rollouts(draw, max_b: int = 8, max_t: int = 6, garbage: float = 1e3):
    """(scores (B,), logp, ref_logp, mask (B, T), beta, kind): ragged prefix masks, scores in [-4, 4] and
    log-probs in [-8, 0] on generated tokens, garbage in [-garbage, garbage] on padding (from one seed)."""
    kind, dtype, beta = draw(st.sampled_from(KINDS)), draw(st.sampled_from(DTYPES)), draw(floats(0.0, 1.0))
    T = draw(st.integers(1, max_t))
    rows = draw(st.lists(generated_row(T), min_size=1, max_size=max_b))
    junk = torch.Generator().manual_seed(draw(st.integers(0, 2 ** 16)))
    lengths = torch.tensor([r[0] for r in rows])
    mask = (torch.arange(T)[None, :] < lengths[:, None]).to(dtype)
    logps = []
    for i in (1, 2):
        x = ((torch.rand(len(rows), T, generator=junk, dtype=torch.float64) * 2 - 1) * garbage).to(dtype)
        x[mask.bool()] = torch.tensor([v for r in rows for v in r[i]], dtype=dtype)
        logps.append(x)
    scores = torch.tensor([r[3] for r in rows], dtype=dtype)
    return scores, *logps, mask, beta, kind


@check("kl.estimate_matches_reference", "kl_estimate matches the reference (k1, k2, k3; float32/64)",
       functions=("kl_estimate",))
def estimate_matches_reference(ctx: Context) -> None:
    def body(case):
        logp, ref_logp, kind = case
        answer = call(ctx, "kl_estimate", logp, ref_logp, kind=kind, names=KL_NAMES, shape=tuple(logp.shape))
        expected = ctx.ref.kl_estimate(logp.double(), ref_logp.double(), kind)
        answer.expect_close(ctx, answer.value, expected.to(logp.dtype), f"kind={kind!r} differs from the reference")
    for_all(ctx, logprob_pairs(), body)


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
       "shaped_rewards matches the reference (ragged masks, beta in [0, 1], k1/k2/k3, float32/64)",
       functions=("shaped_rewards",))
def shaped_matches_reference(ctx: Context) -> None:
    def body(case):
        scores, logp, ref_logp, mask, beta, kind = case
        answer = call(ctx, "shaped_rewards", scores, logp, ref_logp, mask, beta, kind, names=SHAPED_NAMES,
                      shape=tuple(mask.shape))
        expected = ctx.ref.shaped_rewards(scores.double(), logp.double(), ref_logp.double(), mask.double(), beta,
                                          kind) + 0.0  # + 0.0 turns -0.0 into 0.0 for the report
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
    for_all(ctx, rollouts(), body)
