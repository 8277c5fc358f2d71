"""`python -m autograder calibrate` on 2 seeds and a few iterations: it runs, reports, writes the band."""

from __future__ import annotations

import argparse
import json

import pytest

from autograder.commands import calibrate
from autograder.judge import e2e
from autograder.lab import config
from autograder.validity import calibration as cal
from autograder.validity import mistake_outcomes


def run(*argv: str) -> int:
    parser = argparse.ArgumentParser()
    calibrate.add_arguments(parser)
    return calibrate.main(parser.parse_args(list(argv)))


@pytest.mark.slow
def test_two_seed_calibration_writes_the_band(tmp_path, capsys):
    band_file = tmp_path / "band.json"
    short = [f"--set={t}.ppo.iterations=2" for t in ("kl_penalty", "blind_spot", "ptx")]
    code = run("--seeds", "2", "--workers", "1", "--band", str(band_file), "--raw", str(tmp_path / "raw.json"),
               "--set=reward_model.steps=30", *short)
    out = capsys.readouterr().out
    assert code == 1  # two iterations cannot pass the PPO tests: calibration must say so
    for test in ("reward_model", "kl_penalty", "blind_spot", "ptx"):
        assert test + "." in out
    band = json.loads(band_file.read_text())
    assert set(band) == {"kl_penalty", "blind_spot", "ptx"}
    for test, metrics in band.items():  # the lab's band metrics and every metric the test plots
        assert set(metrics) == set(cal.band_metrics(e2e.load_all()[test]))
        assert all(len(m["lo"]) == len(m["hi"]) == 2 for m in metrics.values())
    assert len((tmp_path / "raw.json").read_text().splitlines()) == 8


@pytest.mark.parametrize("name", sorted(e2e.load_all()))
def test_calibration_measures_with_thresholds_no_finite_value_fails(name):
    """A grade's measurement may stop once a criterion fails; calibration's never does (cal.unbounded), and only the
    thresholds move: the verdict still reads the real ones."""
    test = e2e.load_all()[name]
    spec = config.load().e2e[name]
    wide = cal.unbounded(test, spec)
    assert {k: v for k, v in wide.items() if k not in test.thresholds} == \
        {k: v for k, v in spec.items() if k not in test.thresholds}
    for c in test.criteria:
        for value in (-1e30, -1.0, 0.0, 1.0, 1e30):
            assert not c.fails(wide, value) or not isinstance(c.bound, str), (c.metric, value)
        assert c.fails(wide, float("nan"))


def test_overrides_read_numbers_and_reject_unknown_keys():
    e2e = {"blind_spot": {"ppo": {"lr": 2e-4, "iterations": 150}, "seed": 1}}
    out = cal.apply_overrides(e2e, ["blind_spot.ppo.lr=4e-4", "blind_spot.ppo.iterations=60"])
    assert out["blind_spot"]["ppo"] == {"lr": 4e-4, "iterations": 60} and e2e["blind_spot"]["ppo"]["lr"] == 2e-4
    with pytest.raises(KeyError):
        cal.apply_overrides(e2e, ["blind_spot.ppo.lrr=1"])


def test_quantiles_and_band():
    assert cal.quantile([0.0, 1.0, 2.0, 3.0, 4.0], 0.5) == 2.0
    assert cal.quantile([0.0, 10.0], 0.1) == pytest.approx(1.0)
    runs = [cal.Run("kl_penalty", i, None, {"gold_gain": 0.4}, "", {"rm_score": [i, i], "gold": [0, 0], "kl": [1, 2]})
            for i in range(11)]
    band = cal.reference_band(runs)
    assert band["kl_penalty"]["rm_score"] == {"lo": [1.0, 1.0], "hi": [9.0, 9.0]}


def test_margins_flag_failures_and_thin_margins():
    row = cal.Row("kl_penalty", "gold_gain", ">=", 0.35, [0.45, 0.46, 0.47], 0, 3.0, 0.05)
    assert row.worst_margin == pytest.approx(0.10) and row.ok
    thin = cal.Row("kl_penalty", "gold_gain", ">=", 0.35, [0.37, 0.46, 0.55], 0, 3.0, 0.05)
    assert not thin.ok


def test_raw_runs_resume_whatever_the_thresholds(tmp_path):
    spec = {"points": 5, "seed": 1, "ppo": {"iterations": 70}, "min_gold_gain": 0.35, "max_malformed": 0.1}
    raw = tmp_path / "raw.jsonl"
    cal.append_raw(raw, [cal.Run("kl_penalty", 0, None, {"gold_gain": 0.45, "malformed": 0.0}, "", {})],
                   {"kl_penalty": spec})
    assert len(cal.load_raw(raw, {"kl_penalty": {**spec, "min_gold_gain": 0.4}})) == 1
    assert cal.load_raw(raw, {"kl_penalty": {**spec, "ppo": {"iterations": 60}}}) == []
    assert cal.task_done(cal.Task(("kl_penalty",), 0), cal.load_raw(raw, {"kl_penalty": spec}))


def test_a_shared_run_measured_again_is_counted_once(tmp_path):
    """kl_penalty's runs resumed, ptx's not: ptx's task (which shares kl_penalty's run) measures it again; each
    seed's run counts once, in the raw file read back and in the summary."""
    spec = {"points": 5, "seed": 1, "ppo": {"iterations": 70}, "min_gold_gain": 0.35, "max_malformed": 0.1}
    raw = tmp_path / "raw.jsonl"
    run = cal.Run("kl_penalty", 0, None, {"gold_gain": 0.45, "malformed": 0.0}, "", {})
    cal.append_raw(raw, [run, run, cal.Run("kl_penalty", 1, None, run.metrics, "", {})], {"kl_penalty": spec})
    assert [(r.test, r.index) for r in cal.load_raw(raw, {"kl_penalty": spec})] == [("kl_penalty", 0),
                                                                                  ("kl_penalty", 1)]
    assert len(cal.unique([run, run, cal.Run("ptx", 0, None, {}, "", {})])) == 2


def test_mistake_outcomes_are_merged_test_by_test_and_go_stale_with_the_code(tmp_path, monkeypatch):
    """A calibration of some mistakes or tests keeps what the file knows of the others (nothing lost); an entry
    counts only while the e2e code (the fingerprint) and the mistake's own code (its source) are today's."""
    monkeypatch.setattr(mistake_outcomes, "DATA_FILE", tmp_path / "e2e_mistakes.json")
    monkeypatch.setattr(mistake_outcomes, "fingerprint", lambda: "today")
    entry = "gae.forward_recursion"  # gae: kl_penalty, blind_spot and ptx train with it
    mistake_outcomes.merge({entry: {"kl_penalty": 1.0, "blind_spot": 0.5}}, seeds=3)
    assert entry not in mistake_outcomes.current() and entry in mistake_outcomes.stale()  # ptx never ran
    mistake_outcomes.merge({entry: {"ptx": 1.0}}, seeds=3)
    assert mistake_outcomes.current()[entry] == ["kl_penalty", "ptx"]  # blind_spot failed on 1 seed of 2 only
    mistake_outcomes.merge({"kl.k1_abs": {"kl_penalty": 0.0, "blind_spot": 0.0, "ptx": 0.0}}, seeds=3)
    assert mistake_outcomes.current() == {entry: ["kl_penalty", "ptx"], "kl.k1_abs": []}
    mistake_outcomes.merge({entry: {"ptx": 0.0, "kl_penalty": 1.0, "blind_spot": 1.0}}, seeds=1)  # another standard
    assert mistake_outcomes.current()[entry] == ["blind_spot", "kl_penalty"]
    monkeypatch.setattr(mistake_outcomes, "source_of", lambda e: "edited" if e.id == entry else "x")
    assert entry in mistake_outcomes.stale()
    monkeypatch.setattr(mistake_outcomes, "fingerprint", lambda: "the e2e code changed")
    assert mistake_outcomes.current() == {} and len(mistake_outcomes.stale()) == len(mistake_outcomes.tracked())
