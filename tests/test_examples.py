"""The shipped examples of the property checks (autograder/checks/examples.py, Lab 12's
grading/checks/hidden/examples.json): current, the very
examples hypothesis draws (each once), and a check that runs on them finds exactly what the live hypothesis
run finds, for the reference, the correct variants and every mistake of the bank; a failure on a shipped or
chosen example is never lost, even when the live run passes."""

from __future__ import annotations

import json
import os
import types

import pytest
import torch

from autograder import checks
from autograder.checks import CheckFailed, examples
from autograder.checks.local import local_context
from autograder.checks.strategies import Ragged
from autograder.lab import bank, config, fingerprints
from autograder.lab.entries import contract_with
from autograder.lab.reference import load_reference
from autograder.sandbox.remote import FAILED_FOR_GOOD, SubmissionError, reasked
from lab12.checks.hidden import chosen
from lab12.checks.hidden.domains import DIFFERENTIAL

HIDDEN = [c for c in checks.load_all().values() if c.run.__module__.startswith("lab12.checks.hidden.")]
ENTRIES = bank.load_all()


def same(a, b, ulps: int = 0) -> bool:
    """Bit for bit: types, tensor dtypes, shapes and bytes, float signs; with `ulps`, floating-point tensors may
    differ by that many units in the last place (the rounding of another CPU)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, torch.Tensor):
        if a.dtype != b.dtype or a.shape != b.shape:
            return False
        if not ulps or a.dtype not in INTS:
            return a.numpy().tobytes() == b.numpy().tobytes()
        return bool(((a.view(INTS[a.dtype]) - b.view(INTS[b.dtype])).abs() <= ulps).all())
    if isinstance(a, Ragged):
        return same(a.tensors, b.tensors, ulps) and same(a.mask, b.mask, ulps)
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(same(x, y, ulps) for x, y in zip(a, b))
    if isinstance(a, float):
        return a.hex() == b.hex()
    return a == b


INTS = {torch.float32: torch.int32, torch.float64: torch.int64}


def finding(check: checks.Check, functions: dict, live: bool, monkeypatch) -> tuple:
    """What the check finds on these functions, run in-process: through the shipped examples, or live."""
    if live:
        monkeypatch.setattr(examples, "LIVE", True)
    try:
        check.run(local_context(types.SimpleNamespace(**functions), load_reference()))
        return ("passed",)
    except CheckFailed as failure:
        return ("failed", failure.message, failure.inputs, failure.expected, failure.got)
    except SubmissionError as exc:
        return ("error", exc.kind, str(exc))
    finally:
        monkeypatch.undo()


def test_the_shipped_file_is_current_and_covers_every_property_check():
    data = json.loads(examples.DATA_FILE.read_text())
    assert data["fingerprint"] == examples.fingerprint(), \
        "grading/checks/hidden/examples.json is stale: run `python -m autograder refresh`"
    examples.DRAWN.clear()
    reference = load_reference()
    for check in HIDDEN:
        check.run(local_context(reference, reference))
    assert examples.DRAWN == {}, f"drawn in the grade, not shipped: {list(examples.DRAWN)}"


def test_every_install_pins_the_hypothesis_the_shipped_examples_were_drawn_with():
    """The shipped draws are fingerprinted with hypothesis's version: the project's install (pyproject.toml) and the
    bundles' requirements pin the same exact versions, so a newer hypothesis on the index never stales them."""
    import re
    import sys

    import hypothesis

    from autograder.lab.paths import ROOT
    pins = {"pyproject.toml": (ROOT / "pyproject.toml").read_text(),
            "requirements.txt": (ROOT / "autograder" / "bundling" / "assets" / "requirements.txt").read_text()}
    found = {name: sorted(re.findall(r"hypothesis==([\d.]+);\s*python_version\s*([<>=]+)\s*[\"']?3\.11", text))
             for name, text in pins.items()}
    assert found["pyproject.toml"] == found["requirements.txt"] and len(found["pyproject.toml"]) == 2, found
    pinned = {op: version for version, op in found["pyproject.toml"]}
    wanted = pinned[">=" if sys.version_info >= (3, 11) else "<"]
    assert hypothesis.__version__ == wanted, f"installed hypothesis {hypothesis.__version__}, pinned {wanted}"


def test_the_shipped_examples_are_what_hypothesis_draws():
    """Bit for bit on a machine that rounds as the one that drew the file (fingerprints.numerics: a strategy may
    compute with torch, e.g. a log_softmax); elsewhere within 4 units in the last place."""
    shipped = examples.read(examples.DATA_FILE)
    ulps = 0 if examples.recorded_numerics() == fingerprints.numerics() else 4
    ctx = local_context(load_reference(), load_reference())
    drawn: dict = {}
    saved, examples.SHIPPED = examples.SHIPPED, {}
    examples.DRAWN.clear()
    try:
        for check in HIDDEN:
            check.run(ctx)
        drawn = dict(examples.DRAWN)
    finally:
        examples.SHIPPED = saved
        examples.DRAWN.clear()
    assert set(drawn) == set(shipped)
    for key in drawn:
        if key.startswith("chosen "):  # built, not drawn: equal to what chosen.py builds
            assert all(same(a, b) for a, b in zip(shipped[key], chosen.examples(key.split()[1]), strict=True)), key
            continue
        assert len(drawn[key]) == len(shipped[key]) <= ctx.hypothesis["max_examples"], key
        assert all(same(a, b, ulps) for a, b in zip(drawn[key], shipped[key])), f"{key[:80]}: the draws differ"
        encoded = [json.dumps(examples.encode(e)) for e in shipped[key]]
        assert len(set(encoded)) == len(encoded), f"{key[:80]}: an example is shipped twice"


def test_each_distinct_draw_is_listed_once_in_order():
    ctx = local_context(load_reference(), load_reference())
    strategy = examples.st.integers(0, 1000).map(lambda x: x % 3)  # different draws, equal examples
    seen: list = []
    examples.tools.for_all(ctx, strategy, seen.append)
    listed, choices = examples.drawn(ctx, strategy)
    assert len(seen) > 3 and listed == list(dict.fromkeys(seen))
    assert [len(c) for c in choices] == [seen.count(e) for e in listed]  # every draw's choices, by example


def test_no_chosen_example_repeats_a_drawn_or_chosen_one():
    shipped = {json.dumps(examples.encode(e)) for key, listed in examples.read(examples.DATA_FILE).items()
               for e in listed if not key.startswith("chosen ")}
    for function in DIFFERENTIAL:
        mine = [json.dumps(examples.encode(e)) for e in chosen.examples(function)]
        assert len(set(mine)) == len(mine) and not set(mine) & shipped, function


def _stateful_gae(wrong_call: int):
    """compute_gae wrong on its `wrong_call`-th call only (a cache, a counter...): the shipped examples see the
    wrong answer, the live hypothesis run meets that input again and gets the right one."""
    reference = load_reference()
    calls = []

    def compute_gae(rewards, values, mask, gamma=1.0, lam=0.95):
        calls.append(1)
        advantages, returns = reference.compute_gae(rewards, values, mask, gamma, lam)
        return (advantages + 1, returns) if len(calls) == wrong_call else (advantages, returns)
    return {**{fn: getattr(reference, fn) for fn in config.load().functions}, "compute_gae": compute_gae}


def test_a_failure_on_a_shipped_example_stands_when_the_live_run_passes(monkeypatch):
    """State the purity sample misses: the test's 1st answer is asked twice (calls 1 and 2), its 2nd is not
    (call 3, the second shipped example): the live run then answers that example right."""
    check = checks.load_all()["gae.matches_reference"]
    assert reasked(1) and not reasked(2)
    functions = _stateful_gae(wrong_call=3)
    result = finding(check, functions, False, monkeypatch)
    assert result[:2] == ("failed", "advantages differ from the reference")
    assert finding(check, functions, True, monkeypatch) == ("passed",)  # the live run after it passes


def test_state_the_purity_sample_meets_fails_as_inconsistent(monkeypatch):
    """Wrong on its first call: the first answer of a test is asked again, and the two differ."""
    check = checks.load_all()["gae.matches_reference"]
    assert finding(check, _stateful_gae(wrong_call=1), False, monkeypatch)[:2] == ("error", "inconsistent")


@pytest.mark.parametrize("shrink", [True, False])
def test_without_shrinking_a_failure_is_the_same_failure_unshrunk(shrink, monkeypatch):
    """validate's nulls (examples.SHRINK off): the shipped example's failure is raised with no live run; the
    check fails either way, so no score depends on shrinking."""
    ctx = local_context(load_reference(), load_reference())
    strategy = examples.st.integers(0, 9)
    monkeypatch.setitem(examples.DRAWN, examples.example_key(__name__, strategy, ctx.hypothesis["max_examples"]),
                        [0, 7, 8])
    monkeypatch.setattr(examples, "SHRINK", shrink)
    live = []
    monkeypatch.setattr(examples.tools, "for_all", lambda *args: live.append(args))

    def body(example):
        if example >= 7:
            raise CheckFailed(f"fails on {example}")
    with pytest.raises(CheckFailed, match="fails on 7"):
        examples.for_all(ctx, strategy, body)
    assert bool(live) == shrink


@pytest.mark.parametrize("kind", FAILED_FOR_GOOD)
def test_a_function_failed_for_good_is_not_shrunk_and_reads_as_the_live_run_would(kind, monkeypatch):
    """A stub's NotImplementedError (a missing function, a child that died, an inconsistent answer): the
    submission refuses every later call with the same failure `again()`, so the live run could only shrink inputs
    it never looks at (~1 s of a blank starter's grade). It is skipped; what is raised is what it raised."""
    ctx = local_context(load_reference(), load_reference())
    strategy = examples.st.integers(0, 9)
    monkeypatch.setitem(examples.DRAWN, examples.example_key(__name__, strategy, ctx.hypothesis["max_examples"]),
                        [0, 7, 8])
    first = SubmissionError("f raised NotImplementedError", kind, "NotImplementedError", "TODO")

    def body_of_a_remote():
        calls = []

        def body(example):
            calls.append(example)
            raise first if len(calls) == 1 else first.again()
        return body, calls
    live_body, _ = body_of_a_remote()
    with pytest.raises(SubmissionError) as live:
        examples.tools.for_all(ctx, strategy, live_body)
    body, calls = body_of_a_remote()
    runs = []
    monkeypatch.setattr(examples.tools, "for_all", lambda *args: runs.append(args))
    with pytest.raises(SubmissionError) as shortcut:
        examples.for_all(ctx, strategy, body)
    assert runs == [] and calls == [0]
    fields = ("kind", "exc_type", "detail", "private_inputs", "child_saw")
    assert (str(shortcut.value), *(getattr(shortcut.value, f) for f in fields)) == \
        (str(live.value), *(getattr(live.value, f) for f in fields))


def test_a_failure_on_a_chosen_example_is_reported(monkeypatch):
    ctx = local_context(load_reference(), load_reference())
    monkeypatch.setitem(examples.DRAWN, "chosen a function", [1, "chosen"])

    def body(example):
        if example == "chosen":
            raise CheckFailed("the chosen example fails")
    with pytest.raises(CheckFailed, match="the chosen example fails"):
        examples.for_all(ctx, examples.st.integers(0, 3), body, chosen="a function")


def test_a_failure_shrinks_from_the_smallest_failing_draw():
    """tools.for_all runs the draws smallest first (shortlex of their choice sequences) and shrinks the first that
    fails, from its choice sequence."""
    ctx = local_context(load_reference(), load_reference())
    strategy = examples.st.integers(0, 10_000)
    drawn = examples.tools.draws(ctx, strategy)
    smallest_failing = min((d for d in drawn if d[0] >= 100), key=lambda d: examples.tools.shortlex(d[1]))[0]
    seen: list = []

    def body(example):
        seen.append(example)
        if example >= 100:
            raise CheckFailed(f"fails on {example}")
    with pytest.raises(CheckFailed) as shrunk:
        examples.tools.for_all(ctx, strategy, body)
    assert next(x for x in seen if x >= 100) == smallest_failing and shrunk.value.message == "fails on 100"


def test_a_shrink_from_an_example_that_now_passes_finds_nothing():
    """A body with state that now passes the example it failed: no failure to raise (the caller raises the one it
    saw, unshrunk)."""
    ctx = local_context(load_reference(), load_reference())
    strategy = examples.st.integers(0, 10_000)
    _, start = examples.tools.draws(ctx, strategy)[-1]
    examples.tools.shrink_from(ctx, strategy, lambda example: None, start)


def test_the_shipped_path_shrinks_from_the_draw_the_live_run_shrinks_from(monkeypatch):
    """The shipped examples run in the live run's order, and the first failure shrinks from the same choice
    sequence."""
    ctx = local_context(load_reference(), load_reference())
    strategy = examples.st.integers(0, 10_000)
    key = examples.example_key(__name__, strategy, ctx.hypothesis["max_examples"])
    listed, choices = examples.drawn(ctx, strategy)
    monkeypatch.setitem(examples.DRAWN, key, listed)
    monkeypatch.setitem(examples.CHOICES, key, choices)
    seen: dict = {"shipped": [], "live": []}
    path = ["shipped"]

    def body(example):
        seen[path[0]].append(example)
        if example % 3 == 0:
            raise CheckFailed(f"fails on {example}")
    starts: dict = {}
    monkeypatch.setattr(examples.tools, "shrink_from",
                        lambda ctx, strategy, body, start: starts.setdefault(path[0], start))
    with pytest.raises(CheckFailed):
        examples.for_all(ctx, strategy, body)
    path[0] = "live"
    with pytest.raises(CheckFailed):
        examples.tools.for_all(ctx, strategy, body)
    assert starts["shipped"] == starts["live"]
    assert list(dict.fromkeys(seen["live"])) == seen["shipped"]  # the same examples, in the same order


def test_a_body_never_sees_an_example_another_body_changed():
    ctx = local_context(load_reference(), load_reference())
    strategy = examples.st.lists(examples.st.integers(0, 3), min_size=1, max_size=3)

    def body(example):
        example.append(99)
    examples.for_all(ctx, strategy, body)
    seen: list = []
    examples.for_all(ctx, strategy, lambda example: seen.append(list(example)))
    assert seen and all(99 not in e for e in seen)


def _subjects(part: str | None = None) -> list:
    reference = load_reference()
    subjects = [("reference", {fn: getattr(reference, fn) for fn in config.load().functions}, None)]
    subjects += [(e.id, contract_with(e, reference), e.part) for e in ENTRIES]
    return [s for s in subjects if part is None or s[2] in (None, part)]


def _check_the_same_findings(subject_name, functions, part, monkeypatch):
    for check in HIDDEN:
        if part is None or check.part == part:
            fast = finding(check, functions, False, monkeypatch)
            live = finding(check, functions, True, monkeypatch)
            assert fast == live, f"{subject_name} on {check.id}: shipped examples {fast[:2]}, live {live[:2]}"


@pytest.mark.parametrize("entry", ["reference", "ppo_clip.dual_clip", "rm_loss.bt_detached"])  # the rest: slow
def test_a_check_finds_what_the_live_run_finds(entry, monkeypatch):
    name, functions, part = next(s for s in _subjects() if s[0] == entry)
    _check_the_same_findings(name, functions, part, monkeypatch)


def _sample() -> list:
    """The first mistake and the first correct variant of each part (AUTOGRADER_ALL_ENTRIES=1: every entry
    of the bank, ~30 min of CPU)."""
    if os.environ.get("AUTOGRADER_ALL_ENTRIES") == "1":
        return _subjects()
    firsts: dict = {}
    for e in ENTRIES:
        firsts.setdefault((e.part, e.is_mistake), e.id)
    return [s for s in _subjects() if s[0] in firsts.values()]


@pytest.mark.slow  # each subject runs every hidden check of its part twice, live hypothesis included (5-20 s)
@pytest.mark.parametrize("subject", _sample(), ids=lambda s: s[0])
def test_bank_entries_get_the_same_findings(subject, monkeypatch):
    _check_the_same_findings(*subject, monkeypatch)
