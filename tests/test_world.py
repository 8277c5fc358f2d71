"""The given world matches its specification (../shared/seeds): vocabulary, shapes, labeler, RM, critic."""

from __future__ import annotations

import math
import random

import lab_helpers as lh
import pytest
import tinylm as tl
import torch
from hypothesis import given, settings
from hypothesis import strategies as st


def test_vocabulary_order_and_constants():
    assert tl.VOCAB == list("0123456789+=") + ["<bos>", "<eos>", "<pad>"]
    assert (tl.BOS, tl.EOS, tl.PAD, tl.V, tl.MAX_ANSWER) == (12, 13, 14, 15, 4)
    assert lh.KAPPA == 2.0


def test_encode_decode():
    assert tl.encode("37+48=") == [3, 7, 10, 4, 8, 11]
    assert tl.decode([tl.BOS, 8, 5, tl.EOS, 9]) == "85"
    assert tl.decode([1, tl.PAD, 2]) == "12"


def test_make_batch_is_seeded_and_correct():
    p1, a1 = tl.make_batch(20, random.Random(3))
    p2, a2 = tl.make_batch(20, random.Random(3))
    assert (p1, a1) == (p2, a2)
    for p, a in zip(p1, a1):
        x, y = p[:-1].split("+")
        assert int(x) + int(y) == int(a) and p.endswith("=")
    assert tl.reward("85", "85") == 1.0 and tl.reward("86", "85") == 0.0


@pytest.fixture(scope="module")
def sft():
    return tl.load_sft()


@pytest.fixture(scope="module")
def rollout(sft):
    torch.manual_seed(0)
    prompts, _ = tl.make_batch(64, random.Random(0))
    return tl.sample(sft, prompts)


def test_sample_shapes_and_padding(rollout):
    ids, L, mask = rollout["ids"], rollout["prompt_len"], rollout["mask"]
    assert ids.shape == (64, L + tl.MAX_ANSWER) and mask.shape == (64, tl.MAX_ANSWER)
    resp = ids[:, L:]
    for row, m in zip(resp.tolist(), mask.tolist()):
        n = int(sum(m))
        assert m == [1.0] * n + [0.0] * (tl.MAX_ANSWER - n)  # a prefix
        assert tl.BOS not in row[:n] and tl.PAD not in row[:n]  # never sampled
        assert all(t == tl.PAD for t in row[n:])
        if n < tl.MAX_ANSWER:
            assert row[n - 1] == tl.EOS


def test_sequence_logprobs_use_the_sampling_distribution(sft, rollout):
    logp = tl.sequence_logprobs(sft, rollout)
    assert logp.shape == rollout["mask"].shape and torch.isfinite(logp).all()
    # the distribution scored excludes <bos>/<pad>: it sums to one over the other tokens
    logits = tl.sampling_logits(sft(rollout["ids"][:, :-1]))
    probs = torch.softmax(logits, -1)
    assert torch.allclose(probs.sum(-1), torch.ones(()), atol=1e-5)
    assert (probs[..., [tl.BOS, tl.PAD]] == 0).all()
    # gradients are finite even though padded targets have probability 0
    (logp * rollout["mask"]).sum().backward()
    assert all(torch.isfinite(p.grad).all() for p in sft.parameters() if p.grad is not None)
    sft.zero_grad()


def spec_gold(row: list[int]) -> float:
    """The specification's gold score, written as a loop (the world's version is vectorised)."""
    if tl.EOS not in row:
        return -1.0
    digits = row[: row.index(tl.EOS)]
    if not digits or any(t > 9 for t in digits):
        return -1.0
    return 1.0 if digits[-1] % 2 == 0 else 0.0


def as_out(rows: list[list[int]]) -> dict:
    ids = torch.tensor([[tl.BOS, 1, 10, 2, 11] + r for r in rows])
    return {"ids": ids, "prompt_len": 5, "mask": torch.ones(len(rows), len(rows[0]))}


@pytest.mark.parametrize("row, gold", [
    ([8, 4, tl.EOS, tl.PAD], 1.0),     # well formed, last digit even
    ([8, 5, tl.EOS, tl.PAD], 0.0),     # well formed, last digit odd
    ([0, tl.EOS, tl.PAD, tl.PAD], 1.0),
    ([2, 4, 6, 8], -1.0),              # no <eos> within the budget
    ([tl.EOS, tl.PAD, tl.PAD, tl.PAD], -1.0),  # no digits
    ([1, 10, 2, tl.EOS], -1.0),        # stray "+"
    ([11, 2, tl.EOS, tl.PAD], -1.0),   # stray "="
    ([2, tl.EOS, 10, 10], 1.0),        # junk after <eos> does not count
])
def test_gold_score_cases(row, gold):
    assert lh.gold_score(as_out([row])).tolist() == [gold]


@settings(max_examples=200, derandomize=True, database=None)
@given(st.lists(st.lists(st.integers(0, tl.V - 1), min_size=4, max_size=4), min_size=1, max_size=8))
def test_gold_score_matches_specification(rows):
    assert lh.gold_score(as_out(rows)).tolist() == [spec_gold(r) for r in rows]


def test_labeler_follows_bradley_terry_with_kappa_2():
    gen = random.Random(0)
    n, above = 20000, 0
    for _ in range(n):
        ranking = lh.labeler_rank([1.0, 0.0], gen)
        above += ranking[0] == 0
    expected = 1 / (1 + math.exp(-lh.KAPPA))  # sigmoid(KAPPA * (1 - 0)) = 0.881
    assert abs(above / n - expected) < 0.01


def test_collect_rankings_shapes_and_determinism(sft):
    a = lh.collect_rankings(sft, 8, K=4, seed=5)
    b = lh.collect_rankings(sft, 8, K=4, seed=5)
    assert len(a) == 8
    for x, y in zip(a, b):
        assert sorted(x["ranking"]) == [0, 1, 2, 3] and x["ranking"] == y["ranking"]
        assert x["out"]["ids"].shape[0] == 4 and x["gold"].shape == (4,)
        assert torch.equal(x["gold"], lh.gold_score(x["out"]))


def test_digit_counts_and_digit_rm():
    out = as_out([[2, 2, tl.EOS, tl.PAD], [1, 3, 5, 7]])
    out["mask"] = torch.tensor([[1.0, 1.0, 1.0, 0.0], [1.0, 1.0, 1.0, 1.0]])
    counts = lh.digit_counts(out)
    assert counts.shape == (2, 10)
    assert counts[0].tolist() == [0, 0, 2, 0, 0, 0, 0, 0, 0, 0]
    assert counts[1].tolist() == [0, 1, 0, 1, 0, 1, 0, 1, 0, 0]
    rm = lh.DigitRM()
    with torch.no_grad():
        rm.w.copy_(torch.arange(10.0))
    assert rm(counts).tolist() == [4.0, 16.0]


def test_value_model_is_aligned_and_starts_at_zero(sft, rollout):
    critic = lh.ValueModel(sft)
    v = critic(rollout)
    assert v.shape == rollout["mask"].shape and (v == 0).all()
    assert torch.allclose(lh.hidden_states(sft, rollout["ids"]), sft.hidden(rollout["ids"]))


def test_masked_mean_and_whiten():
    x = torch.tensor([[1.0, 3.0, 100.0]])
    mask = torch.tensor([[1.0, 1.0, 0.0]])
    assert lh.masked_mean(x, mask).item() == 2.0
    w = lh.masked_whiten(x, mask)
    assert torch.allclose(w, torch.tensor([[-1.0, 1.0, 0.0]]), atol=1e-4)
    assert lh.masked_mean(x, torch.zeros_like(mask)).item() == 0.0


def test_sft_loss_is_a_finite_scalar(sft):
    loss = lh.sft_loss(sft, 8, random.Random(0))
    assert loss.dim() == 0 and torch.isfinite(loss) and loss.requires_grad


def test_sft_checkpoint_is_partly_competent(sft):
    acc = tl.accuracy(sft, n=200)
    assert 0.3 < acc < 0.9  # room for RL to improve, competent enough to start from
