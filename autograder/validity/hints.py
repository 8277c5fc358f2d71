"""Hint precision where it matters, on mistakes the diagnosis does not know: while `validate` grades a
bank mistake (sandboxed, like a student's submission), every failed check is diagnosed twice, with the
whole bank (the hint the grade shows) and with that mistake left out of the candidates (leave one
out). Left out, the mistake must get no hint, or one naming a mistake that answers as it does (on
every call the part's checks make of the function on the reference, and on the confirmation inputs);
any other name is a wrong hint.

    with leaving_out("forward_recursion") as records:
        grade(path, only={"gae"})
    wrong = [r for r in records if not right(entry, r)]
"""

from __future__ import annotations

import dataclasses
import functools
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Callable, Iterator

from autograder import checks
from autograder.checks import lab_inputs
from autograder.judge import diagnosis
from autograder.lab import bank, registry


@dataclass
class Hinted:
    """One failed check's diagnosis: with the whole bank, and with the graded mistake left out."""
    part: str
    function: str
    named: list[str] = field(default_factory=list)
    left_out: list[str] = field(default_factory=list)


@contextmanager
def leaving_out(name: str) -> Iterator[list[Hinted]]:
    """While open, the lab's diagnosis (what `grade` calls for each failed check, in this process: checks
    run in the first lane) also diagnoses with mistake `name` left out; each pair is recorded. The
    submission is asked each confirmation call once for both."""
    lab = registry.lab()
    records: list[Hinted] = []

    def diagnose(part, failure, reference, ask=None):
        answers: dict[int, object] = {}
        once = None if ask is None else (lambda args, kwargs: answers[id(args)] if id(args) in answers
                                         else answers.setdefault(id(args), ask(args, kwargs)))
        shown = lab.diagnose(part, failure, reference, once)
        alone = diagnosis.diagnose(part, failure, reference, once, leave_out=name)
        records.append(Hinted(part, failure.function, diagnosis.named(shown), diagnosis.named(alone)))
        return shown

    registry.register_lab(dataclasses.replace(lab, diagnose=diagnose))
    try:
        yield records
    finally:
        registry.register_lab(lab)


def right(entry: bank.Entry, record: Hinted) -> bool:
    """The left-out diagnosis names nothing, or only mistakes that answer as `entry` does."""
    return all(equivalent(entry, name, record.function) for name in record.left_out)


def equivalent(entry: bank.Entry, other_name: str, function: str) -> bool:
    """`other_name`'s mistake answers as `entry` does, seen through `function`, on every call the part's
    checks make of it on the reference, and on its confirmation inputs."""
    from autograder.lab.entries import contract_with
    from autograder.lab.reference import load_reference

    return answers_as(contract_with(entry, load_reference())[function], entry.part, other_name, function)


def answers_as(mine: Callable, part: str, other_name: str, function: str) -> bool:
    """`other_name`'s mistake (of `part`) answers as `mine` does, seen through `function`, on every call the part's
    checks make of it on the reference, and on its confirmation inputs (a contract mutant's hint is right then)."""
    from autograder.lab.entries import contract_with
    from autograder.lab.reference import load_reference

    reference = load_reference()
    other = next((e for e in bank.mistakes_of_part(part) if e.name == other_name), None)
    if other is None:
        return False
    theirs = contract_with(other, reference)[function]
    calls = _calls_of(part, function) + tuple(lab_inputs.confirmation_inputs(function))
    answers = [[diagnosis.answer_of(fn, args, kwargs) for args, kwargs in calls] for fn in (mine, theirs)]
    return diagnosis.agree(*answers, calls, getattr(reference, function))


@functools.lru_cache(maxsize=None)
def _calls_of(part: str, function: str) -> tuple:
    """Every call of `function` that the part's checks make on the reference, as (args, kwargs)."""
    from autograder.validity import coverage

    ids = [c.id for c in checks.load_all().values() if c.part == part]
    return tuple((tuple(arguments.values()), {}) for made in coverage.record(check_ids=ids).values()
                 for fn, arguments in made if fn == function)
