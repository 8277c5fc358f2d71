"""diagnosis.diagnose: a failed check's answer is matched against the bank's mistakes, run in the judge,
and a mistake is named only when fresh valid inputs leave it the only one reproducing the answers."""

from __future__ import annotations

import torch

from autograder import bank, diagnosis
from autograder.bank import Entry
from autograder.checks import CheckFailed
from autograder.grade import load_reference

REFERENCE = load_reference()
REWARDS = torch.tensor([[0.0, 0.0, 1.0, 9.0], [2.0, 9.0, 9.0, 9.0]])
VALUES = torch.tensor([[0.5, 0.25, 0.5, 9.0], [1.0, 9.0, 9.0, 9.0]])
MASK = torch.tensor([[1.0, 1.0, 1.0, 0.0], [1.0, 0.0, 0.0, 0.0]])
KWARGS = {"gamma": 0.5, "lam": 0.5}


def forward_recursion(rewards, values, mask, gamma=1.0, lam=0.95):
    T = rewards.shape[1]
    adv = torch.zeros_like(rewards)
    prev = torch.zeros_like(rewards[:, 0])
    for t in range(T):
        nxt = values[:, t + 1] * mask[:, t + 1] if t + 1 < T else torch.zeros_like(prev)
        prev = (rewards[:, t] + gamma * nxt - values[:, t] + gamma * lam * prev) * mask[:, t]
        adv[:, t] = prev
    return adv, adv + values


def raises(rewards, values, mask, gamma=1.0, lam=0.95):
    raise IndexError("this entry does not handle the input")


def detached(rewards, values, mask, gamma=1.0, lam=0.95):
    adv, ret = compute_gae(rewards, values, mask, gamma, lam)  # noqa: F821 (the reference's, as a global)
    return adv.detach(), ret.detach()


def entry(name, impl, hint):
    return Entry("gae", "compute_gae", name, impl, hint, True)


def use_bank(monkeypatch, *entries):
    monkeypatch.setattr(bank, "mistakes_of_part", lambda part: [e for e in entries if e.part == part])


def failure(answer) -> CheckFailed:
    return CheckFailed("advantages differ", function="compute_gae", args=(REWARDS, VALUES, MASK),
                       kwargs=dict(KWARGS), answer=answer)


def ask(fn):
    """The submission's answers to fresh calls, when the submission is `fn`."""
    return lambda args, kwargs: fn(*args, **kwargs)


def one_step_only(rewards, values, mask, gamma=1.0, lam=0.95):
    """A mistake the bank does not know: advantages are the one-step rewards."""
    return rewards * mask, (rewards + values) * mask


def test_known_mistake_is_named_with_its_hint(monkeypatch):
    use_bank(monkeypatch, entry("forward_recursion", forward_recursion, "the recursion ran forwards in time"))
    answer = forward_recursion(REWARDS, VALUES, MASK, **KWARGS)
    text = diagnosis.diagnose("gae", failure(answer), REFERENCE, ask(forward_recursion))
    assert text == "the recursion ran forwards in time (looks like: forward_recursion)"


def test_no_hint_without_fresh_answers(monkeypatch):
    use_bank(monkeypatch, entry("forward_recursion", forward_recursion, "forwards"))
    answer = forward_recursion(REWARDS, VALUES, MASK, **KWARGS)
    assert diagnosis.diagnose("gae", failure(answer), REFERENCE) == ""


def test_a_match_on_the_shrunk_input_that_fresh_inputs_refute_is_not_named(monkeypatch):
    # on this input the unknown mistake and the bank's one agree; on fresh valid inputs they do not
    use_bank(monkeypatch, entry("one_step", one_step_only, "one step"), entry("forward_recursion", forward_recursion,
                                                                             "forwards"))
    answer = one_step_only(REWARDS, VALUES, MASK, **KWARGS)
    named = diagnosis.diagnose("gae", failure(answer), REFERENCE, ask(one_step_only))
    assert named == "one step (looks like: one_step)"
    use_bank(monkeypatch, entry("one_step_lookalike", lambda r, v, m, gamma=1.0, lam=0.95:
                                (r * m, (r + v) * m) if torch.equal(r, REWARDS) else (r * 0, v * 0), "lookalike"))
    assert diagnosis.diagnose("gae", failure(answer), REFERENCE, ask(one_step_only)) == ""


def test_padding_is_not_compared(monkeypatch):
    use_bank(monkeypatch, entry("forward_recursion", forward_recursion, "forwards"))
    adv, ret = forward_recursion(REWARDS, VALUES, MASK, **KWARGS)
    garbage = torch.where(MASK.bool(), adv, torch.full_like(adv, 123.0))
    assert "forward_recursion" in diagnosis.diagnose("gae", failure((garbage, ret)), REFERENCE,
                                                     ask(forward_recursion))


def test_unknown_wrong_answer_gets_no_diagnosis(monkeypatch):
    use_bank(monkeypatch, entry("forward_recursion", forward_recursion, "forwards"))
    wrong = (torch.ones(2, 4), torch.ones(2, 4))
    assert diagnosis.diagnose("gae", failure(wrong), REFERENCE, ask(forward_recursion)) == ""


def test_raising_entry_is_skipped(monkeypatch):
    use_bank(monkeypatch, entry("raises", raises, "never shown"),
             entry("forward_recursion", forward_recursion, "forwards"))
    answer = forward_recursion(REWARDS, VALUES, MASK, **KWARGS)
    assert diagnosis.diagnose("gae", failure(answer), REFERENCE, ask(forward_recursion)) == \
        "forwards (looks like: forward_recursion)"


def test_mistake_indistinguishable_from_reference_is_not_named(monkeypatch):
    # a detached output equals the reference's value: only a gradient check can tell it apart
    use_bank(monkeypatch, entry("detached", detached, "no gradient"))
    answer = REFERENCE.compute_gae(REWARDS, VALUES, MASK, **KWARGS)
    assert diagnosis.diagnose("gae", failure(answer), REFERENCE, ask(REFERENCE.compute_gae)) == ""


def test_never_raises_on_odd_failures(monkeypatch):
    use_bank(monkeypatch, entry("forward_recursion", forward_recursion, "forwards"))
    odd = CheckFailed("x", function="compute_gae", args=("not a tensor",), answer={"__object__": "dict"})
    assert diagnosis.diagnose("gae", odd, REFERENCE) == ""
    assert diagnosis.diagnose("gae", failure(None), REFERENCE) == ""
    assert diagnosis.diagnose("gae", failure(torch.ones(2, 4)), None) == ""


def test_mistakes_no_input_tells_apart_get_no_hint(monkeypatch):
    # a name is shown only when it is certainly the one: "a or b" would be half wrong
    use_bank(monkeypatch, entry("forward_recursion", forward_recursion, "forwards"),
             entry("forward_again", forward_recursion, "forwards again"))
    answer = forward_recursion(REWARDS, VALUES, MASK, **KWARGS)
    assert diagnosis.diagnose("gae", failure(answer), REFERENCE, ask(forward_recursion)) == ""
