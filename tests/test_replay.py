"""The shipped reference trainings (autograder/replay.py): current, equal to a fresh recording bit for bit,
reused only for submissions that answer every recorded call as the reference does."""

from __future__ import annotations

import json

import pytest
import torch

from autograder import bank, config, e2e, replay
from autograder.e2e_tests import ppo_key
from autograder.grade import grade
from autograder.paths import REFERENCE
from autograder.remote import RemoteSubmission

slow = pytest.mark.slow


def ppo_run_keys(cfg: config.Config) -> set[str]:
    """Every PPO run the e2e tests train (their declared runs, the reward model's aside)."""
    keys = set()
    for name, test in e2e.load_all().items():
        keys |= {repr(k) for k in test.runs(cfg.e2e[name]) if k[0] != "reward_model"}
    return keys


def test_the_shipped_runs_are_current_and_cover_every_ppo_run():
    cfg = config.load()
    stamp, runs = replay.read()
    assert stamp == replay.fingerprint(), "stale: run `python -m autograder.replay`"
    assert set(runs) == ppo_run_keys(cfg)
    assert repr(ppo_key(cfg.e2e["kl_penalty"])) in runs


def submission(tmp_path, source: str, name: str = "rlhf.py"):
    path = tmp_path / name
    path.write_text(source)
    return RemoteSubmission(path, config.load().limits)


def entry(entry_id: str) -> bank.Entry:
    return next(e for e in bank.load_all() if e.id == entry_id)


def matches(sub: RemoteSubmission, key: str) -> bool:
    cfg = config.load()
    calls = replay.shipped_runs()[key].calls()
    try:
        return replay._answers_match(calls, sub.parts(), cfg.calibration.replay_rtol, cfg.calibration.replay_atol)
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


@slow
def test_recording_the_reference_again_gives_the_shipped_runs_bit_for_bit():
    _, shipped = replay.read()
    fresh = replay.record_reference()
    assert set(fresh) == set(shipped)
    for key, (calls, outcome) in fresh.items():
        expected_calls, expected_outcome = list(shipped[key].calls()), shipped[key].outcome
        assert json.loads(json.dumps(outcome)) == expected_outcome, key
        assert len(calls) == len(expected_calls)
        for got, want in zip(calls, expected_calls):
            assert got["fn"] == want["fn"] and got["grad"] == want["grad"] and got["kwargs"] == want["kwargs"]
            for a, b in zip(flat(got), flat(want)):
                assert torch.equal(a, b) if isinstance(a, torch.Tensor) else a == b


def flat(call: dict) -> list:
    value = call["value"] if isinstance(call["value"], (list, tuple)) else [call["value"]]
    return [*call["args"], *value, *call["grads"]]
