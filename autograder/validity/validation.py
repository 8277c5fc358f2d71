"""Validate the grader against the mistake bank: grade the reference, the starter, every null
submission, every mistake and every variant, and check each gets what it deserves.

    subjects = subjects_for(parts=["gae"], check_parts=[...], e2e_outcomes={})
    outcomes = grade_subjects(subjects, workers=2)
    verdicts = [judge(o) for o in outcomes]     # what went wrong, per subject ([] = as expected)

Expectations: the reference gets full marks, the starter and every null submission (nulls.py: answers
that ignore their input) zero in every check of the check parts; a variant full marks; a mistake loses
points in its own part (its checks, and e2e tests that train with its part) and nowhere else. With
--e2e, the e2e tests too: the reference and every variant (on the e2e tests that train with its part)
full marks there, every null zero in every e2e test (they train: their answers differ from the
reference's, so no recorded run stands for theirs), and a mistake fails the e2e tests that calibration
found it fails on every seed (grading/data/e2e_mistakes.json; it is graded on those alone: on the others
of its part it may pass or fail, and nothing else calls its function). Every hint shown must name the
subject's own mistake (precision); a hint on a null, a variant, the reference or the starter is a wrong name. While a
mistake is graded, each failed check of its part is also diagnosed with that mistake left out of the
bank (validity/hints.py): as a mistake the diagnosis does not know, it must get no hint, or one naming
a mistake that answers as it does.
"""

from __future__ import annotations

import multiprocessing
import tempfile
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass, field
from pathlib import Path

from autograder.lab.paths import REFERENCE, STARTER


@dataclass(frozen=True)
class Subject:
    label: str                  # "reference", "starter", "null.<name>", "derived.<name>", "mutant.<fn>.<kind>" or a
                                # bank entry id
    kind: str                   # reference | starter | null | mistake | variant | mutant
    part: str | None            # a bank entry's part
    name: str | None            # a bank entry's name
    only: tuple[str, ...]       # first tags to grade (at grading.yaml's settings)
    must_fail_e2e: tuple[str, ...] = ()
    elsewhere: tuple[str, ...] = ()   # other check parts, graded with `elsewhere_examples` hypothesis examples
    elsewhere_examples: int = 0
    fails: str = ""             # mistakes: a check that must fail (bank.Entry.fails)
    says: str = ""              # mistakes: a word one of its failures must say (bank.Entry.says)
    elsewhere_as: str = ""      # a null graded only where it answers otherwise: on the other tests it answers
                                # exactly as this subject (its functions' code is the same there)


@dataclass
class TestOutcome:
    id: str
    tags: list[str]
    score: float
    max_score: float
    diagnosis: str
    message: str
    call_failed: bool = False   # the call itself failed (raised, timed out, a wrong type...): Finding.kind
    shows_input: bool = False   # the failure shows the input that exposes it
    shows_expected: bool = False  # ...and expected against got

    @property
    def lost(self) -> bool:
        return self.score < self.max_score


@dataclass
class Outcome:
    subject: Subject
    tests: list[TestOutcome]
    seconds: float
    error: str = ""             # the grade itself failed
    left_out: list = field(default_factory=list)        # mistakes: hints.Hinted of each failed check of its part
    wrong_left_out: list[str] = field(default_factory=list)  # ...whose left-out diagnosis names another mistake
    #                                                        (mutants: the names its hints give that answer otherwise)


@dataclass
class Verdict:
    subject: Subject
    problems: list[str] = field(default_factory=list)   # empty: as expected
    caught: bool = False                                # mistakes: lost points in its own part
    named: bool = False                                 # mistakes: a diagnosis names it
    misnamed: list[str] = field(default_factory=list)   # diagnoses naming another mistake
    hints: int = 0                                      # failed tests that showed a hint
    right_hints: int = 0                                # ...naming this subject's own mistake
    left_out_hints: int = 0                             # mistakes: hints with the mistake left out of the bank
    left_out_right: int = 0                             # ...naming nothing but an equivalent mistake


def subjects_for(parts: list[str], check_parts: list[str], elsewhere_examples: int = 5,
                 e2e_outcomes: dict[str, list[str]] | None = None, nulls: bool = True,
                 mutants: bool = True) -> list[Subject]:
    """Everything to grade for `parts`: reference, starter, the null submissions, derived from the contract
    (derived_nulls.py) and the lab's own (nulls.py), on the checks of `parts` and every e2e test when
    `e2e_outcomes` is given; the contract mutants of those parts (contract_mutants.py: on their own part, and
    on the other parts like a bank entry); then the bank's entries of those parts (with `e2e_outcomes`: a
    variant also on the e2e tests, a mistake on them when it fails some).

    A bank entry is graded on its own part at grading.yaml's settings and on every other check part
    with `elsewhere_examples` examples per property test (0: not at all). Those checks never call the
    entry's function, so they run the reference's code: a few examples show it costs nothing there.
    """
    from autograder.lab import bank, registry
    NULLS = registry.lab_module("nulls").NULLS if registry.has_module("nulls") else {}  # the derived ones suffice

    e2e = ("e2e",) if e2e_outcomes is not None else ()
    chosen = tuple(p for p in check_parts if p in parts)
    subjects = [Subject("reference", "reference", None, None, chosen + e2e),
                Subject("starter", "starter", None, None, chosen)]
    if nulls:
        from autograder.validity import derived_nulls
        derived = [_derived_null(n, chosen, e2e_outcomes is not None) for n in derived_nulls.nulls()]
        subjects += [s for s in derived if s.only]  # an echo of none of the chosen parts has nothing of its own
        subjects += [Subject(f"null.{name}", "null", None, name, chosen + e2e) for name in NULLS]
    if mutants:
        from autograder.validity import contract_mutants
        for m in contract_mutants.mutants(parts):
            elsewhere = tuple(p for p in check_parts if p != m.part) if elsewhere_examples > 0 else ()
            subjects.append(Subject(m.label, "mutant", m.part, m.label, (m.part,), (), elsewhere, elsewhere_examples))
    for entry in bank.load_all():
        if entry.part not in parts:
            continue
        # e2e: a variant on the e2e tests training with its part (full marks); a mistake only on those calibration
        # says it fails (the others of its part may go either way, and no other e2e test calls its function)
        must_fail = tuple((e2e_outcomes or {}).get(entry.id, ())) if entry.is_mistake else ()
        trains_with_it = () if entry.is_mistake or not e2e else _e2e_training_with({entry.part})
        only = (entry.part,) + tuple(f"e2e.{name}" for name in must_fail) + trains_with_it
        elsewhere = tuple(p for p in check_parts if p != entry.part) if elsewhere_examples > 0 else ()
        subjects.append(Subject(entry.id, "mistake" if entry.is_mistake else "variant", entry.part,
                                entry.name, only, must_fail, elsewhere, elsewhere_examples, entry.fails, entry.says))
    return subjects


def _derived_null(null, chosen: tuple[str, ...], e2e: bool) -> Subject:
    """A derived null's subject. An echo answers exactly as `zeros` in every function without its parameter, so it
    is graded only on the checks of the parts holding such a function and the e2e tests training with them
    (derived.zeros covers the rest: the same answers give the same grade)."""
    from autograder.lab import config
    label = f"derived.{null.name}"
    if null.rule != "echo":
        return Subject(label, "null", None, label, chosen + (("e2e",) if e2e else ()))
    echoed = {fn.part for fn in config.current().contract.values() if null.argument in fn.parameters}
    tests = _e2e_training_with(echoed) if e2e else ()
    return Subject(label, "null", None, label, tuple(p for p in chosen if p in echoed) + tests,
                   elsewhere_as="derived.zeros")


def _e2e_training_with(parts: set[str]) -> tuple[str, ...]:
    """The ids of the e2e tests that train with one of `parts` (the others never call their functions)."""
    from autograder.lab import config
    return tuple(f"e2e.{name}" for name, spec in config.current().e2e.items() if parts & set(spec.parts))


def grade_subject(subject: Subject) -> Outcome:
    """Grade one subject (sandboxed, as a student's submission is)."""
    import time

    from autograder.checks import examples
    from autograder.judge.grade import grade
    from autograder.lab import config
    from autograder.validity import hints

    started = time.monotonic()
    shrink, examples.SHRINK = examples.SHRINK, subject.kind != "null"  # a null's scores alone are judged
    try:
        with tempfile.TemporaryDirectory(prefix="validate-") as tmp:
            if subject.kind == "reference":
                path = REFERENCE
            elif subject.kind == "starter":
                path = STARTER
            else:
                path = Path(tmp) / config.current().submission
                path.write_text(subject_source(subject))
            left_out: list = []
            if subject.kind == "mistake":  # each failed check also diagnosed with the mistake left out
                entry = _entry(subject)
                with hints.leaving_out(subject.name) as left_out:
                    results = grade(path, only=set(subject.only), plots=False).tests
                left_out = [h for h in left_out if h.part == subject.part]
                wrong = [f"{h.function}: names {' or '.join(h.left_out)}" for h in left_out
                         if not hints.right(entry, h)]
            else:
                results, wrong = grade(path, only=set(subject.only), plots=False).tests, []
            if subject.kind == "mutant":  # a hint must name a mistake that answers as the mutant does
                wrong = mutant_misnamed(subject, path, [t.diagnosis for t in results if t.diagnosis])
            tests = [TestOutcome(t.id, list(t.tags), t.score, t.max_score, t.diagnosis, t.message, bool(t.finding.kind),
                                 bool(t.finding.inputs), bool(t.finding.expected or t.finding.got)) for t in results]
            tests += elsewhere(subject, path)
    except Exception as exc:  # report it as this subject's problem, keep validating the others
        return Outcome(subject, [], time.monotonic() - started, f"{type(exc).__name__}: {exc}")
    finally:
        examples.SHRINK = shrink
    return Outcome(subject, tests, time.monotonic() - started, left_out=left_out, wrong_left_out=wrong)


def elsewhere(subject: Subject, path: Path) -> list[TestOutcome]:
    """A bank entry's or contract mutant's outcomes on the other parts' checks, `elsewhere_examples` hypothesis
    examples per property test, in process (validity/local.py: the code is the lab's own, trusted, and a pure
    function answers there as in the sandbox; no child to start for checks that run the reference's code)."""
    if not subject.elsewhere:
        return []
    from autograder import checks
    from autograder.checks import CheckFailed, local
    from autograder.lab import config
    from autograder.lab.reference import load_reference
    from autograder.sandbox.remote import SubmissionError
    cfg = config.load()
    hypothesis = {**cfg.hypothesis, "max_examples": subject.elsewhere_examples}
    module, reference = local.load_module(path, "validate_elsewhere"), load_reference()
    found = []
    for check in checks.load_all().values():
        if check.part not in subject.elsewhere:
            continue
        points, message = cfg.tests[check.id].points, ""
        try:
            check.run(local.local_context(module, reference, hypothesis))
        except (CheckFailed, SubmissionError) as exc:
            message = getattr(exc, "message", "") or str(exc)
        found.append(TestOutcome(check.id, [check.part], 0.0 if message else points, points, "", message))
    return found


def mutant_misnamed(subject: Subject, path: Path, diagnoses: list[str]) -> list[str]:
    """The names in a contract mutant's hints that do not answer as the mutant does (hints.answers_as)."""
    from autograder.checks import local
    from autograder.judge.diagnosis import named
    from autograder.validity import contract_mutants, hints
    mutant = contract_mutants.by_label(subject.label)
    function = getattr(local.load_module(path, "validate_mutant"), mutant.function)
    names = sorted({n for d in diagnoses for n in named(d)})
    return [n for n in names if not hints.answers_as(function, mutant.part, n, mutant.function)]


def _entry(subject: Subject):
    from autograder.lab import bank
    return next(e for e in bank.load_all() if e.id == subject.label)


def subject_source(subject: Subject) -> str:
    """The text of a null submission, a contract mutant or a bank entry's submission."""
    from autograder.lab import bank, registry
    if subject.kind == "null" and subject.label.startswith("derived."):
        from autograder.validity import derived_nulls
        return derived_nulls.source(derived_nulls.by_name(subject.label.removeprefix("derived.")))
    if subject.kind == "null":
        nulls = registry.lab_module("nulls")
        return nulls.null_source(nulls.NULLS[subject.name])
    if subject.kind == "mutant":
        from autograder.validity import contract_mutants
        return contract_mutants.source(contract_mutants.by_label(subject.label))
    return bank.submission_source(_entry(subject))


def grade_subjects(subjects: list[Subject], workers: int = 2, progress=None) -> list[Outcome]:
    """Grade every subject on `workers` processes; `progress(outcome)` after each."""
    trains = any("e2e" in s.only for s in subjects)
    if workers <= 1:
        from autograder.sandbox import zygote
        start_worker(trains)
        outcomes = []
        try:
            for s in subjects:
                outcomes.append(grade_subject(s))
                if progress:
                    progress(outcomes[-1])
        finally:  # this process goes on: its zygote is no longer kept
            zygote.keep(False)
            zygote.stop()
        return outcomes
    outcomes = []
    # not multiprocessing.Pool: its daemonic workers cannot start grade()'s second e2e lane
    with ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("spawn"), initializer=start_worker,
                             initargs=(trains,)) as pool:
        for future in as_completed([pool.submit(grade_subject, s) for s in subjects]):
            outcomes.append(future.result())
            if progress:
                progress(outcomes[-1])
    order = {s.label: i for i, s in enumerate(subjects)}
    return sorted(outcomes, key=lambda o: order[o.subject.label])


def start_worker(trains: bool) -> None:
    """Set up a process that grades one subject after another: its zygote kept from one grade to the next
    (autograder/sandbox/zygote.py, `keep`: a root judge's warm children), and torch._dynamo imported once when its
    subjects run e2e tests (lanes.import_dynamo), which every grade's lanes then share."""
    from autograder.judge import lanes
    from autograder.sandbox import zygote
    zygote.keep()
    if trains:
        lanes.import_dynamo()


def own_part(test: TestOutcome, part: str) -> bool:
    """A check of `part`, or an e2e test that trains with `part`."""
    return test.tags[0] == part or (test.tags[0] == "e2e" and part in test.tags[1:])


def judge(outcome: Outcome) -> Verdict:
    s, tests = outcome.subject, outcome.tests
    verdict = Verdict(s)
    if outcome.error:
        verdict.problems.append(f"grading failed: {outcome.error}")
        return verdict
    if not tests:
        verdict.problems.append("no test ran")
    from autograder.judge.diagnosis import named

    lost = [t for t in tests if t.lost]
    hinted = [t for t in tests if t.diagnosis]
    verdict.hints = len(hinted)

    def right(t: TestOutcome) -> bool:  # a mutant's: every name answers as the mutant does (mutant_misnamed)
        if s.kind == "mutant":
            return set(named(t.diagnosis)).isdisjoint(outcome.wrong_left_out)
        return s.kind == "mistake" and named(t.diagnosis) == [s.name]
    verdict.right_hints = sum(right(t) for t in hinted)
    verdict.problems += [f"wrong hint on {t.id}: names {' or '.join(named(t.diagnosis)) or t.diagnosis[:60]}"
                         for t in hinted if not right(t)]
    if s.kind in ("reference", "variant"):
        verdict.problems += [f"loses {t.max_score - t.score:g} on {t.id}: {t.message[:120]}" for t in lost]
    elif s.kind in ("starter", "null"):
        verdict.problems += [f"scores {t.score:g} on {t.id}" for t in tests if t.score > 0]
    else:
        mine = [t for t in lost if own_part(t, s.part)]
        verdict.caught = any(t.tags[0] != "e2e" for t in mine)
        if not verdict.caught:
            verdict.problems.append(f"not caught: full marks on every {s.part} check")
        verdict.problems += [f"costs points elsewhere: {t.id} ({t.message[:100]})"
                             for t in lost if not own_part(t, s.part)]
        if s.kind == "mutant":  # a broken clause (a dtype, a write...): its sentence and the input, no hint
            verdict.problems += [f"fails {t.id} without showing the input" for t in mine
                                 if t.tags[0] != "e2e" and not t.call_failed and not t.shows_input]
            return verdict
        failed_e2e = {t.id.split(".", 1)[1] for t in lost if t.tags[0] == "e2e"}
        verdict.problems += [f"passes e2e.{name}, which calibration says it fails on every seed"
                             for name in s.must_fail_e2e if name not in failed_e2e]
        verdict.problems += feedback_problems(s, [t for t in mine if t.tags[0] != "e2e"])
        verdict.named = any(named(t.diagnosis) == [s.name] for t in mine)
        verdict.left_out_hints = sum(bool(h.left_out) for h in outcome.left_out)
        verdict.left_out_right = verdict.left_out_hints - len(outcome.wrong_left_out)
        verdict.problems += [f"wrong hint with {s.name} left out of the bank, on {w}" for w in outcome.wrong_left_out]
        verdict.misnamed = sorted({" or ".join(named(t.diagnosis)) for t in hinted
                                   if named(t.diagnosis) != [s.name]})
    return verdict


def feedback_problems(s: Subject, failed: list[TestOutcome]) -> list[str]:
    """What a mistake's failed checks must show: the check its bank entry names among them, its word (`says`),
    and on each failure the input that exposes it and expected against got, unless the call itself failed."""
    problems = []
    if s.fails and s.fails not in {t.id for t in failed}:
        problems.append(f"passes {s.fails}, the check its bank entry says must catch it")
    if s.says and not any(s.says in t.message for t in failed):
        problems.append(f"no failure says '{s.says}'")
    problems += [f"fails {t.id} without showing {'the input' if not t.shows_input else 'expected against got'}"
                 for t in failed if not t.call_failed and not (t.shows_input and t.shows_expected)]
    return problems
