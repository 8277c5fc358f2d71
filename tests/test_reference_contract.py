"""The reference satisfies the student contract on random inputs: ragged masks, garbage at padded
positions, gamma < 1, float32 and float64. Written independently of the grader's checks."""

from __future__ import annotations

import math

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

SETTINGS = settings(max_examples=60, derandomize=True, database=None, deadline=None)


@st.composite
def ragged(draw, n: int):
    """(tensors, mask, clean): n (B, T) tensors with garbage at padding, and the same with zeros there."""
    B, T = draw(st.integers(1, 6)), draw(st.integers(1, 5))
    dtype = draw(st.sampled_from([torch.float32, torch.float64]))
    g = torch.Generator().manual_seed(draw(st.integers(0, 2**31)))
    lengths = torch.randint(1, T + 1, (B,), generator=g)
    mask = (torch.arange(T)[None] < lengths[:, None]).to(dtype)
    clean = [torch.randn(B, T, generator=g, dtype=dtype) * mask for _ in range(n)]
    # garbage at padding: large, yet small enough that exp() of a log-prob difference stays finite
    dirty = [torch.where(mask.bool(), x, torch.randn(B, T, generator=g, dtype=dtype) * 10) for x in clean]
    return dirty, mask, clean


def same_on_mask(a, b, mask, tol=1e-5):
    keep = mask.bool()
    return torch.allclose(torch.where(keep, a, 0.0), torch.where(keep, b, 0.0), atol=tol, rtol=tol)


def loop_gae(r, v, mask, gamma, lam):
    """GAE written as plain Python loops over each row's generated tokens."""
    adv = torch.zeros_like(r, dtype=torch.float64)
    for b in range(r.shape[0]):
        n = int(mask[b].sum())
        nxt_a = 0.0
        for t in reversed(range(n)):
            nxt_v = float(v[b, t + 1]) if t + 1 < n else 0.0
            delta = float(r[b, t]) + gamma * nxt_v - float(v[b, t])
            nxt_a = delta + gamma * lam * nxt_a
            adv[b, t] = nxt_a
    return adv


@SETTINGS
@given(ragged(2), st.floats(0.5, 1.0), st.floats(0.0, 1.0))
def test_gae(ref, case, gamma, lam):
    (r, v), mask, (rc, vc) = case
    adv, ret = ref.compute_gae(r, v, mask, gamma, lam)
    assert adv.dtype == r.dtype and adv.shape == r.shape and ret.shape == r.shape
    assert same_on_mask(adv.double(), loop_gae(rc, vc, mask, gamma, lam), mask.double(), 1e-4)
    assert same_on_mask(ret, adv + v, mask)


@SETTINGS
@given(ragged(3), st.sampled_from([0.1, 0.2]))
def test_ppo_policy_loss(ref, case, eps):
    (logp, old, adv), mask, (logp_c, old_c, adv_c) = case
    logp = logp.clone().requires_grad_(True)
    loss = ref.ppo_policy_loss(logp, old, adv, mask, eps)
    assert loss.dim() == 0 and loss.dtype == logp.dtype
    ratio = torch.exp(logp_c - old_c)
    per_token = torch.minimum(ratio * adv_c, ratio.clamp(1 - eps, 1 + eps) * adv_c)
    assert torch.allclose(loss.detach(), -(per_token * mask).sum() / mask.sum(), atol=1e-5, rtol=1e-5)
    loss.backward()
    assert (logp.grad * (1 - mask) == 0).all() and torch.isfinite(logp.grad).all()


@SETTINGS
@given(ragged(3))
def test_ppo_value_loss(ref, case):
    (values, old, returns), mask, (vc, oc, rc) = case
    values = values.clone().requires_grad_(True)
    loss = ref.ppo_value_loss(values, old, returns, mask, 0.2)
    clipped = oc + (vc - oc).clamp(-0.2, 0.2)
    expected = 0.5 * (torch.maximum((vc - rc) ** 2, (clipped - rc) ** 2) * mask).sum() / mask.sum()
    assert loss.dtype == values.dtype and torch.allclose(loss.detach(), expected, atol=1e-5, rtol=1e-5)
    loss.backward()
    assert torch.isfinite(values.grad).all()


@SETTINGS
@given(ragged(2), st.sampled_from(["k1", "k2", "k3"]), st.floats(0.0, 1.0))
def test_kl_and_shaped_rewards(ref, case, kind, beta):
    (logp, ref_logp), mask, (lc, rc) = case
    d = lc - rc
    expected = {"k1": d, "k2": d ** 2 / 2, "k3": torch.exp(-d) - 1 + d}[kind]
    assert same_on_mask(ref.kl_estimate(lc, rc, kind), expected, mask)
    scores = torch.randn(mask.shape[0], dtype=mask.dtype)
    shaped = ref.shaped_rewards(scores, logp, ref_logp, mask, beta, kind)
    want = -beta * expected * mask
    last = mask.sum(1).long() - 1
    want[torch.arange(len(last)), last] += scores
    assert shaped.dtype == mask.dtype and same_on_mask(shaped, want, mask)


@pytest.mark.parametrize("kind", ["k4", "K1", "", "k3 "])  # kind is case-sensitive and exact
def test_kl_unknown_kind_raises(ref, kind):
    with pytest.raises(ValueError):
        ref.kl_estimate(torch.zeros(1, 1), torch.zeros(1, 1), kind)


def test_garbage_of_the_declared_size_at_padding_changes_nothing(ref):
    """Padding may hold finite garbage up to +-1000 (log-probs: anywhere in [-40, 0]): no output at a
    generated position, and no loss, may change."""
    mask = torch.tensor([[1.0, 1.0, 0.0], [1.0, 0.0, 0.0]])
    pad = ~mask.bool()
    x = torch.tensor([[0.5, -1.0, 0.0], [2.0, 0.0, 0.0]])
    lp = torch.tensor([[-1.0, -2.0, -3.0], [-0.5, -3.0, -3.0]])
    big, low = torch.where(pad, 1000.0, x), torch.where(pad, -40.0, lp)
    same = lambda a, b: torch.allclose(torch.where(mask.bool(), a, 0.0), torch.where(mask.bool(), b, 0.0))  # noqa: E731
    assert all(same(a, b) for a, b in zip(ref.compute_gae(x, x, mask, 0.9, 0.8),
                                          ref.compute_gae(big, torch.where(pad, -1000.0, x), mask, 0.9, 0.8)))
    old = lp - 0.1
    assert torch.allclose(ref.ppo_policy_loss(lp, old, x, mask),
                          ref.ppo_policy_loss(low, torch.where(pad, 0.0, old), big, mask))
    assert torch.allclose(ref.ppo_value_loss(x, x * 0.5, x, mask),
                          ref.ppo_value_loss(big, torch.where(pad, -1000.0, x * 0.5), big, mask))
    scores = torch.tensor([1.0, -2.0])
    assert same(ref.shaped_rewards(scores, lp, lp - 1, mask, 0.5, "k3"),
                ref.shaped_rewards(scores, low, torch.where(pad, 0.0, lp - 1), mask, 0.5, "k3"))


@SETTINGS
@given(st.integers(1, 5), st.integers(2, 5), st.integers(0, 2**31), st.sampled_from([torch.float32, torch.float64]))
def test_ranking_loss_is_the_mean_over_all_pairs(ref, N, K, seed, dtype):
    g = torch.Generator().manual_seed(seed)
    rewards = torch.randn(N, K, generator=g, dtype=dtype) * 3
    ranking = torch.stack([torch.randperm(K, generator=g) for _ in range(N)])
    pairs = [-math.log(1 / (1 + math.exp(-(rewards[n, ranking[n, i]] - rewards[n, ranking[n, j]]).item())))
             for n in range(N) for i in range(K) for j in range(i + 1, K)]
    loss = ref.ranking_loss(rewards, ranking)
    assert loss.dtype == dtype and abs(loss.item() - sum(pairs) / len(pairs)) < 1e-4


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_bradley_terry_is_stable(ref, dtype):
    gap = torch.tensor([200.0, -200.0, 0.0], dtype=dtype, requires_grad=True)
    loss = ref.bradley_terry_loss(gap, torch.zeros(3, dtype=dtype))
    loss.backward()
    assert torch.isfinite(loss) and torch.isfinite(gap.grad).all()
    assert abs(loss.item() - (0 + 200 + math.log(2)) / 3) < 1e-3
