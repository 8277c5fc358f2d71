"""Public tests of part kl (kl_estimate, shaped_rewards): hand-computed examples."""

import pytest
import torch
from expect import expect_close
from rlhf import kl_estimate, shaped_rewards


def test_estimators_known_values():
    logp = torch.tensor([[0.5, -1.0]])
    ref_logp = torch.zeros(1, 2)  # d = logp - ref_logp = [0.5, -1]
    # k3 = exp(-d) - 1 + d:  exp(-0.5) - 0.5 = 0.1065307,  e - 2 = 0.7182818
    expected = {"k1": [[0.5, -1.0]], "k2": [[0.125, 0.5]], "k3": [[0.1065307, 0.7182818]]}
    formulas = {"k1": "k1 = d", "k2": "k2 = d^2 / 2", "k3": "k3 = exp(-d) - 1 + d"}
    for kind, values in expected.items():
        expect_close(kl_estimate(logp, ref_logp, kind), torch.tensor(values), formulas[kind],
                     dict(logp=logp, ref_logp=ref_logp, kind=kind))
    for unknown in ("k4", "K1"):  # kind is case-sensitive
        with pytest.raises(ValueError):
            kl_estimate(logp, ref_logp, unknown)  # expected: ValueError for an unknown kind


def test_shaped_known_values():
    scores = torch.tensor([2.0, -1.0])
    logp = torch.tensor([[0.5, 0.0, 1.0], [0.2, 0.4, 0.6]])
    ref_logp = torch.zeros(2, 3)
    mask = torch.tensor([[1.0, 1.0, 0.0], [1.0, 1.0, 1.0]])
    # -beta * k1 on every generated token, plus the score on the last generated one (beta = 0.1):
    # row 0: [-0.05, 0 + 2, padding];  row 1 used the whole budget: [-0.02, -0.04, -0.06 - 1]
    expected = torch.tensor([[-0.05, 2.0, 0.0], [-0.02, -0.04, -1.06]])
    inputs = dict(scores=scores, logp=logp, ref_logp=ref_logp, mask=mask, beta=0.1, kind="k1")
    rewards = shaped_rewards(**inputs)
    assert rewards.shape == (2, 3), f"shaped rewards are (B, T) = (2, 3), got shape {tuple(rewards.shape)}"
    expect_close(rewards, expected, "KL penalty on every token, the score on the last generated token", inputs,
                 mask)
