"""Public tests of part rm_loss (bradley_terry_loss, ranking_loss): small hand-computed examples.

Run them with `python -m pytest tests` in the lab folder. Each test is named after the graded test
it mirrors (here rm_loss.bt_known_values, ...); the hidden tests check much more at submission.
"""

import torch
from expect import expect_close
from rlhf import bradley_terry_loss, ranking_loss


def test_bt_known_values():
    r_better = torch.tensor([1.0, 0.0])
    r_worse = torch.tensor([0.0, 0.0])
    # mean(-log sigmoid(1), -log sigmoid(0)) = mean(0.3132617, 0.6931472)
    loss = bradley_terry_loss(r_better, r_worse)
    assert loss.shape == (), f"the loss should be a scalar (shape ()), got shape {tuple(loss.shape)}"
    expect_close(loss, torch.tensor(0.5032044), "mean of -log sigmoid(r_better - r_worse)",
                 dict(r_better=r_better, r_worse=r_worse))


def test_bt_stable():
    # a gap of -200: -log sigmoid(-200) = 200 + log(1 + e^-200) = 200; a gap of +200: 0
    for gap, expected in ((-200.0, 200.0), (200.0, 0.0)):  # a naive formula gives inf, or nan
        r_better, r_worse = torch.tensor([gap]), torch.tensor([0.0])
        expect_close(bradley_terry_loss(r_better, r_worse), torch.tensor(expected),
                     f"-log sigmoid({gap:g}) is {expected:g}: use a stable log-sigmoid",
                     dict(r_better=r_better, r_worse=r_worse))


def test_ranking_known_values():
    rewards = torch.tensor([[0.0, 1.0, 2.0], [0.0, 1.0, 2.0]])
    ranking = torch.tensor([[2, 1, 0], [0, 1, 2]])  # best first: indices into each row of rewards
    # prompt 0 pairs (better - worse): 1, 2, 1;  prompt 1 pairs: -1, -2, -1
    # mean over the 6 pairs of -log sigmoid(gap) = 0.9178171
    loss = ranking_loss(rewards, ranking)
    assert loss.shape == (), f"the loss should be a scalar (shape ()), got shape {tuple(loss.shape)}"
    expect_close(loss, torch.tensor(0.9178171),
                 "mean over all K(K-1)/2 ranked pairs of every prompt (follow `ranking`)",
                 dict(rewards=rewards, ranking=ranking))
