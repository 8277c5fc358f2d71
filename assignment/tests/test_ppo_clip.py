"""Public tests of part ppo_clip (ppo_policy_loss, ppo_value_loss): hand-computed examples."""

import math

import torch

from rlhf import ppo_policy_loss, ppo_value_loss


def test_policy_known_values():
    # ratios exp(logp - old_logp) = [[1.5, 0.5], [1.1, (padding)]], clip_eps = 0.2
    logp = torch.tensor([[math.log(1.5), math.log(0.5)], [math.log(1.1), 0.0]], requires_grad=True)
    old_logp = torch.zeros(2, 2)
    advantages = torch.tensor([[1.0, -1.0], [1.0, 5.0]])
    mask = torch.tensor([[1.0, 1.0], [1.0, 0.0]])
    # per token min(ratio A, clip(ratio) A): 1.2 (clipped), -0.8 (clipped), 1.1 (not clipped)
    # loss = -(1.2 - 0.8 + 1.1) / 3 = -0.5   (a token-level mean over the 3 generated tokens)
    loss = ppo_policy_loss(logp, old_logp, advantages, mask, clip_eps=0.2)
    assert loss.shape == (), f"the loss should be a scalar (shape ()), got shape {tuple(loss.shape)}"
    torch.testing.assert_close(loss, torch.tensor(-0.5), msg="minus the masked token-level mean")
    loss.backward()
    # only the unclipped token has a gradient: d/dlogp of -(ratio * A) / 3 = -1.1 / 3
    expected_grad = torch.tensor([[0.0, 0.0], [-1.1 / 3, 0.0]])
    torch.testing.assert_close(logp.grad, expected_grad, msg="gradient flows only through unclipped tokens")


def test_value_known_values():
    values = torch.tensor([[1.0, 2.0, 0.0]])
    old_values = torch.tensor([[0.0, 2.0, 0.0]])
    returns = torch.tensor([[1.0, 1.0, 5.0]])
    mask = torch.tensor([[1.0, 1.0, 0.0]])
    # token 0: v_clip = 0 + clip(1, -0.2, 0.2) = 0.2 -> max((1-1)^2, (0.2-1)^2) = 0.64
    # token 1: v_clip = 2                            -> max(1, 1) = 1;  token 2 is padding
    # loss = 0.5 * (0.64 + 1) / 2 = 0.41
    loss = ppo_value_loss(values, old_values, returns, mask, clip_eps=0.2)
    assert loss.shape == (), f"the loss should be a scalar (shape ()), got shape {tuple(loss.shape)}"
    torch.testing.assert_close(loss, torch.tensor(0.41), msg="0.5 * masked mean of the max of both squared errors")
