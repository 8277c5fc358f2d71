"""`new-lab` writes a working lab from a reference file (autograder/lab/new_lab.py), and docs/new-lab.md's tutorial runs
as written (slow tier): its `bash` blocks, in order, from an empty folder."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from autograder.lab import config
from autograder.lab.new_lab import TEMPLATE, write_lab
from autograder.lab.paths import ROOT

TUTORIAL = ROOT / "docs" / "new-lab.md"


def new_lab(tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "autograder", "new-lab", *args], capture_output=True, text=True,
                          timeout=300, cwd=tmp_path)


def test_the_template_makes_a_lab_whose_grading_yaml_holds_only_what_it_decides(tmp_path):
    written = write_lab(tmp_path / "demo", TEMPLATE, "lab.py")
    assert len(written) == 3 and all((tmp_path / "demo" / name).is_file() for name in written)
    cfg = config.load(tmp_path / "demo" / "grading.yaml")
    assert cfg.contract["masked_mean"].returns == "scalar" and cfg.contract["scale"].returns == "like x"
    assert cfg.contract["masked_mean"].domain == {"x": "tensor B T", "mask": "mask B T"}
    assert cfg.contract["scale"].domain == {"x": "tensor B T", "factor": "float 0.5..4"}
    assert set(cfg.tests) == {f"{f}.{t}" for f in ("masked_mean", "scale")
                              for t in ("known_values", "matches_reference", f"{f}_dtype", f"{f}_grad_x")}
    assert cfg.contract["masked_mean"].differentiable == ("x",) and sum(t.points for t in cfg.tests.values()) == 30
    raw = (tmp_path / "demo" / "grading.yaml").read_text()
    assert not re.search(r"^(hypothesis|limits|calibration|batch):", raw, re.M)  # the engine's defaults apply
    example = cfg.contract["masked_mean"].examples[0]  # a worked example that tells the reference from a blind answer
    assert set(example) == {"x", "mask", "expect"} and 0 in sum(example["mask"], []) and example["expect"] not in (0, 1)
    starter = (tmp_path / "demo" / "assignment" / "lab.py").read_text()
    assert "NotImplementedError" in starter and "mask.sum()" not in starter


def test_the_domain_comes_from_types_and_docstrings(tmp_path):
    reference = tmp_path / "ret.py"
    reference.write_text('import torch\n\n\ndef ret(r: torch.Tensor, done: torch.Tensor, gamma: float, k: int = 2,\n'
                         '        logp: torch.Tensor = None):\n'
                         '    """r, logp: (B, T)\n    done: (B, T) in {0, 1}\n    gamma: in 0.8..0.99\n'
                         '    logp: in -40..0\n    """\n'
                         '    return (r * (1 - done)).sum(-1) * gamma * k + logp.sum(-1)\n')
    write_lab(tmp_path / "lab", reference.read_text(), "ret.py")
    spec = config.load(tmp_path / "lab" / "grading.yaml").contract["ret"]
    assert spec.domain == {"r": "tensor B T", "done": "mask B T", "gamma": "float 0.8..0.99", "k": "int 1..8",
                           "logp": "tensor B T in -40..0"}
    assert spec.differentiable == ("r", "logp")
    assert spec.returns == "rows of r"


@pytest.mark.parametrize("source, says", [
    ("def f(x):\n    return x\n", r"f\(x\): give it a type hint"),
    ("import torch\n\n\ndef f(x: torch.Tensor) -> float:\n    return 1.0\n", r"f returns float"),
    ("X = 1\n", r"defines no function"),
])
def test_a_reference_new_lab_cannot_read_is_one_line_and_exit_2(tmp_path, source, says):
    (tmp_path / "ref.py").write_text(source)
    done = new_lab(tmp_path, "lab", "--from", "ref.py")
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 2 and len(lines) == 1 and lines[0].startswith("error: new-lab: "), done.stderr
    assert re.search(says, lines[0]), lines[0]
    assert not (tmp_path / "lab" / "grading.yaml").exists()


def test_new_lab_never_writes_into_a_folder_that_holds_files(tmp_path):
    (tmp_path / "lab").mkdir()
    (tmp_path / "lab" / "notes.txt").write_text("mine")
    done = new_lab(tmp_path, "lab")
    assert done.returncode == 2 and "is not empty" in done.stderr
    assert [p.name for p in (tmp_path / "lab").iterdir()] == ["notes.txt"]


def tutorial_script() -> str:
    return "set -euo pipefail\n" + "\n".join(re.findall(r"```bash\n(.*?)```", TUTORIAL.read_text(), re.S))


@pytest.mark.slow
def test_the_tutorial_runs_as_written(tmp_path):
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    done = subprocess.run(["bash", "-c", tutorial_script()], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=1800)
    assert done.returncode == 0, (done.stdout + done.stderr)[-4000:]
    out = tmp_path / "course" / "out"

    def score(name: str) -> float:
        return json.loads((out / name / "results.json").read_text())["score"]
    assert (score("reference"), score("starter")) == (30.0, 0.0)
    assert "every expectation holds" in done.stdout
    assert "derived.zeros" in done.stdout and "contract mutant" in done.stdout  # validate's derived nulls, mutants
    assert re.search(r"discounted_returns +discounted_returns.matches_reference +(\d+)/\1 \(100%\)", done.stdout)
    assert {"student.zip", "autograder.zip", "nbgrader.zip"} <= {p.name for p in (out / "release").iterdir()}
