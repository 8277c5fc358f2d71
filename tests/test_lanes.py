"""How a grade is split between two judge lanes (autograder/judge/lanes.py): balanced by the runs each e2e test
trains, a run reused across lanes trained once and passed over, and the same findings as with one lane."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from autograder.judge import e2e, lanes
from autograder.judge.grade import _lanes_training, e2e_runs, grade
from autograder.lab import config, registry
from autograder.lab.paths import REFERENCE, STARTER

CFG = config.load()
IDS = list(CFG.tests)


def test_the_second_lane_takes_the_ppo_runs_the_others_reuse():
    runs = e2e_runs(IDS, CFG)
    (first, second), trained = lanes.plan(IDS, 2, runs)
    assert second == ["e2e.kl_penalty", "e2e.blind_spot"]
    assert first == [t for t in IDS if t not in second]
    assert trained == set(runs["e2e.kl_penalty"]) | set(runs["e2e.blind_spot"])
    assert set(runs["e2e.ptx"]) & trained == set(runs["e2e.kl_penalty"])  # ptx's baseline: passed over


def test_torch_dynamo_is_shared_only_when_both_lanes_surely_train(monkeypatch):
    """An optimiser imports torch._dynamo: before the fork only when both lanes will build one whatever the
    submission answers. Every run of Lab 12 (its reward model's, its PPO runs) may be replayed: a grade whose
    answers are the reference's imports it nowhere."""
    (first, second), trained = lanes.plan(IDS, 2, e2e_runs(IDS, CFG))
    assert _lanes_training([first, second], trained, CFG) == 0
    monkeypatch.setenv("AUTOGRADER_REPLAY", "0")
    assert _lanes_training([first, second], trained, CFG) == 2


def test_a_grade_without_plots_makes_none_and_the_lab_plots_again_after():
    lab = registry.lab()
    with registry.without_plots():
        assert registry.lab().plot("kl_penalty", {"run": [{"gold": 0.5}]}, ("gold",)) == []
    assert registry.lab() is lab


def test_the_blank_starter_is_graded_on_one_lane(monkeypatch):
    """A second lane would start a child only to hear NotImplementedError (findings alike: two lanes find what
    one finds); the reference keeps two."""
    planned = []

    def plan(test_ids, n_lanes, runs):
        planned.append(n_lanes)
        raise RuntimeError("planned")
    monkeypatch.setattr(lanes, "plan", plan)
    monkeypatch.setattr(lanes, "lane_count", lambda wanted=None: 2)
    for path in (STARTER, REFERENCE):
        with pytest.raises(RuntimeError, match="planned"):
            grade(path, cfg=CFG, mode="self_check")
    assert planned == [1, 2]


def test_a_grade_imports_no_matplotlib_even_when_it_plots():
    """The e2e plots are drawn as SVG by the engine (autograder/judge/plots.py): matplotlib (~0.45 s of CPU and
    ~70 MB a lane) is never imported, though the plots are drawn (every plotted Lab 12 metric)."""
    code = ("import sys; from autograder.judge import grade, e2e\n"
            "from autograder.lab import registry; registry.lab(); tests = e2e.load_all()\n"
            "history = [{m: 0.1 * i for m in ('rm_score', 'gold', 'malformed', 'accuracy', 'kl')} for i in range(5)]\n"
            "drawn = [registry.lab().plot(name, {'run': history}, t.plotted) for name, t in tests.items()]\n"
            "print(sum(len(d) for d in drawn), 'matplotlib' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.split()[-2:] == [str(len(e2e.load_all())), "False"], done.stdout


def test_one_lane_runs_everything_and_waits_for_nothing():
    assert lanes.plan(IDS, 1, e2e_runs(IDS, CFG)) == ([IDS], set())
    checks_only = [t for t in IDS if not t.startswith("e2e.")]
    assert lanes.plan(checks_only, 2, {}) == ([checks_only], set())


def test_the_plan_minimises_the_busier_lane():
    runs = {"a": {"A": 5.0}, "b": {"B": 4.0}, "c": {"C": 3.0}, "d": {"A": 5.0, "D": 2.0}}
    (first, second), trained = lanes.plan(["x", "a", "b", "c", "d"], 2, runs, check_seconds=1.0)
    # d trains A and D (7 s); a waits for d's A: the first lane has 1 + 4 + 3 = 8 s (as with a there too)
    assert (first, second, trained) == (["x", "a", "b", "c"], ["d"], {"A", "D"})


def test_a_reused_run_is_fetched_once_and_trained_here_when_it_never_comes():
    asked = []

    def fetch(key):
        asked.append(key)
        return {"kl": {"final": 1.0}} if key == "kl" else {}
    memo = e2e.SharedRuns({"kl", "lost"}, fetch)
    assert "own" not in memo and asked == []            # not the other lane's: trained here, no waiting
    assert "kl" in memo and memo["kl"] == {"final": 1.0}
    assert "lost" not in memo and "lost" not in memo    # the other lane ended without it: asked once
    assert asked == ["kl", "lost"]


def test_runs_cross_the_pipe_exactly():
    runs = {((("beta", 0.2), ("lr", 4e-4)), 1, ("gae", "kl"), 512): {"history": [{"gold": 0.1 + 0.2}],
                                                                     "final": {"gold": -1e-300}}}
    assert e2e.runs_from_json(e2e.runs_to_json(runs)) == runs


@pytest.mark.slow  # two full grades of the reference (its runs replayed, then passed between lanes as trained ones)
def test_two_lanes_find_what_one_lane_finds():
    one, two = grade(Path(REFERENCE), lane_count=1), grade(Path(REFERENCE), lane_count=2)
    assert [(r.id, r.score, r.finding.message, r.finding.details, r.finding.metrics) for r in one.tests] == \
           [(r.id, r.score, r.finding.message, r.finding.details, r.finding.metrics) for r in two.tests]
