"""Lab 13's shipped reference runs (labs/lab13/grading/data/replays.bin, the engine's autograder/replay/): current,
recorded with the flow its training has, reused for a correct variant and not for a mistake; a grade of the
reference replays every run."""

from __future__ import annotations

import json

import pytest

from tests.test_lab13 import CFG, REFERENCE, in_lab13, run

# Lab 13's training passes answers on so (training.py), each as it is: (the call and argument fed) <- (the answering
# function, its answer's tensor, rows of it?)
LAB13_FLOW = {
    "grpo": {("grpo_policy_loss", 3): ("group_advantages", 0, True)},   # advantages[rows]
    "dpo_loss": {("dpo_loss", 0): ("sequence_logprob", 0, False), ("dpo_loss", 1): ("sequence_logprob", 0, False),
                 ("dpo_loss", 2): ("sequence_logprob", 0, True), ("dpo_loss", 3): ("sequence_logprob", 0, True),
                 ("sequence_logprob", "cotangent"): ("dpo_loss", None, False)},  # a gradient of the loss
    "ipo_loss": {},  # the reference's sequence_logprob runs in the judge: ipo_loss's inputs come from no answer
}

LINKS = """
import json
from autograder.lab import registry
registry.lab()
from autograder.replay import shipped
out = {}
for key, run in shipped.shipped_runs().items():
    calls = list(run.calls())
    out[key] = sorted({json.dumps([c["fn"], link["to"], calls[link["call"]]["fn"], link["piece"], link["via"],
                                   link["rows"] is not None]) for c in calls for link in c["flow"]})
print(json.dumps(out))
"""


def test_the_shipped_runs_are_current():
    done = run("refresh", "--check")
    assert done.returncode == 0, done.stdout + done.stderr


def test_the_recorded_runs_show_lab13s_flow():
    found = json.loads(in_lab13(LINKS))
    assert len(found) == 4  # grpo_accuracy's, drgrpo_accuracy's, the DPO run (two tests) and the IPO run
    for key, links in found.items():
        kind = key.split("'")[1]
        expected = LAB13_FLOW[kind]
        got = {(fn, to): (source, piece if fn != "sequence_logprob" else None, rows)
               for fn, to, source, piece, via, rows in map(json.loads, links)}
        assert got == expected, key
        assert all(json.loads(link)[4] == "" for link in links)  # no transform: each passed on as it is


MATCHES = """
import sys, tempfile
from pathlib import Path
from autograder.lab import bank, config, registry
registry.lab()
from autograder.sandbox.remote import RemoteSubmission
from autograder.replay import runs, shipped
cfg = config.load()
grpo = next(run for key, run in shipped.shipped_runs().items() if "token_mean" in key)
entries = {e.id: e for e in bank.load_all()}
for name in ("grpo_loss.where_masked", "grpo_loss.no_clipping", "group_adv.leave_one_out"):
    path = Path(tempfile.mkdtemp()) / "posttrain.py"
    path.write_text(bank.submission_source(entries[name]))
    sub = RemoteSubmission(path, cfg.limits)
    try:
        print(name, runs.answers_match(grpo, sub.parts(("group_advantages", "grpo_policy_loss")),
                                       cfg.calibration.replay_rtol, cfg.calibration.replay_atol))
    finally:
        sub.close()
"""


def test_a_correct_variant_replays_the_grpo_run_and_a_mistake_does_not():
    assert in_lab13(MATCHES).split() == ["grpo_loss.where_masked", "True", "grpo_loss.no_clipping", "False",
                                          "group_adv.leave_one_out", "False"]


@pytest.mark.slow
def test_a_grade_of_the_reference_replays_every_run(tmp_path):
    done = run("grade", str(REFERENCE), "--only", "e2e", "--out", str(tmp_path))
    assert done.returncode == 0, done.stderr[-3000:]
    results = json.loads((tmp_path / "results.json").read_text())
    e2e = [t for t in results["tests"] if "recorded run" in t.get("output", "")]
    assert results["score"] == sum(spec.points for spec in CFG.e2e.values())
    assert len(e2e) == len(CFG.e2e), [t.get("output", "")[:200] for t in results["tests"]]
