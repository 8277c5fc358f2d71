"""Batches of calls (remote.RemoteSubmission.answers, the replay's): one request, the answers streamed back one
frame per call, each checked and limited as a single call; whatever the child does, a batch ends as the same calls
made one by one end (the same answers, the same error and sentence at the same call), and the judge survives."""

from __future__ import annotations

import dataclasses

import pytest
import torch

from autograder.lab import config
from autograder.lab.paths import REFERENCE
from autograder.sandbox import remote
from autograder.sandbox.remote import Ask, RemoteSubmission, SubmissionError
from autograder.sandbox.sandbox import Child

HOSTILE = '''
import os, sys, torch
import wire  # the worker's own copy
OUT = int(sys.argv[4])  # the worker's channel to the judge

def kl_estimate(logp, ref_logp, kind="k1"):
    mark = float(logp.flatten()[0])
    if mark == 1.0:
        os.write(OUT, b"not a frame at all")                       # garbage
    elif mark == 2.0:
        os.write(OUT, wire.HEADER.pack(wire.MAGIC, wire.MAX_JSON + 1))  # an oversized answer
    elif mark == 3.0:
        wire.write_frame(OUT, {"ok": True, "result": logp * 0, "grads": []})  # one answer too many
    elif mark == 4.0:
        wire.write_frame(OUT, {"ok": False, "error": {"kind": "raised", "type": "E"}})  # a failure, then the answer
    elif mark == 5.0:
        return torch.zeros(7)                                       # a wrong shape
    elif mark == 6.0:
        os._exit(3)                                                 # a crash
    elif mark == 7.0:
        return {"ok": True}                                         # not a tensor
    return logp - ref_logp
'''


def calls(marks: list[float]) -> list[Ask]:
    """kl_estimate on (2, 3) inputs whose first element is the mark (0: an ordinary call)."""
    made = []
    for i, mark in enumerate(marks):
        logp = torch.full((2, 3), 0.5 + i)
        logp[0, 0] = mark
        made.append(Ask("kl_estimate", (logp, torch.zeros(2, 3)), {"kind": "k1"}))
    return made


def outcomes(sub: RemoteSubmission, asked: list[Ask]) -> list:
    """What each call came to through remote.answers (the replay's way: each answer checked against the contract),
    in order, up to the first failure: its answer, or (kind, sentence)."""
    seen: list = []
    function = sub.parts()["kl_estimate"]
    try:
        for value, grads in remote.answers([(function, call) for call in asked]):
            seen.append((value.tolist() if isinstance(value, torch.Tensor) else value, grads))
    except SubmissionError as exc:
        seen.append((exc.kind, str(exc)))
    return seen


def one_by_one(monkeypatch, path, asked: list[Ask], limits=None) -> tuple[list, list]:
    """outcomes() batched, then one call at a time (remote.BATCH_ASKS = 1), each in a fresh submission; and after
    each, a plain call's answer: the judge and the submission go on."""
    results = []
    for asks in (remote.BATCH_ASKS, 1):
        monkeypatch.setattr(remote, "BATCH_ASKS", asks)
        sub = RemoteSubmission(path, limits or config.load().limits)
        try:
            got = outcomes(sub, asked)
            after = sub.call("bradley_terry_loss", torch.ones(2), torch.zeros(2))[0]
            results.append((got, after.tolist() if isinstance(after, torch.Tensor) else after))
        finally:
            sub.close()
    return results[0], results[1]


@pytest.fixture
def hostile(tmp_path):
    path = tmp_path / "rlhf.py"
    path.write_text(REFERENCE.read_text() + HOSTILE)
    return path


@pytest.mark.parametrize("mark", [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0])
def test_a_child_that_answers_a_batch_badly_ends_it_as_the_same_calls_one_by_one(monkeypatch, hostile, mark):
    asked = calls([0, 0, 0, 0, mark, 0, 0, 0])
    batched, single = one_by_one(monkeypatch, hostile, asked)
    assert batched == single
    assert isinstance(batched[0][-1][0], str) or mark == 3.0  # each ends in an error (3.0: a shifted answer)


def test_a_batch_of_good_calls_answers_as_one_by_one_in_fewer_round_trips(monkeypatch):
    sent = []
    for name in ("send", "request"):  # what starts a round trip: a batch, or one call
        method = getattr(Child, name)
        monkeypatch.setattr(Child, name, lambda self, *a, m=method, **k: (sent.append(1), m(self, *a, **k))[1])
    batched, single = one_by_one(monkeypatch, REFERENCE, calls([0] * 40))
    assert batched == single and len(batched[0]) == 40
    # batched: one request for the 40 calls (43 asks fit BATCH_ASKS), then the plain call; one by one: 40 calls,
    # 3 of them asked twice (answers 1, 4 and 16: remote.reasked), then the plain call
    assert len(sent) == (1 + 1) + (40 + 3 + 1)


def test_a_batch_respects_its_limits_on_asks_and_bytes(monkeypatch):
    sub = RemoteSubmission(REFERENCE, config.load().limits)
    asked = calls([0] * 200)
    assert sub._fitting(asked) == remote.BATCH_ASKS - 3  # 61 calls: 3 asked twice (answers 1, 4, 16)
    monkeypatch.setattr(remote, "BATCH_BYTES", 6 * 48)  # each call sends 48 bytes (two (2, 3) float32 tensors)
    assert sub._fitting(asked) == 4  # the first and the fourth count twice
    monkeypatch.setattr(remote, "BATCH_BYTES", 1)
    assert sub._fitting(asked) == 1  # at least one call: it goes alone, as `call`


def test_a_call_past_where_the_caller_stopped_fails_no_function(hostile):
    """The caller stops after two answers; the child still runs the batch: a crash there kills only the child,
    the next call starts another, and kl_estimate still answers."""
    sub = RemoteSubmission(hostile, config.load().limits)
    try:
        answers = sub.answers(calls([0, 0, 0, 6.0, 0]))
        next(answers)
        next(answers)
        answers.close()
        assert sub._child is None and not sub._broken
        (value, _) = sub.call("kl_estimate", torch.full((2, 3), 0.25), torch.zeros(2, 3), kind="k1")
        assert value.tolist() == [[0.25] * 3] * 2
    finally:
        sub.close()


def test_a_call_that_spins_in_a_batch_is_stopped_at_its_own_limit(monkeypatch, tmp_path):
    path = tmp_path / "rlhf.py"
    path.write_text(REFERENCE.read_text() + "\n_kl = kl_estimate\ndef kl_estimate(logp, ref_logp, kind='k1'):\n"
                    "    while float(logp.flatten()[0]) == 8.0:\n        pass\n    return _kl(logp, ref_logp, kind)\n")
    limits = dataclasses.replace(config.load().limits, call_seconds=1.0)
    batched, single = one_by_one(monkeypatch, path, calls([0, 0, 8.0, 0]), limits)
    assert batched == single
    assert batched[0][-1] == ("died", "Kl_estimate() did not finish within 1 s of CPU time (time limit) and was "
                                      "stopped")
    assert len(batched[0]) == 3
