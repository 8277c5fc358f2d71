"""RemoteFunction: the submission's functions, called in the sandbox, behave like local ones in training."""

from __future__ import annotations

import pytest
import torch

from autograder import config
from autograder.paths import REFERENCE
from autograder.remote import RemoteSubmission, SubmissionError


@pytest.fixture(scope="module")
def remote():
    sub = RemoteSubmission(REFERENCE, config.load().limits)
    yield sub.parts()
    sub.close()


def test_values_and_gradients_equal_local_ones(remote, ref):
    torch.manual_seed(0)
    logp = torch.randn(3, 4, requires_grad=True)
    old, adv = torch.randn(3, 4), torch.randn(3, 4)
    mask = torch.tensor([[1.0, 1, 1, 1], [1, 1, 0, 0], [1, 0, 0, 0]])
    local = ref.ppo_policy_loss(logp, old, adv, mask)
    (local_grad,) = torch.autograd.grad(local, logp)
    far = remote["ppo_policy_loss"](logp, old, adv, mask)
    (far_grad,) = torch.autograd.grad(far, logp)
    assert torch.allclose(far, local) and torch.equal(far_grad, local_grad)


def test_tuples_and_keyword_arguments_come_back(remote, ref):
    r, v = torch.randn(2, 3, dtype=torch.float64), torch.randn(2, 3, dtype=torch.float64)
    mask = torch.ones(2, 3, dtype=torch.float64)
    adv, ret = remote["compute_gae"](r, v, mask, 0.9, lam=0.8)
    want_adv, want_ret = ref.compute_gae(r, v, mask, 0.9, 0.8)
    assert adv.dtype == torch.float64 and torch.equal(adv, want_adv) and torch.equal(ret, want_ret)


def test_a_missing_function_fails_with_a_sentence(tmp_path):
    path = tmp_path / "rlhf.py"
    path.write_text("import torch\n")
    sub = RemoteSubmission(path, config.load().limits)
    try:
        with pytest.raises(SubmissionError, match="does not define compute_gae"):
            sub.call("compute_gae", torch.zeros(1, 1), torch.zeros(1, 1), torch.ones(1, 1))
    finally:
        sub.close()
