"""What an author can get wrong in a lab folder stops every command before any work: one `error:` line naming the
file (and line), exit 2 (autograder/lab/lab_problems.py, autograder/lab/config.py). One test per mistake, each on a copy
of
the toy lab, through the command an author would run."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from autograder.lab.paths import ROOT

TOYLAB = ROOT / "tests" / "toylab"


def lab_copy(tmp_path: Path) -> Path:
    lab = tmp_path / "lab"
    shutil.copytree(TOYLAB, lab, ignore=shutil.ignore_patterns("__pycache__"))
    return lab


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text, old
    path.write_text(text.replace(old, new, 1))


def run(lab: Path, *command: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "autograder", "--lab", str(lab), *command], capture_output=True,
                          text=True, timeout=600, cwd=ROOT)


def broken_yaml(lab: Path) -> None:
    (lab / "grading.yaml").write_text((lab / "grading.yaml").read_text() + "\ntests: [\n")


def unknown_key(lab: Path) -> None:
    edit(lab / "grading.yaml", "hypothesis: {max_examples: 10}", "hypothesis: {max_exampels: 10}")


def hooks_register_nothing(lab: Path) -> None:
    (lab / "grading" / "lab.py").write_text('"""hooks, forgotten"""\n')


def check_not_in_yaml(lab: Path) -> None:  # a check the lab writes itself
    (lab / "grading" / "checks" / "hidden").mkdir(parents=True, exist_ok=True)
    (lab / "grading" / "checks" / "hidden" / "extra.py").write_text(
        "from autograder.checks import check\n\n\n@check('scale.extra', 'an extra check', functions=('scale',))\n"
        "def extra(ctx):\n    pass\n")


def declared_check_not_in_yaml(lab: Path) -> None:  # the differential check a declared domain derives
    edit(lab / "grading.yaml", "  scale.matches_reference: {points: 4}\n", "")


def example_without_expect(lab: Path) -> None:
    edit(lab / "grading.yaml", ", expect: [3, -6, 1.5]", "")


def domain_missing_without_hooks(lab: Path) -> None:  # no grading/lab.py: probe and twins come from the domain
    edit(lab / "grading.yaml", ", domain: {x: tensor B T, factor: float 0.5..8}", "")
    edit(lab / "grading.yaml", "  scale.matches_reference: {points: 4}\n", "")


def expect_grad_of_a_tensor(lab: Path) -> None:  # scale returns a tensor: no gradient of a scalar to compare
    edit(lab / "grading.yaml", 'expect: [3, -6, 1.5], why', 'expect: [3, -6, 1.5], expect_grad: {x: [3, 3, 3]}, why')


def expect_grad_not_a_parameter(lab: Path) -> None:
    edit(lab / "grading.yaml", "expect: 2,", "expect: 2, expect_grad: {y: [[1, 1, 0], [1, 0, 0]]},")


def derived_test_not_in_yaml(lab: Path) -> None:
    edit(lab / "grading.yaml", "  scale.scale_dtype:     {points: 1}\n", "")


def not_a_parameter_differentiable(lab: Path) -> None:
    edit(lab / "grading.yaml", "differentiable: [x]", "differentiable: [y]")


def yaml_entry_without_check(lab: Path) -> None:
    edit(lab / "grading.yaml", "  scale.matches_reference: {points: 4}\n",
         "  scale.matches_reference: {points: 4}\n  scale.typo_check: {points: 1}\n")


def own_hooks(lab: Path, twin: str) -> None:
    """grading/lab.py with the lab's own hooks: no confirmation inputs, `twin` (Python, or None), hand-made probes."""
    (lab / "grading" / "lab.py").write_text(
        "import types\n\nimport torch\n\nfrom autograder.judge import diagnosis\n"
        "from autograder.lab import registry\nfrom autograder.checks import examples\n"
        "\nfrom . import e2e_tests  # noqa: F401\n\nregistry.register_lab(registry.Lab(\n"
        "    name='toylab', make_parts=lambda functions: types.SimpleNamespace(**functions),\n"
        "    probe_inputs=lambda: {'masked_mean': (torch.ones(1, 2), torch.ones(1, 2)),\n"
        "                          'scale': (torch.ones(2), 2.0)},\n"
        f"    diagnose=diagnosis.diagnose, plot=lambda t, h, m: [], twin={twin},\n"
        "    data_files=(registry.DataFile(examples.DATA_FILE, examples.is_current, examples.write),)))\n")


def undeclared(lab: Path, function: str, part: str, domain: str) -> None:
    """`function` declares no domain (and so derives no differential check)."""
    edit(lab / "grading.yaml", f"domain: {domain},", "")
    edit(lab / "grading.yaml", f"  {part}.matches_reference:", f"  # {part}.matches_reference:")


def hints_never_confirmed(lab: Path) -> None:  # a function without a domain, and hooks that give no confirmation inputs
    undeclared(lab, "masked_mean", "mean", "{x: tensor B T, mask: mask B T}")
    own_hooks(lab, "lambda function, args, kwargs, valid, position: (args, kwargs)")


def twin_missing(lab: Path) -> None:  # a function without a domain, and hooks that give no twin to redraw its inputs
    undeclared(lab, "scale", "scale", "{x: tensor B T, factor: float 0.5..8}")
    own_hooks(lab, "None")


def stale_data(lab: Path) -> None:  # the mistakes' e2e outcomes no longer match the e2e tests' code
    path = lab / "grading" / "e2e_tests.py"
    path.write_text(path.read_text() + "\n\ndef _edited():\n    return 1\n")


def world_file_missing(lab: Path) -> None:
    edit(lab / "grading.yaml", "world: [toyworld.py]", "world: [toyworld.py, ../other/assignment/helpers.py]")


def world_name_twice(lab: Path) -> None:
    shared = lab.parent / "other" / "assignment" / "toyworld.py"
    shared.parent.mkdir(parents=True)
    shared.write_text((lab / "assignment" / "toyworld.py").read_text())
    edit(lab / "grading.yaml", "world: [toyworld.py]", "world: [toyworld.py, ../other/assignment/toyworld.py]")


def stale_shared_copy(lab: Path) -> None:  # the lab names another lab's file and still holds an old copy of it
    shared = lab.parent / "other" / "assignment" / "helpers.py"
    shared.parent.mkdir(parents=True)
    shared.write_text("SCALE = 2\n")
    (lab / "assignment" / "helpers.py").write_text("SCALE = 1\n")
    edit(lab / "grading.yaml", "world: [toyworld.py]", "world: [toyworld.py, ../other/assignment/helpers.py]")


@pytest.mark.parametrize("mistake, command, names", [
    (broken_yaml, ("grade", "solutions/toy.py"), r"grading.yaml:\d+: not valid YAML"),
    (unknown_key, ("validate",), r"grading.yaml:\d+: hypothesis.max_exampels: unknown key"),
    (hooks_register_nothing, ("refresh", "--check"), r"grading/lab.py: it never calls registry.register_lab"),
    (check_not_in_yaml, ("grade", "solutions/toy.py"),
     r"grading/checks/hidden/extra.py:\d+: check scale.extra has no entry in .*grading.yaml:\d+"),
    (declared_check_not_in_yaml, ("grade", "solutions/toy.py"), r"grading.yaml:\d+: contract.scale.domain derives the "
                                                                r"test scale.matches_reference .*give it its points"),
    (example_without_expect, ("grade", "solutions/toy.py"),
     r"grading.yaml:\d+: contract.scale.examples: example 1: missing expect"),
    (domain_missing_without_hooks, ("grade", "solutions/toy.py"),
     r"grading.yaml:\d+: contract.scale declares no `domain` \(a lab without grading/lab.py"),
    (expect_grad_of_a_tensor, ("grade", "solutions/toy.py"),
     r"grading.yaml:\d+: contract.scale.examples: example 1: expect_grad: .* for a scalar answer only"),
    (expect_grad_not_a_parameter, ("grade", "solutions/toy.py"),
     r"grading.yaml:\d+: contract.masked_mean.examples: example 1: expect_grad: y is not a parameter"),
    (derived_test_not_in_yaml, ("grade", "solutions/toy.py"),
     r"grading.yaml:\d+: contract.scale derives the test scale.scale_dtype .*give it its points in .*grading.yaml:\d+"),
    (not_a_parameter_differentiable, ("grade", "solutions/toy.py"),
     r"grading.yaml:\d+: contract.masked_mean.differentiable: 'y' is not one of its parameters"),
    (yaml_entry_without_check, ("calibrate", "--no-write"), r"grading.yaml:\d+: tests.scale.typo_check: no check"),
    (hints_never_confirmed, ("validate",), r"grading/lab.py: the bank's mistake mean.plain_mean has a hint"),
    (twin_missing, ("grade", "solutions/toy.py"), r"grading/lab.py: contract.scale declares no `domain` and the lab "
                                                  r"gives no twin"),
    (stale_data, ("release",), r"release: grading/data/e2e_mistakes.json is stale"),
    (world_file_missing, ("grade", "solutions/toy.py"), r"grading.yaml:\d+: world: ../other/assignment/helpers.py "
                                                        r"is not a file"),
    (world_name_twice, ("validate",), r"grading.yaml:\d+: world: two files named toyworld.py"),
    (stale_shared_copy, ("grade", "solutions/toy.py"), r"assignment/helpers.py: a stale copy of the shared world"),
])
def test_an_authors_mistake_is_one_line_and_exit_2(tmp_path, mistake, command, names):
    lab = lab_copy(tmp_path)
    mistake(lab)
    args = [str(lab / a) if a.endswith(".py") else a for a in command]
    if command[0] in ("grade", "release"):
        args += ["--out", str(tmp_path / "out")]
    done = run(lab, *args)
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 2 and len(lines) == 1 and lines[0].startswith("error: "), done.stderr[-2000:]
    assert re.search(names, lines[0]), lines[0]
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())  # before any work


def test_a_grade_computes_no_confirmation_inputs(tmp_path):
    """Hints nothing could confirm change no score: `grade` leaves that check to the commands that build or validate
    a lab (it would compute every function's confirmation inputs, ~1 s of CPU a grade), and still grades."""
    lab = lab_copy(tmp_path)
    hints_never_confirmed(lab)
    done = run(lab, "grade", str(lab / "solutions" / "toy.py"), "--out", str(tmp_path / "out"), "--quiet")
    assert done.returncode == 0, done.stderr[-2000:]
    assert json.loads((tmp_path / "out" / "results.json").read_text())["score"] > 0
