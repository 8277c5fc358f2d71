"""grade-all --similarity on a small class with one copied pair: copydetect (the optional extra) finds it,
the starter's code counts for nothing, and the class report links both files. Grades are faked
(run._outcomes); the comparison is real."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from autograder.batch import run
from autograder.batch.run import grade_all
from autograder.lab.paths import REFERENCE, STARTER

pytest.importorskip("copydetect")

# bob's own work: the starter, with three functions written his way
BOB = STARTER.read_text() + '''

def bradley_terry_loss(r_better, r_worse):
    return torch.nn.functional.softplus(r_worse - r_better).mean()


def ranking_loss(rewards, ranking):
    losses = []
    n, k = rewards.shape
    rows = torch.arange(n)
    for i in range(k):
        for j in range(i + 1, k):
            losses.append(torch.nn.functional.softplus(rewards[rows, ranking[:, j]] - rewards[rows, ranking[:, i]]))
    return torch.cat(losses).mean()


def compute_gae(rewards, values, mask, gamma=1.0, lam=0.95):
    batch, steps = rewards.shape
    out = torch.zeros(batch, steps, dtype=rewards.dtype)
    running = torch.zeros(batch, dtype=rewards.dtype)
    for t in range(steps - 1, -1, -1):
        following = values[:, t + 1] * mask[:, t + 1] if t + 1 < steps else torch.zeros_like(running)
        running = (rewards[:, t] + gamma * following - values[:, t] + gamma * lam * running) * mask[:, t]
        out[:, t] = running
    return out, out + values
'''


def renamed(source: str) -> str:
    """alice's file as a copier hands it in: other names, other comments, the docstrings gone."""
    for old, new in (("advantages", "adv_buffer"), ("next_value", "v_next"), ("next_adv", "a_next"),
                     ("ordered", "sorted_r"), ("delta", "td"), ("ratio", "rho")):
        source = source.replace(old, new)
    source = re.sub(r'    """.*?"""\n', "", source, flags=re.S)
    return source.replace("# ", "# my note: ")


def fake_outcomes(todo, only, version, *rest):
    for sub, key in todo:
        status = "not_implemented" if sub.student == "carl" else "graded"
        yield {"student": sub.student, "key": key, "status": status, "reason": "", "score": 50.0, "max_score": 100.0,
               "parts": {}, "e2e": None, "tests": [], "files": {"report.html": "<p>report</p>"}, "seconds": 1.0,
               "worker_grader": version}


def test_the_copied_pair_comes_first_with_both_files(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(run, "_outcomes", fake_outcomes)
    subs, out = tmp_path / "class", tmp_path / "out"
    files = {"alice": REFERENCE.read_text(), "mallory": renamed(REFERENCE.read_text()), "bob": BOB,
             "carl": STARTER.read_text()}
    for student, text in files.items():
        (subs / student).mkdir(parents=True)
        (subs / student / "rlhf.py").write_text(text)
    grade_all(subs, out, similarity=True)
    found = json.loads((out / "_similarity" / "pairs.json").read_text())
    pairs = {(p["a"], p["b"]): p for p in found["pairs"]}
    assert found["compared"] == 3  # carl's starter is not compared: nothing of it counts
    top = found["pairs"][0]
    assert (top["a"], top["b"]) == ("alice", "mallory") and min(top["similarity_a"], top["similarity_b"]) > 0.75, top
    assert all(max(p["similarity_a"], p["similarity_b"]) < 0.3 for k, p in pairs.items() if k != ("alice", "mallory"))
    print("\n".join(f"{p['a']:>8} {p['b']:<8} {100 * p['similarity_a']:5.1f} % {100 * p['similarity_b']:5.1f} % "
                    f"{p['tokens']} tokens" for p in found["pairs"]))
    page = (out / top["page"]).read_text()
    assert '<section id="a">' in page and '<section id="b">' in page and "<mark>" in page
    assert set(re.findall(r"<(\w+)", page)) <= {"html", "head", "meta", "title", "style", "body", "h1", "h2", "p",
                                                "main", "section", "a", "pre", "mark"}  # the files' text is escaped
    html = (out / "class_report.html").read_text()
    assert f'href="{top["page"]}#a">alice\'s file</a>' in html and f'href="{top["page"]}#b">mallory' in html
    assert "3 submissions compared by copydetect" in html
    assert "similarity: 3 submissions compared; most similar: alice and mallory" in capsys.readouterr().err

    grade_all(subs, out)  # without --similarity the last pairs stay, and a changed file marks them stale
    assert "alice's file" in (out / "class_report.html").read_text()
    (subs / "bob" / "rlhf.py").write_text(BOB + "\n# more\n")
    grade_all(subs, out)
    assert "Since then 1 submission changed (bob): run with --similarity again." in \
        (out / "class_report.html").read_text()


def test_a_notebook_is_compared_by_its_code(tmp_path, monkeypatch):
    monkeypatch.setattr(run, "_outcomes", fake_outcomes)
    subs = tmp_path / "class"
    (subs / "alice").mkdir(parents=True)
    (subs / "alice" / "rlhf.py").write_text(REFERENCE.read_text())
    (subs / "nina").mkdir()
    cells = [{"cell_type": "code", "source": [part], "metadata": {}, "outputs": [], "execution_count": None}
             for part in REFERENCE.read_text().split("\n\n\n")]
    (subs / "nina" / "lab.ipynb").write_text(json.dumps({"cells": cells, "metadata": {}, "nbformat": 4,
                                                         "nbformat_minor": 5}))
    grade_all(subs, tmp_path / "out", similarity=True)
    (pair,) = json.loads((tmp_path / "out" / "_similarity" / "pairs.json").read_text())["pairs"]
    assert (pair["a"], pair["b"]) == ("alice", "nina") and pair["similarity_b"] > 0.9
    assert Path(tmp_path / "out" / pair["page"]).is_file()
