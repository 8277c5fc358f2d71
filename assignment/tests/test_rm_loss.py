"""Public tests of part rm_loss (bradley_terry_loss, ranking_loss): small hand-computed examples.

Run them with `python -m pytest tests` in the lab folder. Each test is named after the graded test
it mirrors (here rm_loss.bt_known_values, ...); the hidden tests check much more at submission.
"""

import torch

from rlhf import bradley_terry_loss, ranking_loss


def test_bt_known_values():
    r_better = torch.tensor([1.0, 0.0])
    r_worse = torch.tensor([0.0, 0.0])
    # mean(-log sigmoid(1), -log sigmoid(0)) = mean(0.3132617, 0.6931472)
    loss = bradley_terry_loss(r_better, r_worse)
    assert loss.shape == (), f"the loss should be a scalar (shape ()), got shape {tuple(loss.shape)}"
    torch.testing.assert_close(loss, torch.tensor(0.5032044), msg="mean of -log sigmoid(r_better - r_worse)")


def test_bt_stable():
    # a gap of -200: -log sigmoid(-200) = 200 + log(1 + e^-200) = 200 (a naive log(sigmoid) gives inf)
    loss = bradley_terry_loss(torch.tensor([-200.0]), torch.tensor([0.0]))
    assert torch.isfinite(loss), f"loss for a gap of -200 is {loss.item()}: use a stable log-sigmoid"
    torch.testing.assert_close(loss, torch.tensor(200.0), msg="-log sigmoid(-200) is 200")
    # a gap of +200: -log sigmoid(200) = 0 (a naive formula can give nan)
    loss = bradley_terry_loss(torch.tensor([200.0]), torch.tensor([0.0]))
    torch.testing.assert_close(loss, torch.tensor(0.0), msg="-log sigmoid(200) is 0")


def test_ranking_known_values():
    rewards = torch.tensor([[0.0, 1.0, 2.0], [0.0, 1.0, 2.0]])
    ranking = torch.tensor([[2, 1, 0], [0, 1, 2]])  # best first: indices into each row of rewards
    # prompt 0 pairs (better - worse): 1, 2, 1;  prompt 1 pairs: -1, -2, -1
    # mean over the 6 pairs of -log sigmoid(gap) = 0.9178171
    loss = ranking_loss(rewards, ranking)
    assert loss.shape == (), f"the loss should be a scalar (shape ()), got shape {tuple(loss.shape)}"
    torch.testing.assert_close(loss, torch.tensor(0.9178171),
                               msg="mean over all K(K-1)/2 ranked pairs of every prompt (follow `ranking`)")
