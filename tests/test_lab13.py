"""Lab 13 (labs/lab13/, GRPO and DPO) graded by the engine through the commands a user runs
(`python -m autograder --lab labs/lab13 ...`), in fresh processes: its reference gets full marks, its starter
nothing, its self-check runs its public checks, and `validate --e2e` holds (nulls 0, mistakes caught in their
part, variants full). The fast tests check the folder's declarations against each other."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from autograder.lab import config
from autograder.lab.paths import ROOT
from autograder.lab.starter import strip_solutions
from autograder.sandbox.child import worker

LAB13 = ROOT / "labs" / "lab13"
REFERENCE = LAB13 / "solutions" / "posttrain.py"
CFG = config.load(LAB13 / "grading.yaml")


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "autograder", "--lab", str(LAB13), *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=1800)


def in_lab13(code: str) -> str:
    """Run `code` in a process working on Lab 13 (AUTOGRADER_LAB); its stdout."""
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=300,
                          env={**__import__("os").environ, "AUTOGRADER_LAB": str(LAB13)})
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


def score(out: Path) -> float:
    return json.loads((out / "results.json").read_text())["score"]


def test_the_world_is_lab12s_files_not_copies():
    """One copy of a shared world: Lab 13 names Lab 12's files; its own folder holds only its own training.py."""
    shared = {"tinylm.py", "lab_helpers.py", "sft.pt"}
    for name in shared:
        assert f"../../assignment/{name}" in CFG.world
        assert not (LAB13 / "assignment" / name).exists(), name
    assert (LAB13 / "assignment" / "training.py").is_file()


def test_the_starter_is_generated_from_the_reference():
    assert (LAB13 / "assignment" / CFG.submission).read_text() == strip_solutions(REFERENCE.read_text())


def test_the_contract_is_the_references_signatures():
    tree = ast.parse(REFERENCE.read_text())
    defined = {n.name: [a.arg for a in n.args.args] for n in tree.body if isinstance(n, ast.FunctionDef)}
    assert [f for f in defined if f in CFG.contract] == list(CFG.contract)  # the starter's order
    for name, fn in CFG.contract.items():
        assert defined[name] == list(fn.parameters), name


def test_rows_of_an_argument_is_one_value_per_row():
    seq = CFG.contract["sequence_logprob"]
    assert seq.returns == "rows of token_logp" and seq.shapes((torch.zeros(3, 5), torch.ones(3, 5))) == (3,)
    assert CFG.contract["group_advantages"].shapes((torch.zeros(8), 4)) == (8,)


def test_a_returns_item_must_name_a_parameter(tmp_path):
    text = (LAB13 / "grading.yaml").read_text().replace("returns: rows of token_logp", "returns: rows of logits")
    (tmp_path / "grading.yaml").write_text(text)
    with pytest.raises(config.ConfigError, match='"rows of logits": expected "scalar", "like PARAMETER" or '):
        config.load(tmp_path / "grading.yaml")


def test_the_child_gives_a_vector_jacobian_product_for_a_cotangent():
    """A value of more than one element: the gradient of cotangent . value (autograder/sandbox/remote.py's backward)."""
    import types
    module = types.SimpleNamespace(rows=lambda x: (x ** 2).sum(1))
    x = torch.tensor([[1.0, 2.0], [3.0, 4.0]])
    reply = worker.call(module, {"fn": "rows", "args": [x], "kwargs": {}, "grad": [0],
                                 "cotangent": torch.tensor([1.0, -2.0])})
    assert torch.equal(reply["grads"][0], torch.tensor([[2.0, 4.0], [-12.0, -16.0]]))
    no_cotangent = worker.call(module, {"fn": "rows", "args": [x], "kwargs": {}, "grad": [0]})
    assert no_cotangent["grads"] == [None]  # only a one-element answer has a gradient of its own


def test_the_lab_registers_every_configured_test_and_its_bank():
    out = in_lab13(
        "from autograder import checks\nfrom autograder.judge import e2e\n"
        "from autograder.lab import bank, config, registry\n"
        "cfg = config.current(); e2e.load_all(); e2e.check_config(cfg)\n"
        "assert set(checks.load_all()) == {t for t in cfg.tests if not t.startswith('e2e.')}\n"
        "entries = bank.load_all()\n"
        "assert all(e.hint for e in entries if e.is_mistake) and {e.part for e in entries} == set(cfg.parts)\n"
        "assert sum(1 for e in entries if e.is_mistake and e.source) >= 10\n"
        "lab = registry.lab(); print(lab.name, len(entries))\n")
    assert out.split()[0] == "lab13"


def test_a_twin_keeps_the_shapes_mask_and_settings_and_draws_new_values():
    """Every function declares its domain, so its twins are derived (autograder/checks/lab_inputs.py): the lab gives
    none."""
    out = in_lab13(
        "import torch\nfrom autograder.lab import registry\nfrom autograder.checks import lab_inputs\n"
        "assert registry.lab().twin is None\n"
        "x, mask = torch.zeros(2, 3, dtype=torch.float64), torch.tensor([[1.0, 1, 0], [1, 0, 0]])\n"
        "args = (x, x, x, torch.zeros(2, dtype=torch.float64), mask)\n"
        "fresh, kw = lab_inputs.fresh_twin('grpo_policy_loss', args, {'beta': 0.1}, True, 0)\n"
        "assert [a.shape for a in fresh] == [a.shape for a in args] and torch.equal(fresh[4], mask)\n"
        "assert kw == {'beta': 0.1} and all(a.dtype == torch.float64 for a in fresh[:4])\n"
        "assert not torch.equal(fresh[0], x) and (fresh[1] <= 0).all() and (fresh[1] >= -40).all()\n"
        "print('ok')\n")
    assert out.strip() == "ok"


def test_the_self_check_runs_the_public_checks(tmp_path):
    done = run("grade", str(REFERENCE), "--out", str(tmp_path / "self"), "--self-check")
    assert done.returncode == 0, done.stderr[-3000:]
    results = json.loads((tmp_path / "self" / "results.json").read_text())
    public = {t for t, spec in CFG.tests.items() if spec.inputs_visibility == "visible" and not t.startswith("e2e.")}
    assert {t["name"].split(":")[0] for t in results["tests"]} == public
    assert results["score"] == sum(CFG.tests[t].points for t in public)


@pytest.mark.slow
def test_the_reference_gets_full_marks_and_the_starter_nothing(tmp_path):
    ref = run("grade", str(REFERENCE), "--out", str(tmp_path / "ref"))
    assert ref.returncode == 0, ref.stderr[-3000:]
    total = sum(spec.points for spec in CFG.tests.values())
    assert score(tmp_path / "ref") == total, ref.stdout
    assert f"{CFG.title}: grade {total:.1f} / {total:g}" in (tmp_path / "ref" / "report.md").read_text()
    starter = run("grade", str(LAB13 / "assignment" / "posttrain.py"), "--out", str(tmp_path / "starter"))
    assert starter.returncode == 0, starter.stderr[-3000:]
    assert score(tmp_path / "starter") == 0


def test_the_in_process_stand_in_gives_the_same_vector_jacobian_product():
    import types

    from autograder.checks.local import LocalSubmission
    x = torch.tensor([[1.0, 2.0], [3.0, 4.0]])
    sub = LocalSubmission(types.SimpleNamespace(rows=lambda x: (x ** 2).sum(1)))
    _, grads = sub.call("rows", x, grad=(0,), cotangent=torch.tensor([1.0, -2.0]))
    assert torch.equal(grads[0], torch.tensor([[2.0, 4.0], [-12.0, -16.0]]))


def test_the_shipped_data_files_are_current():
    """`--lab labs/lab13 refresh --check`: its drawn and chosen examples match its checks' code (it writes nothing)."""
    done = run("refresh", "--check")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "grading/checks/hidden/examples.json: current" in done.stdout


def test_the_shipped_examples_are_what_the_checks_draw_and_choose():
    """Every hidden property check runs on shipped examples (nothing drawn in a grade); they equal a fresh draw,
    each distinct draw once, and the chosen examples are what checks/lab_inputs.py builds (chosen.py's; for the
    functions whose domain is declared what checks/declared.py derives, then the training's batches), each once,
    none a draw's repeat."""
    out = in_lab13(
        "import json\n"
        "from autograder import checks\nfrom autograder.lab import config\n"
        "from autograder.checks import examples, lab_inputs\n"
        "from autograder.lab.reference import load_reference\n"
        "from autograder.checks.local import local_context\n"
        "hidden = [c for c in checks.load_all().values() if '.checks.hidden.' in c.run.__module__\n"
        "          or c.run.__module__ == 'autograder.checks.differential']\n"
        "ctx = local_context(load_reference(), load_reference())\n"
        "for c in hidden: c.run(ctx)\n"
        "assert examples.DRAWN == {}, list(examples.DRAWN)\n"
        "shipped = examples.read(examples.DATA_FILE)\n"
        "examples.SHIPPED = {}\n"
        "for c in hidden: c.run(ctx)\n"
        "code = lambda listed: [json.dumps(examples.encode(e)) for e in listed]\n"
        "assert set(examples.DRAWN) == set(shipped)\n"
        "for key, listed in examples.DRAWN.items():\n"
        "    assert code(listed) == code(shipped[key]), key\n"
        "    assert len(set(code(listed))) == len(listed), key\n"
        "drawn = {e for key, listed in shipped.items() if not key.startswith('chosen ') for e in code(listed)}\n"
        "for function in config.current().contract:\n"
        "    built, mine = code(lab_inputs.chosen_inputs(function)), code(shipped[examples.chosen_key(function)])\n"
        "    assert len(set(mine)) == len(mine) and not set(mine) & drawn, function\n"
        "    assert [e for e in built if e in mine] == mine, function  # in the built order\n"
        "    assert set(built) - set(mine) <= drawn, function  # only a repeat of a draw is left out\n"
        "print(len(shipped))\n")
    assert int(out) >= 5 + 4  # the chosen examples of five functions, the draws of four strategies


def test_each_differential_check_reaches_every_possible_pair_of_levels():
    """The draws and the chosen examples together reach every possible pair of each function's factors' levels
    (those derived from the declared domains: every function declares one), as `validate` measures and
    asserts: every contract function's."""
    out = in_lab13(
        "from autograder.lab import config\n"
        "from autograder.checks.differential import lab_domains\n"
        "from autograder.validity import coverage\n"
        "domains = lab_domains()\n"
        "pairs = coverage.pairwise(coverage.record(check_ids=list(domains.DIFFERENTIAL.values())))\n"
        "assert set(pairs) == set(domains.DIFFERENTIAL) == set(config.current().contract)\n"
        "assert coverage.holes(pairs) == [], coverage.holes(pairs)[:5]\n"
        "print(min(len(possible) for _, possible in pairs.values()))\n")
    assert int(out) >= 20


def test_the_training_regime_is_among_the_chosen_examples():
    out = in_lab13(
        "import torch\n"
        "from autograder.lab import registry\n"
        "from autograder.checks.factors import rows_class\n"
        "chosen = registry.lab_module('checks.hidden.chosen')\n"
        "(rewards, G, normalize, eps), (same, _, plain, _) = chosen.examples('group_advantages')[-2:]\n"
        "assert rewards.dtype == torch.float32 and rewards.shape == (128,) and G == 8 and normalize and not plain\n"
        "assert torch.equal(rewards, same) and set(rewards.tolist()) == {0.0, 1.0} and eps == 1e-6\n"
        "grpo = chosen.examples('grpo_policy_loss')\n"
        "assert [(a[6], a[7]) for a in grpo] == [(0.04, 'token_mean'), (0.0, 'token_sum_norm')]\n"
        "args = grpo[0]\n"
        "assert args[0].dtype == torch.float32 and args[4].shape == (64, 4) and args[3].shape == (64,)\n"
        "assert rows_class(args[4]).startswith('ragged')\n"
        "from autograder.checks import lab_inputs\n"
        "derived = lab_inputs.chosen_inputs('dpo_loss')\n"
        "*four, beta = derived[-2]  # after the derived ones: the derived check's arguments\n"
        "regime = chosen.examples('dpo_loss')\n"
        "assert len(derived) > 2 and all(a is b for a, b in zip(derived[-2:], regime, strict=True))\n"
        "assert beta == 0.1 and four[0].shape == (64,)\n"
        "assert torch.equal(four[0], four[2]) and torch.equal(four[1], four[3])  # the first step: policy = reference\n"
        "print('ok')\n")
    assert out.strip() == "ok"


def test_the_confirmation_inputs_separate_every_mistake_of_the_bank():
    """A hint is named only when the confirmation inputs tell its mistake from the reference and from every other
    candidate (autograder/judge/diagnosis.py): they do for each of Lab 13's mistakes, seen through its own function, and
    they are not degenerate (T >= 2, full and ragged rows, beta > 0, both normalisations, every aggregation)."""
    out = in_lab13(
        "from autograder.judge import diagnosis\nfrom autograder.lab import bank, config, registry\n"
        "from autograder.checks.factors import rows_class\n"
        "from autograder.lab.reference import load_reference\n"
        "from autograder.lab.entries import contract_with\n"
        "from autograder.checks import lab_inputs\n"
        "lab, ref = registry.lab(), load_reference()\n"
        "for function, spec in config.current().contract.items():\n"
        "    calls, correct = lab_inputs.confirmation_inputs(function), getattr(ref, function)\n"
        "    answers = {e.name: [diagnosis.answer_of(contract_with(e, ref)[function], a, k) for a, k in calls]\n"
        "               for e in bank.mistakes_of_part(spec.part)}\n"
        "    answers['(the reference)'] = [diagnosis.answer_of(correct, a, k) for a, k in calls]\n"
        "    for e in bank.mistakes_of_part(spec.part):\n"
        "        if e.function == function:\n"
        "            alike = [n for n, got in answers.items() if n != e.name\n"
        "                     and diagnosis.agree(answers[e.name], got, calls, correct)]\n"
        "            assert not alike, (e.name, alike)\n"
        "grpo = lab_inputs.confirmation_inputs('grpo_policy_loss')\n"
        "assert any(a[0].shape[1] >= 2 for a, _ in grpo) and {a[6] > 0 for a, _ in grpo} == {True, False}\n"
        "assert {a[7] for a, _ in grpo} == {'token_mean', 'seq_mean_token_mean', 'token_sum_norm'}\n"
        "layouts = {rows_class(a[4]) for a, _ in grpo}\n"
        "assert {'one full row', 'ragged with a full row'} <= layouts\n"
        "assert {k['normalize_std'] for _, k in lab.confirmation_calls('group_advantages')} == {True, False}\n"
        "print('ok')\n")
    assert out.strip() == "ok"


def test_a_failed_check_names_its_mistake_only_when_it_is_in_the_bank():
    """In-process, as a grade diagnoses: a bank mistake failing its differential check is named; left out of the
    candidates (a mistake the diagnosis does not know), it gets no hint at all."""
    out = in_lab13(
        "import types\n"
        "from autograder import checks\nfrom autograder.judge import diagnosis\nfrom autograder.lab import bank\n"
        "from autograder.checks import CheckFailed\n"
        "from autograder.lab.reference import load_reference\n"
        "from autograder.sandbox.remote import SubmissionError\n"
        "from autograder.lab.entries import contract_with\n"
        "from autograder.checks.local import LocalSubmission, local_context\n"
        "ref = load_reference()\n"
        "for entry_id, check_id in (('group_adv.population_std', 'group_adv.matches_reference'),\n"
        "                           ('grpo_loss.always_seq_mean', 'grpo_loss.matches_reference'),\n"
        "                           ('dpo.log_of_sigmoid', 'dpo.dpo_loss_matches_reference')):\n"
        "    entry = next(e for e in bank.load_all() if e.id == entry_id)\n"
        "    module = types.SimpleNamespace(**contract_with(entry, ref))\n"
        "    sub = LocalSubmission(module)\n"
        "    def ask(args, kwargs):\n"
        "        try:\n"
        "            return sub.call(entry.function, *args, valid=False, **kwargs)[0]\n"
        "        except SubmissionError:\n"
        "            return None\n"
        "    try:\n"
        "        checks.load_all()[check_id].run(local_context(module, ref))\n"
        "        raise AssertionError(entry_id + ' passed ' + check_id)\n"
        "    except CheckFailed as failure:\n"
        "        named = diagnosis.diagnose(entry.part, failure, ref, ask)\n"
        "        assert named == f'{entry.hint} (looks like: {entry.name})', (entry_id, named)\n"
        "        assert diagnosis.diagnose(entry.part, failure, ref, ask, leave_out=entry.name) == ''\n"
        "print('ok')\n")
    assert out.strip() == "ok"


def test_every_plotted_metric_has_a_reference_band():
    """The report's plots draw each plotted metric against the reference's 10th-90th percentile per training step
    over the calibration's seeds (grading/data/reference_band.json, written by `calibrate`)."""
    out = in_lab13(
        "from autograder.judge import e2e\nfrom autograder.lab import config, registry\n"
        "from autograder.judge import plots as engine_plots\n"
        "plots = registry.lab_module('plots')\n"
        "cfg = config.current()\n"
        "for name, test in e2e.load_all().items():\n"
        "    band = engine_plots.reference_band(name)\n"
        "    spec = cfg.e2e[name]\n"
        "    steps = spec['grpo']['iterations'] if 'grpo' in spec else spec['dpo']['steps']\n"
        "    for metric in test.plotted:\n"
        "        lo, hi = band[metric]['lo'], band[metric]['hi']\n"
        "        assert len(lo) == len(hi) == steps and all(a <= b for a, b in zip(lo, hi)), (name, metric)\n"
        "    history = [{m: band[m]['lo'][i] for m in test.plotted} for i in range(steps)]\n"
        "    (title, png), = plots.e2e_plots(name, {'run': history}, test.plotted)\n"
        "    assert title.endswith('your run against the reference band') and png.startswith(b'<svg'), title\n"
        "print('ok')\n")
    assert out.strip() == "ok"
