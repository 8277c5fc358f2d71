"""diagnosis.diagnose: a failed check's answer is matched against the bank's mistakes, run in the judge,
and a mistake is named only when fresh valid inputs leave it the only one reproducing the answers."""

from __future__ import annotations

import torch

from autograder.checks import CheckFailed
from autograder.judge import diagnosis
from autograder.judge.grade import load_reference
from autograder.lab import bank
from autograder.lab.bank import Entry

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


def test_a_match_the_confirmation_inputs_cannot_tell_from_another_mistake_is_not_named(monkeypatch):
    # the lookalike differs from forward_recursion only on the failing input: the confirmation inputs
    # do not separate the two, so naming forward_recursion would rest on one (degenerate) input
    def lookalike(rewards, values, mask, gamma=1.0, lam=0.95):
        if torch.equal(rewards, REWARDS):
            return rewards * 0, values * 0
        return forward_recursion(rewards, values, mask, gamma, lam)
    use_bank(monkeypatch, entry("forward_recursion", forward_recursion, "forwards"),
             entry("lookalike", lookalike, "never shown"))
    answer = forward_recursion(REWARDS, VALUES, MASK, **KWARGS)
    assert diagnosis.diagnose("gae", failure(answer), REFERENCE, ask(forward_recursion)) == ""
    assert diagnosis.diagnose("gae", failure(answer), REFERENCE, ask(forward_recursion), leave_out="lookalike") == \
        "forwards (looks like: forward_recursion)"


def test_the_confirmation_inputs_are_not_degenerate():
    from autograder.checks.factors import rows_class
    from lab12.checks.hidden import chosen

    gae = chosen.confirmation_calls("compute_gae")
    assert len(gae) >= 12
    assert all(args[0].shape[1] >= 2 and 0 < kwargs["gamma"] < 1 and 0 < kwargs["lam"] < 1 for args, kwargs in gae)
    rows = {rows_class(args[2]) for args, _ in gae}
    assert {"one full row", "full rows", "ragged with a full row", "ragged, none full"} <= rows
    assert any((args[2].sum(1) == args[2].shape[1]).any() and (args[1][:, 0] != args[1][:, -1]).any()
               for args, _ in gae)  # a full row with V_0 != V_{T-1}: a wrapped V_0 differs from a bootstrapped V_{T-1}
    kinds = [kwargs["kind"] for _, kwargs in chosen.confirmation_calls("kl_estimate")]
    assert {"k1", "k2", "k3"} <= set(kinds) and set(kinds) - {"k1", "k2", "k3"} <= set(chosen.REJECTED)
    shaped = chosen.confirmation_calls("shaped_rewards")
    assert all(1e-3 <= args[4] < 1 for args, _ in shaped) and {"k1", "k2", "k3"} <= {args[5] for args, _ in shaped}


def _failures(entry_id: str):
    """The failures the gae checks find for a bank mistake, in-process, with a local `ask`."""
    import types

    from autograder import checks
    from autograder.checks.local import LocalSubmission, local_context
    from autograder.lab.entries import contract_with
    from autograder.sandbox.remote import SubmissionError

    mistake = next(e for e in bank.load_all() if e.id == entry_id)
    module = types.SimpleNamespace(**contract_with(mistake, REFERENCE))
    sub = LocalSubmission(module)
    for check_id in ("gae.matches_reference", "gae.lambda_zero_td_error"):
        try:
            checks.load_all()[check_id].run(local_context(module, REFERENCE))
        except CheckFailed as found:
            def asked(args, kwargs):
                try:
                    return sub.call("compute_gae", *args, valid=False, **kwargs)[0]
                except SubmissionError:
                    return None
            yield mistake, found, asked


def test_a_truncation_bootstrap_is_never_called_a_wrapped_roll():
    # CleanRL's next_value on full rows (V_{T-1}) once got torch.roll's hint (V_0): on T = 1, or with
    # gamma = 0, or without a full row, the two agree; the confirmation inputs have full rows with T >= 2
    found = list(_failures("gae.truncation_bootstrap"))
    assert found
    for mistake, failure, asked in found:
        assert diagnosis.diagnose("gae", failure, REFERENCE, asked) == f"{mistake.hint} (looks like: {mistake.name})"
        assert diagnosis.diagnose("gae", failure, REFERENCE, asked, leave_out=mistake.name) == ""
