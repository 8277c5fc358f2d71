"""Public tests of posttrain.py: the self-check's hand-computed examples, as plain pytest (`python -m pytest tests`)."""

import math

import posttrain
import pytest
import torch

D = torch.float64


def test_group_advantages_known_values():
    rewards = torch.tensor([1.0, 0.0, 0.0, 0.0, 1.0, 1.0, 1.0, 1.0, 2.0, 0.0, 1.0, 1.0], dtype=D)
    centred = torch.tensor([0.75, -0.25, -0.25, -0.25, 0, 0, 0, 0, 1.0, -1.0, 0, 0], dtype=D)
    assert torch.allclose(posttrain.group_advantages(rewards, 4, normalize_std=False, eps=1e-2), centred)
    a, b, c = 0.75 / 0.51, -0.25 / 0.51, 1 / ((2 / 3) ** 0.5 + 0.01)
    expected = torch.tensor([a, b, b, b, 0, 0, 0, 0, c, -c, 0, 0], dtype=D)
    assert torch.allclose(posttrain.group_advantages(rewards, 4, normalize_std=True, eps=1e-2), expected)


def test_group_advantages_rejects_partial_groups():
    with pytest.raises(ValueError):
        posttrain.group_advantages(torch.ones(5), 2)


@pytest.mark.parametrize("aggregation, loss, grad", [
    ("token_mean", -3.2693147 / 5, [[0.0, -1.0 / 5, -2.1 / 5], [1.0 / 5, 1.1 / 5, 0.0]]),
    ("seq_mean_token_mean", (-5.3693147 / 3 + 2.1 / 2) / 2, [[0.0, -1.0 / 6, -2.1 / 6], [1.0 / 4, 1.1 / 4, 0.0]]),
    ("token_sum_norm", -3.2693147 / 6, [[0.0, -1.0 / 6, -2.1 / 6], [1.0 / 6, 1.1 / 6, 0.0]]),
])
def test_grpo_policy_loss_known_values(aggregation, loss, grad):
    ratio = torch.tensor([[1.5, 0.5, 1.0], [1.0, 1.1, 1.0]], dtype=D)
    old_logp = torch.tensor([[-1.0, -1.0, -2.0], [-0.5, -1.0, -30.0]], dtype=D)
    logp = old_logp + ratio.log()
    logp[1, 2] = -3.0
    ref_logp = logp.clone()
    ref_logp[0, 2], ref_logp[1, 2] = -2.0 + math.log(2.0), -0.5
    logp.requires_grad_(True)
    mask = torch.tensor([[1.0, 1.0, 1.0], [1.0, 1.0, 0.0]], dtype=D)
    out = posttrain.grpo_policy_loss(logp, old_logp, ref_logp, torch.tensor([2.0, -1.0], dtype=D), mask,
                                     clip_eps=0.2, beta=0.1, aggregation=aggregation)
    out.backward()
    assert out.item() == pytest.approx(loss, abs=1e-6)
    assert torch.allclose(logp.grad, torch.tensor(grad, dtype=D), atol=1e-6)


def test_grpo_policy_loss_rejects_unknown_aggregation():
    x = torch.full((1, 2), -1.0)
    with pytest.raises(ValueError):
        posttrain.grpo_policy_loss(x, x, x, torch.zeros(1), torch.ones(1, 2), aggregation="mean")


def test_sequence_logprob_sums_generated_tokens():
    token_logp = torch.tensor([[-1.0, -2.0, -3.0], [-0.5, -30.0, -20.0]], dtype=D)
    mask = torch.tensor([[1.0, 1.0, 1.0], [1.0, 0.0, 0.0]], dtype=D)
    assert torch.allclose(posttrain.sequence_logprob(token_logp, mask), torch.tensor([-6.0, -0.5], dtype=D))


PAIRS = [torch.tensor(v, dtype=D) for v in ([-5.0, -3.0, -10.0], [-6.0, -8.0, -2.0], [-4.0, -4.0, -9.0],
                                            [-5.0, -7.0, -5.0])]   # margins h = [0, 2, -4]


def test_dpo_loss_known_values_and_stable():
    loss = sum(math.log1p(math.exp(-v)) for v in (0.0, 1.0, -2.0)) / 3
    assert posttrain.dpo_loss(*PAIRS, beta=0.5).item() == pytest.approx(loss)
    zero, low = torch.tensor([0.0]), torch.tensor([-200.0])
    assert posttrain.dpo_loss(low, zero, zero, low, beta=1.0).item() == pytest.approx(400.0)   # beta * h = -400
    assert posttrain.dpo_loss(zero, low, low, zero, beta=1.0).item() == pytest.approx(0.0)     # beta * h = +400


def test_ipo_loss_known_values():
    assert posttrain.ipo_loss(*PAIRS, beta=0.5).item() == pytest.approx(9.0)
