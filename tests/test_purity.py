"""Pure functions, checked: a call that writes into its input fails ("mutated"), and two different answers to
one input fail the function for the rest of the test ("inconsistent"), in the sandbox (RemoteSubmission, the
child's before/after comparison) and in-process (LocalSubmission) alike."""

from __future__ import annotations

import inspect

import pytest
import torch

from autograder.checks.local import LocalSubmission, module_from_source
from autograder.lab import config
from autograder.lab.reference import load_reference
from autograder.sandbox.remote import RemoteSubmission, SubmissionError, reasked, same_answer

# One submission, one child for the whole file: each contract function breaks purity in its own way.
SOURCE = """
import torch
_calls = [0]

def kl_estimate(logp, ref_logp, kind="k1"):
    d = logp
    d -= ref_logp                    # in place, as students write it
    return d

def shaped_rewards(scores, logp, ref_logp, mask, beta, kind="k1"):
    ref_logp.data[0, 0] = 7.0        # through .data
    return logp * 0

def ppo_value_loss(values, old_values, returns, mask, clip_eps=0.2):
    returns[:, 0].zero_()            # through a view
    return (values * mask).sum()

def ppo_policy_loss(logp, old_logp, advantages, mask, clip_eps=0.2):
    old_logp.set_(torch.zeros(1))    # another shape
    return (logp * mask).sum()

def bradley_terry_loss(r_better, r_worse):
    r_better.data.clamp_(-1, 1)      # an argument that requires grad
    return -torch.nn.functional.logsigmoid(r_better - r_worse).mean()

def ranking_loss(rewards, ranking):  # state: a different answer every call
    _calls[0] += 1
    return (rewards * 0).sum() + _calls[0]

def compute_gae(rewards, values, mask, gamma=1.0, lam=0.95):  # pure where it matters: random padding
    junk = torch.rand(rewards.shape, dtype=rewards.dtype) * 1000
    return torch.where(mask.bool(), rewards, junk), torch.where(mask.bool(), values, junk)
"""
T = torch.tensor([[-1.0, -2.0], [-0.5, -3.0]])
MASK = torch.tensor([[1.0, 1.0], [1.0, 0.0]])
MUTATIONS = [  # (function, args, requested gradients, the argument it writes into)
    ("kl_estimate", (T, T - 1), (), "logp"),
    ("shaped_rewards", (torch.zeros(2), T, T - 1, MASK, 0.1), (), "ref_logp"),
    ("ppo_value_loss", (T, T, T + 1, MASK), (0,), "returns"),
    ("ppo_policy_loss", (T, T - 1, T, MASK), (0,), "old_logp"),
    ("bradley_terry_loss", (torch.tensor([5.0]), torch.tensor([0.0])), (0, 1), "r_better"),
]


@pytest.fixture(scope="module")
def remote(tmp_path_factory):
    path = tmp_path_factory.mktemp("purity") / "rlhf.py"
    path.write_text(SOURCE)
    sub = RemoteSubmission(path, config.load().limits)
    yield sub
    sub.close()


@pytest.fixture(params=["remote", "local"])
def sub(request, remote):
    """The submission through the sandbox and in-process, each at the start of a new test."""
    if request.param == "local":
        return LocalSubmission(module_from_source(SOURCE))
    remote.begin_test()
    return remote


@pytest.mark.parametrize("fn, args, grad, name", MUTATIONS, ids=[m[0] for m in MUTATIONS])
def test_a_write_into_an_argument_fails_that_call_naming_it(sub, fn, args, grad, name):
    sent = [a.clone() if isinstance(a, torch.Tensor) else a for a in args]
    with pytest.raises(SubmissionError) as raised:
        sub.call(fn, *args, grad=grad)
    assert raised.value.kind == "mutated"
    assert str(raised.value).startswith(f"{fn} modified its argument {name} in place: ")
    assert all(torch.equal(a, b) for a, b in zip(args, sent) if isinstance(a, torch.Tensor))  # the judge's stay


def test_a_mutating_call_costs_that_call_only(sub):
    with pytest.raises(SubmissionError, match="modified its argument logp"):
        sub.call("kl_estimate", T, T - 1)
    (adv, _), _ = sub.call("compute_gae", T, T, MASK, gamma=0.9)
    assert torch.equal(adv[MASK.bool()], T[MASK.bool()])


def test_two_answers_to_one_input_fail_the_function_for_the_rest_of_the_test(sub):
    ranking = torch.tensor([[1, 0], [0, 1]])
    with pytest.raises(SubmissionError) as raised:
        sub.call("ranking_loss", T, ranking)  # the first answer of a test is asked twice
    assert raised.value.kind == "inconsistent"
    assert str(raised.value).startswith("ranking_loss gave two different answers to the same input")
    with pytest.raises(SubmissionError, match="two different answers"):
        sub.call("ranking_loss", T + 1, ranking)  # at once, whatever the input
    (adv, _), _ = sub.call("compute_gae", T, T, MASK)  # the other functions are not concerned
    assert adv.shape == T.shape


def test_padding_may_differ_between_two_answers(sub):
    for _ in range(20):  # answers 1, 4 and 16 are asked twice: the padding differs each time
        (adv, ret), _ = sub.call("compute_gae", T, T + 1, MASK, gamma=0.9)
    assert torch.equal(adv[MASK.bool()], T[MASK.bool()]) and torch.equal(ret[MASK.bool()], (T + 1)[MASK.bool()])


def test_the_sample_asked_twice_is_a_few_percent_of_the_calls():
    assert [n for n in range(1, 300) if reasked(n)] == [1, 4, 16, 64, 256]
    assert sum(reasked(n) for n in range(1, 1301)) / 1300 < 0.01  # a PPO run's calls


def test_same_answer_compares_bits_where_they_matter():
    mask = torch.tensor([[1.0, 0.0]])
    a = (torch.tensor([[1.0, 5.0]]), [])
    assert same_answer("shaped_rewards", a, (torch.tensor([[1.0, -9.0]]), []), (None, None, None, mask), {})
    assert not same_answer("shaped_rewards", a, (torch.tensor([[1.0 + 1e-7, 5.0]]), []), (None, None, None, mask), {})
    assert not same_answer("kl_estimate", (torch.tensor(0.0), []), (torch.tensor(-0.0), []), (), {})
    nan = torch.tensor(float("nan"))
    assert same_answer("ppo_value_loss", (nan, [nan]), (nan.clone(), [nan.clone()]), (), {})
    assert not same_answer("ppo_value_loss", (nan, [torch.ones(1)]), (nan, [torch.zeros(1)]), (), {})
    assert not same_answer("compute_gae", ([torch.ones(1)], []), (torch.ones(1), []), (), {})


def test_the_contract_is_the_references():
    """grading.yaml `contract` names the reference's functions, in its order, with its parameters."""
    reference = load_reference()
    contract = config.load().contract
    defined = [name for name, obj in vars(reference).items() if callable(obj) and name in contract]
    assert defined == list(contract)
    for fn, spec in contract.items():
        assert tuple(inspect.signature(getattr(reference, fn)).parameters) == spec.parameters, fn
