"""Public tests of part kl (kl_estimate, shaped_rewards): hand-computed examples."""

import torch

from rlhf import kl_estimate, shaped_rewards


def test_estimators_known_values():
    logp = torch.tensor([[0.5, -1.0]])
    ref_logp = torch.zeros(1, 2)  # d = logp - ref_logp = [0.5, -1]
    torch.testing.assert_close(kl_estimate(logp, ref_logp, "k1"), torch.tensor([[0.5, -1.0]]), msg="k1 = d")
    torch.testing.assert_close(kl_estimate(logp, ref_logp, "k2"), torch.tensor([[0.125, 0.5]]), msg="k2 = d^2 / 2")
    # k3 = exp(-d) - 1 + d:  exp(-0.5) - 0.5 = 0.1065307,  e - 2 = 0.7182818
    torch.testing.assert_close(kl_estimate(logp, ref_logp, "k3"), torch.tensor([[0.1065307, 0.7182818]]),
                               msg="k3 = exp(-d) - 1 + d")
    try:
        kl_estimate(logp, ref_logp, "k4")
    except ValueError:
        pass
    else:
        raise AssertionError("kl_estimate(..., kind='k4') should raise ValueError")


def test_shaped_known_values():
    scores = torch.tensor([2.0, -1.0])
    logp = torch.tensor([[0.5, 0.0, 1.0], [0.2, 0.4, 0.6]])
    ref_logp = torch.zeros(2, 3)
    mask = torch.tensor([[1.0, 1.0, 0.0], [1.0, 1.0, 1.0]])
    # -beta * k1 on every generated token, plus the score on the last generated one (beta = 0.1):
    # row 0: [-0.05, 0 + 2, padding];  row 1 used the whole budget: [-0.02, -0.04, -0.06 - 1]
    expected = torch.tensor([[-0.05, 2.0, 0.0], [-0.02, -0.04, -1.06]])
    rewards = shaped_rewards(scores, logp, ref_logp, mask, beta=0.1, kind="k1")
    assert rewards.shape == (2, 3), f"shaped rewards are (B, T), got shape {tuple(rewards.shape)}"
    on = mask > 0  # padded positions are not compared
    torch.testing.assert_close(rewards[on], expected[on],
                               msg="KL penalty on every token, the score on the last generated token")
