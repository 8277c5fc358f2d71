"""Lab 12's shipped reference trainings (the engine's autograder/replay/): current, equal to a fresh recording
bit for bit, reused only for submissions that answer every recorded call as the reference does."""

from __future__ import annotations

import json

import pytest
import torch

from autograder.judge import e2e
from autograder.judge.grade import grade
from autograder.judge.report import write_reports
from autograder.lab import bank, config, fingerprints
from autograder.lab.paths import REFERENCE, ROOT
from autograder.replay import compare, flow, record, runs, shipped
from autograder.sandbox import remote
from autograder.sandbox.remote import RemoteSubmission
from autograder.sandbox.sandbox import Child
from lab12.e2e_tests import ppo_key, rm_run_key

slow = pytest.mark.slow


def run_keys(cfg: config.Config) -> set[str]:
    """Every run the e2e tests train (their declared runs: the reward model's and the PPO runs)."""
    keys = set()
    for name, test in e2e.load_all().items():
        keys |= {repr(k) for k in test.runs(cfg.e2e[name])}
    return keys


def test_the_shipped_runs_are_current_and_cover_every_run():
    cfg = config.load()
    stamp, shipped_runs = shipped.read()
    assert stamp == shipped.fingerprint(), "stale: run `python -m autograder refresh`"
    assert set(shipped_runs) == run_keys(cfg)
    assert {repr(ppo_key(cfg.e2e["kl_penalty"])), repr(rm_run_key(cfg.e2e["reward_model"]))} <= set(shipped_runs)


def submission(tmp_path, source: str, name: str = "rlhf.py"):
    path = tmp_path / name
    path.write_text(source)
    return RemoteSubmission(path, config.load().limits)


def entry(entry_id: str) -> bank.Entry:
    return next(e for e in bank.load_all() if e.id == entry_id)


def matches(sub: RemoteSubmission, key: str) -> bool:
    cfg = config.load()
    try:
        return runs.answers_match(shipped.shipped_runs()[key], sub.parts(), cfg.calibration.replay_rtol,
                                  cfg.calibration.replay_atol)
    finally:
        sub.close()


PADDING_NOISE = '''
_reference_gae = compute_gae
def compute_gae(rewards, values, mask, gamma=1.0, lam=0.95):
    advantages, returns = _reference_gae(rewards, values, mask, gamma, lam)
    return advantages + 99.0 * (1 - mask), returns - 7.0 * (1 - mask)   # padding: never read by training
'''


def test_only_answers_like_the_reference_reuse_its_training(tmp_path):
    key = repr(ppo_key(config.load().e2e["blind_spot"]))
    reference = REFERENCE.read_text()
    assert matches(submission(tmp_path, bank.submission_source(entry("ppo_clip.where_formulation")), "a.py"), key)
    assert matches(submission(tmp_path, reference + PADDING_NOISE, "b.py"), key)
    assert not matches(submission(tmp_path, bank.submission_source(entry("gae.forward_recursion")), "c.py"), key)
    off = reference + "\n_loss = ppo_value_loss\ndef ppo_value_loss(*a, **k):\n    return _loss(*a, **k) * 1.001\n"
    assert not matches(submission(tmp_path, off, "d.py"), key)


def test_a_reference_grade_reuses_the_shipped_runs():
    result = grade(REFERENCE, only={"e2e"})
    assert result.score == result.max_score == 20
    details = {t.id: t.finding.details for t in result.tests}
    for name in ("e2e.kl_penalty", "e2e.blind_spot", "e2e.ptx"):
        assert "the reference's recorded run" in details[name], details[name]


def recorded_here() -> bool:
    """The shipped runs were recorded on a machine that rounds as this one does (fingerprints.numerics)."""
    return shipped.recorded_numerics() == fingerprints.numerics()


@slow
def test_recording_the_reference_again_gives_the_shipped_runs_bit_for_bit():
    if not recorded_here():
        pytest.skip("replays.bin was recorded on a machine that rounds differently (fingerprints.numerics): a "
                    "training here differs in the last bits; delete it and run `python -m autograder refresh`")
    _, expected = shipped.read()
    fresh = record.record_reference()
    assert set(fresh) == set(expected)
    for key, (calls, outcome) in fresh.items():
        expected_calls, expected_outcome = list(expected[key].calls()), expected[key].outcome
        assert json.loads(json.dumps(outcome)) == expected_outcome, key
        assert len(calls) == len(expected_calls)
        for got, want in zip(calls, expected_calls):
            assert got["fn"] == want["fn"] and got["grad"] == want["grad"] and got["kwargs"] == want["kwargs"]
            assert [{**link, "rows": None} for link in got["flow"]] == [{**link, "rows": None} for link in want["flow"]]
            for a, b in zip(flat(got), flat(want)):
                assert torch.equal(a, b) if isinstance(a, torch.Tensor) else a == b


def flat(call: dict) -> list:
    return [*call["args"], call["cotangent"], *flow.pieces(call["value"], call["grads"]),
            *(link["rows"] for link in call["flow"])]


def test_a_gradient_the_reference_makes_exactly_zero_must_be_zero():
    """Adam turns any non-zero gradient, however small, into a full step where the reference's is 0."""
    expected = [torch.tensor([0.5, 0.0, -1.0])]
    assert compare.close([torch.tensor([0.5 + 1e-7, 0.0, -1.0])], expected, None, 1e-5, 1e-6, zeros=True)
    assert not compare.close([torch.tensor([0.5, 1e-9, -1.0])], expected, None, 1e-5, 1e-6, zeros=True)
    assert compare.close([torch.tensor([0.5, 1e-9, -1.0])], expected, None, 1e-5, 1e-6)  # values: tolerances only


# Lab 12's training passes answers on so (training.train_ppo), with the mask of the call that answered: (the call and
# argument fed) <- (the answering call, its answer's tensor, the lab's transform), in every iteration
LAB12_FLOW = {("compute_gae", 0): ("shaped_rewards", 0, "on_tokens"),
              ("ppo_policy_loss", 2): ("compute_gae", 0, "whitened"),   # rows of the whitened advantages
              ("ppo_value_loss", 2): ("compute_gae", 1, "on_tokens")}   # rows of the returns


def feed() -> flow.Feed:
    from lab12 import replays
    contract = config.current().contract
    return flow.Feed(replays.FACTS.passes_on, lambda fn: contract[fn].mask_index)


def test_the_recorded_calls_show_the_flow_the_replay_feeds():
    """The links found while recording are Lab 12's flow, each call's own (advantages and returns: the rows its
    minibatch holds); fed the reference's own answers they rebuild each call's arguments bit for bit (on a machine
    that rounds otherwise than the recording's, a transform that reduces, the whitening, within rounding), and a
    changed answer is passed on. The reward model's training passes no answer on: its calls have no link."""
    bitwise = recorded_here()

    def same(a, b) -> bool:
        if not isinstance(a, torch.Tensor):
            return a == b
        return torch.equal(a, b) or (not bitwise and torch.allclose(a, b, rtol=1e-6, atol=1e-7))
    for key, run in shipped.shipped_runs().items():
        fed, fed_calls = feed(), 0
        recorded = list(run.calls())
        for call in recorded:
            args, cotangent = fed.arguments(call)
            assert cotangent is None and all(same(a, b) for a, b in zip(args, call["args"]))
            assert {(call["fn"], link["to"]): (recorded[link["call"]]["fn"], link["piece"], link["via"])
                    for link in call["flow"]} == {k: v for k, v in LAB12_FLOW.items() if k[0] == call["fn"]}
            fed_calls += bool(call["flow"])
            fed.answered(call, call["value"], call["grads"])
        if key.startswith("('reward_model'"):
            assert fed_calls == 0 and {call["fn"] for call in recorded} == {"ranking_loss"}, key
        else:
            assert fed_calls == run.n_calls * 17 // 18, key  # all but shaped_rewards
    fed = feed()
    call, gae = list(shipped.shipped_runs()[repr(ppo_key(config.load().e2e["kl_penalty"]))].calls())[:2]
    fed.answered(call, call["value"] + 1.0, call["grads"])
    assert gae["fn"] == "compute_gae"
    assert torch.equal(fed.arguments(gae)[0][0], torch.where(gae["args"][2] > 0, gae["args"][0] + 1.0, 0.0))


@slow
def test_a_submission_that_tells_a_replay_by_what_comes_back_gets_what_its_training_gets(tmp_path, monkeypatch):
    """tests/adversarial/replay_echo.py answers like the reference only when its own shaped rewards do not come back
    to compute_gae. A replay feeds the submission's own answers on as its training does, so it answers as in its
    own training (flipped advantages), and scores what that scores."""
    replayed, trained = graded_both_ways(tmp_path, monkeypatch, "replay_echo")
    assert [t.id for t in replayed.tests if "recorded run" in t.finding.details] == ["e2e.reward_model"]
    assert not {t.id: t for t in replayed.tests}["e2e.kl_penalty"].passed
    assert [(t.id, t.score) for t in replayed.tests] == [(t.id, t.score) for t in trained.tests]


@slow
def test_a_submission_that_tells_a_replay_by_its_timing_gains_only_what_the_reference_it_holds_earns(
        tmp_path, monkeypatch):
    """tests/adversarial/replay_pace.py answers like the reference only when the calls come back to back, as a
    replay sends them (docs/validity.md, "Replays": pacing is withdrawn). Each run is then either replayed, the
    reference's recorded outcome standing for it because every answer was the reference's (the reference, which
    the submission holds and runs, earns that), or trained on its own answers, scoring what its training scores;
    it never scores below its training, and never above the reference."""
    replayed, trained = graded_both_ways(tmp_path, monkeypatch, "replay_pace")
    reference = {t.id: t.score for t in grade(REFERENCE, only={"e2e"}).tests}
    trained_scores = {t.id: t.score for t in trained.tests}
    for t in replayed.tests:
        if "recorded run" in t.finding.details:
            assert t.score == reference[t.id], t.id
        else:
            assert t.score == trained_scores[t.id], t.id
        assert trained_scores[t.id] <= t.score <= reference[t.id], t.id


def graded_both_ways(tmp_path, monkeypatch, name: str):
    """The e2e grades of the reference with tests/adversarial/NAME.py appended: replayed where it can be, trained."""
    path = tmp_path / "rlhf.py"
    path.write_text(REFERENCE.read_text() + "\n\n" + (ROOT / "tests" / "adversarial" / f"{name}.py").read_text())
    replayed = grade(path, only={"e2e"})
    monkeypatch.setenv("AUTOGRADER_REPLAY", "0")
    return replayed, grade(path, only={"e2e"})


@slow
@pytest.mark.parametrize("mistake", ["", "ppo_clip.value_no_clipping"])
def test_a_batched_replay_grades_as_one_call_per_round_trip(tmp_path, monkeypatch, mistake):
    """The replay sends its calls in batches (remote.RemoteSubmission.answers); one call per round trip
    (remote.BATCH_ASKS = 1) gives the same results.json: for the reference (every run replayed) and for a mistake
    whose answers part from the reference's within a batch (every run trained)."""
    path = tmp_path / "rlhf.py"
    path.write_text(bank.submission_source(entry(mistake)) if mistake else REFERENCE.read_text())
    outputs = []
    for asks in (remote.BATCH_ASKS, 1):
        monkeypatch.setattr(remote, "BATCH_ASKS", asks)
        result = grade(path, only={"e2e"})
        write_reports(result, tmp_path / str(asks))
        data = json.loads((tmp_path / str(asks) / "results.json").read_text())
        data.pop("execution_time")
        outputs.append(data)
    assert outputs[0] == outputs[1]
    ppo = ("e2e.kl_penalty:", "e2e.blind_spot:", "e2e.ptx:")  # the PPO runs' tests; the mistake is in their part
    replayed = ["recorded run" in test["output"] for test in outputs[0]["tests"] if test["name"].startswith(ppo)]
    assert len(replayed) == 3 and all(replayed) == (not mistake) and any(replayed) == (not mistake)
    rm = next(test["output"] for test in outputs[0]["tests"] if test["name"].startswith("e2e.reward_model:"))
    assert "recorded run" in rm  # ranking_loss is the reference's in both


def test_a_replay_sends_a_wave_of_calls_in_one_round_trip(monkeypatch):
    """The reference replaying one run: one request per wave of calls (flow.waves), not one per call."""
    sent = []
    for name in ("send", "request"):  # what starts a round trip: a batch, or one call
        method = getattr(Child, name)
        monkeypatch.setattr(Child, name, lambda self, *a, m=method, **k: (sent.append(1), m(self, *a, **k))[1])
    run = shipped.shipped_runs()[repr(ppo_key(config.load().e2e["blind_spot"]))]
    waves = list(flow.waves(run.calls()))
    assert matches(RemoteSubmission(REFERENCE, config.load().limits), repr(ppo_key(config.load().e2e["blind_spot"])))
    # a wave of one is a plain call, asked again (a second request) when it is a sampled answer: 1, 4, 16, ...
    assert len(waves) <= len(sent) <= len(waves) + 6 and len(sent) * 8 < run.n_calls
