"""Hidden checks of kl_estimate and shaped_rewards: against the reference and the estimators' properties."""

from __future__ import annotations

import torch
from hypothesis import strategies as st

from autograder.checks import Context, check
from autograder.checks.hidden.strategies import DTYPES, floats, matrix, ragged
from autograder.checks.public.kl import KL_NAMES, SHAPED_NAMES
from autograder.checks.tools import call, fmt, for_all, tolerances

KINDS = ("k1", "k2", "k3")


@st.composite
def logprob_pairs(draw, max_b: int = 8, max_t: int = 6) -> tuple[torch.Tensor, torch.Tensor, str]:
    """(logp, ref_logp, kind): dense (B, T) log-probs in [-8, 0], float32 or float64."""
    B, T = draw(st.integers(1, max_b)), draw(st.integers(1, max_t))
    dtype = draw(st.sampled_from(DTYPES))
    return (draw(matrix((B, T), -8.0, 0.0, dtype)), draw(matrix((B, T), -8.0, 0.0, dtype)),
            draw(st.sampled_from(KINDS)))


@st.composite
def categoricals(draw, max_b: int = 4, max_v: int = 6) -> tuple[torch.Tensor, torch.Tensor, str]:
    """(logp, ref_logp, kind): row b holds log p(x) and log q(x) for every x of a categorical pair (p_b, q_b)."""
    B, V = draw(st.integers(1, max_b)), draw(st.integers(2, max_v))
    dtype = draw(st.sampled_from(DTYPES))
    logits = [draw(matrix((B, V), -4.0, 4.0, torch.float64)) for _ in range(2)]
    logp, ref_logp = (torch.log_softmax(x, 1).to(dtype) for x in logits)
    return logp, ref_logp, draw(st.sampled_from(KINDS))


@st.composite
def rollouts(draw):
    """(scores (B,), logp, ref_logp, mask (B, T), beta, kind): ragged masks, garbage at padding."""
    inp = draw(ragged(2, lo=-8.0, hi=0.0, max_b=8))
    scores = draw(matrix(inp.mask.shape[:1], -5.0, 5.0, inp.dtype))
    return scores, *inp.tensors, inp.mask, draw(floats(0.0, 1.0)), draw(st.sampled_from(KINDS))


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
                                          kind)
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
