"""The flow of a recorded run (autograder/replay/flow.py): which argument of a call the training computed from
which earlier answer, found while recording by what it was computed from (never by a value alone), followed
in a replay with the submission's own answers."""

from __future__ import annotations

import pytest
import torch

from autograder.replay import flow


def doubled(x: torch.Tensor, mask: torch.Tensor | None) -> torch.Tensor:
    return x * 2


def links(passes_on: dict, training) -> list[dict]:
    """The links of the arguments `training(answered)` returns, the answers being registered by `answered`."""
    seen = flow.Provenance(passes_on)
    with seen:
        args, cotangent = training(seen.answered)
        return seen.links(args, cotangent)


def test_rows_of_an_answer_are_the_rows_the_training_took_among_equal_values():
    def training(answered):
        answer = torch.tensor([1.0, 0.0, 1.0, 0.0])  # rows 0 and 2, 1 and 3 are equal
        answered([answer], None)
        return [answer[torch.tensor([2, 3])], torch.ones(2)], None
    (link,) = links({}, training)
    assert (link["to"], link["call"], link["piece"], link["via"], link["rows"].tolist()) == (0, 0, 0, "", [2, 3])


def test_equal_answers_are_told_apart_by_what_an_argument_was_computed_from():
    def training(answered):
        advantages, returns = torch.tensor([0.5, 1.0]), torch.tensor([0.5, 1.0])
        answered([advantages, returns], None)
        answered([torch.tensor(3.0)], None)
        return [doubled(returns, None), returns.clone(), torch.tensor([0.5, 1.0])], None  # the last: not from one
    assert [(link["to"], link["call"], link["piece"], link["via"]) for link in links({"doubled": doubled}, training)] \
        == [(0, 0, 1, "doubled"), (1, 0, 1, "")]


def test_an_argument_computed_from_an_answer_in_an_undeclared_way_stops_the_recording():
    def training(answered):
        answer = torch.tensor([1.0, 2.0])
        answered([answer], None)
        return [answer + 1], None
    with pytest.raises(flow.UndeclaredFlow, match="argument 0"):
        links({"doubled": doubled}, training)


def test_a_cotangent_is_linked_to_the_most_recent_answer_equal_to_it():
    def training(answered):
        answered([torch.tensor(0.1), torch.tensor([0.25, -0.25])], None)  # a loss and its gradient
        return [torch.ones(2)], torch.tensor([0.25, -0.25])  # autograd's: from no answer a mode saw
    (link,) = links({}, training)
    assert (link["to"], link["call"], link["piece"], link["rows"]) == ("cotangent", 0, 1, None)


def test_a_replay_passes_on_the_submissions_own_answer_as_linked():
    mask = torch.tensor([1.0, 1.0, 0.0])
    feed = flow.Feed({"doubled": doubled}, lambda fn: 1 if fn == "f" else None)
    feed.answered({"fn": "f", "args": [torch.zeros(3), mask]}, torch.tensor([1.0, 2.0, 9.0]), [])
    call = {"fn": "g", "args": [torch.zeros(2), "kept"], "cotangent": None,
            "flow": [{"to": 0, "call": 0, "piece": 0, "via": "doubled", "rows": torch.tensor([1, 0])}]}
    args, cotangent = feed.arguments(call)
    assert args[0].tolist() == [4.0, 2.0] and args[1] == "kept" and cotangent is None


def test_waves_are_the_longest_runs_of_calls_linked_only_to_calls_before_them():
    def call(*linked: int) -> dict:
        return {"flow": [{"to": 0, "call": j, "piece": 0, "via": "", "rows": None} for j in linked]}
    # a PPO step: rewards (no link), GAE (from 0), minibatches (from 1), the next step's rewards (no link), its GAE
    recorded = [call(), call(0), call(1), call(1), call(1), call(), call(5), call(1, 6)]
    assert [len(wave) for wave in flow.waves(recorded)] == [1, 1, 4, 1, 1]
    assert [len(wave) for wave in flow.waves([call(), call(), call()])] == [3]
    assert list(flow.waves([])) == []
