"""RemoteFunction: the submission's functions, called in the sandbox, behave like local ones in training."""

from __future__ import annotations

import pytest
import torch

from autograder.lab import config
from autograder.lab.paths import REFERENCE
from autograder.sandbox.remote import RemoteSubmission, SubmissionError


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


def test_an_answer_the_wire_cannot_carry_fails_that_call_and_the_child_lives_on(tmp_path):
    path = tmp_path / "rlhf.py"
    path.write_text("import torch\n"
                    "def kl_estimate(logp, ref_logp, kind='k1'):\n"
                    "    return (logp - ref_logp).to_sparse()\n"
                    "def bradley_terry_loss(r_better, r_worse):\n"
                    "    return -torch.nn.functional.logsigmoid(r_better - r_worse).mean()\n")
    sub = RemoteSubmission(path, config.load().limits)
    try:
        with pytest.raises(SubmissionError, match="kl_estimate returned a value the grader cannot read back "
                                                  r"\(sending it raised NotImplementedError\)") as raised:
            sub.call("kl_estimate", torch.zeros(1, 2), torch.zeros(1, 2))
        assert raised.value.kind == "raised"
        value, _ = sub.call("bradley_terry_loss", torch.zeros(1), torch.zeros(1))
        assert torch.isclose(value, torch.tensor(0.6931), atol=1e-4) and sub.calls == 2
    finally:
        sub.close()
