"""Public test of part gae (compute_gae): a small hand-computed example with a ragged mask."""

import torch
from expect import expect_close
from rlhf import compute_gae


def test_known_values():
    # Row 0 has 3 generated tokens, row 1 has 1; padded positions hold garbage (9) on purpose.
    rewards = torch.tensor([[0.0, 0.0, 1.0, 9.0], [2.0, 9.0, 9.0, 9.0]])
    values = torch.tensor([[0.5, 0.25, 0.5, 9.0], [1.0, 9.0, 9.0, 9.0]])
    mask = torch.tensor([[1.0, 1.0, 1.0, 0.0], [1.0, 0.0, 0.0, 0.0]])
    # gamma = lam = 0.5:  delta_t = r_t + gamma V_{t+1} - V_t  (V = 0 after the last token)
    # row 0: delta = [-0.375, 0, 0.5],  A = [-0.375 + 0.25 * 0.125, 0 + 0.25 * 0.5, 0.5]
    # row 1: delta = [1.0],             A = [1.0]
    expected = torch.tensor([[-0.34375, 0.125, 0.5, 0.0], [1.0, 0.0, 0.0, 0.0]])
    inputs = dict(rewards=rewards, values=values, mask=mask, gamma=0.5, lam=0.5)
    advantages, returns = compute_gae(**inputs)
    assert advantages.shape == (2, 4) and returns.shape == (2, 4), \
        f"both outputs are (B, T) = (2, 4), got {tuple(advantages.shape)} and {tuple(returns.shape)}"
    expect_close(advantages, expected, "advantages (computed backwards in time)", inputs, mask)
    expect_close(returns, expected + values, "returns = advantages + values", inputs, mask)
