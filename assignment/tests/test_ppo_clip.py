"""Public tests of part ppo_clip (ppo_policy_loss, ppo_value_loss): hand-computed examples."""

import math

import torch
from expect import expect_close
from rlhf import ppo_policy_loss, ppo_value_loss


def test_policy_known_values():
    # ratios exp(logp - old_logp) = [[1.5, 0.5], [1.1, (padding)]], clip_eps = 0.2
    logp = torch.tensor([[math.log(1.5), math.log(0.5)], [math.log(1.1), 0.0]], requires_grad=True)
    old_logp = torch.zeros(2, 2)
    advantages = torch.tensor([[1.0, -1.0], [1.0, 5.0]])
    mask = torch.tensor([[1.0, 1.0], [1.0, 0.0]])
    inputs = dict(logp=logp, old_logp=old_logp, advantages=advantages, mask=mask, clip_eps=0.2)
    # per token min(ratio A, clip(ratio) A): 1.2 (clipped), -0.8 (clipped), 1.1 (not clipped)
    # loss = -(1.2 - 0.8 + 1.1) / 3 = -0.5   (a token-level mean over the 3 generated tokens)
    loss = ppo_policy_loss(**inputs)
    assert loss.shape == (), f"the loss should be a scalar (shape ()), got shape {tuple(loss.shape)}"
    expect_close(loss, torch.tensor(-0.5), "minus the masked token-level mean", inputs)
    loss.backward()
    # only the unclipped token has a gradient: d/dlogp of -(ratio * A) / 3 = -1.1 / 3
    assert logp.grad is not None, "no gradient reached logp: the loss must stay differentiable in logp"
    expect_close(logp.grad, torch.tensor([[0.0, 0.0], [-1.1 / 3, 0.0]]),
                 "d loss / d logp: the gradient flows only through unclipped tokens", inputs)


def test_value_known_values():
    values = torch.tensor([[1.0, 2.0, 0.0]])
    old_values = torch.tensor([[0.0, 2.0, 0.0]])
    returns = torch.tensor([[1.0, 1.0, 5.0]])
    mask = torch.tensor([[1.0, 1.0, 0.0]])
    inputs = dict(values=values, old_values=old_values, returns=returns, mask=mask, clip_eps=0.2)
    # token 0: v_clip = 0 + clip(1, -0.2, 0.2) = 0.2 -> max((1-1)^2, (0.2-1)^2) = 0.64
    # token 1: v_clip = 2                            -> max(1, 1) = 1;  token 2 is padding
    # loss = 0.5 * (0.64 + 1) / 2 = 0.41
    loss = ppo_value_loss(**inputs)
    assert loss.shape == (), f"the loss should be a scalar (shape ()), got shape {tuple(loss.shape)}"
    expect_close(loss, torch.tensor(0.41), "0.5 * masked mean of the max of both squared errors", inputs)
