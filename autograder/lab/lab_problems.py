"""What an author can get wrong in a lab folder, found before a command does any work.

    lab_problems.ensure_complete(cfg)     # raises LabError: one sentence naming the file (and line) to fix
    lab_problems.stale_data_files()       # the shipped data files that no longer match what they are computed from

Each problem is a LabError (a ConfigError: every command prints it as one `error: ...` line and exits 2): the
lab's `lab.py` registering no lab (a lab without one gets the engine's derived hooks: autograder/judge/declared_lab.py,
and then every contract function must declare its `domain`); a
check registered in code (or derived from the contract: checks/derived.py, checks/contract_tests.py) with no entry
in grading.yaml `tests` (it would be silently skipped) or
an entry with no check; the `e2e` section and the
`@e2e_test` registrations disagreeing; a bank whose mistakes have hints that nothing could confirm (the lab gives no
confirmation inputs for their function: no hint would ever be shown; checked by the commands that build or validate
a lab, not by `grade` and `grade-all`: it changes no score, and computing every function's confirmation inputs costs
a grade ~1 s of CPU); a world file missing, two world files under one name, or a stale copy of a shared world file in
the lab's own assignment/. `release` also refuses stale data files.
"""

from __future__ import annotations

import inspect
from pathlib import Path

from autograder.lab import config, paths

shown = config.shown_path  # a path as the author types it


class LabError(config.ConfigError):
    """The lab folder is incomplete or inconsistent: one sentence naming the file to fix."""


def load_lab() -> None:
    """Import the lab's grading package and its lab.py (else the engine's derived hooks); LabError when its lab.py
    registers nothing."""
    from autograder.lab import registry
    hooks = paths.GRADING / "lab.py"
    try:
        registry.lab()
    except AssertionError:
        raise LabError(f"{shown(hooks)}: it never calls registry.register_lab(Lab(...)) (docs/labs.md)") from None


def ensure_complete(cfg: config.Config, grading: bool = False) -> None:
    """Every declaration the grade relies on is there and agrees with grading.yaml (see the module docstring);
    `grading` (grade, grade-all) skips the author's check that changes no score: hints nothing could confirm."""
    from autograder import checks
    from autograder.judge import e2e
    from autograder.lab import bank, registry
    full = registry.is_full_lab()  # the lab itself (a student bundle holds only the public checks)
    _world_is_there(cfg)
    if full:
        _domains_declared(cfg)
        load_lab()
    registered = checks.load_all()
    derived = _derived_tests(cfg, full)
    for test_id, check in registered.items():
        if test_id in derived and test_id not in cfg.tests:
            raise LabError(f"{cfg.where(derived[test_id])}: {derived[test_id]} derives the test {test_id} "
                           "(autograder/checks/derived.py, contract_tests.py): give it its points in "
                           f"{cfg.where('tests')} `tests`")
        if test_id not in cfg.tests:
            code = inspect.unwrap(check.run).__code__
            raise LabError(f"{shown(Path(code.co_filename))}:{code.co_firstlineno}: check {test_id} has no entry in "
                           f"{cfg.where('tests')} `tests` (give it its points there; unlisted, it would never run)")
    if full:
        for test_id in cfg.tests:
            if not test_id.startswith("e2e.") and test_id not in registered:
                raise LabError(f"{cfg.where(f'tests.{test_id}')}: tests.{test_id}: no check is registered under this "
                               "id (@check in grading/checks/public/ or hidden/)")
        e2e.load_all()
        e2e.check_config(cfg)
        _twins_given(cfg, registry.lab())
        if not grading:
            _hints_can_be_confirmed(bank.load_all())


def _world_is_there(cfg: config.Config) -> None:
    """Each world file exists, under a name of its own; a shared one (another lab's) has no stale copy here."""
    names = [Path(entry).name for entry in cfg.world]
    twice = sorted({name for name in names if names.count(name) > 1})
    if twice:
        raise LabError(f"{cfg.where('world')}: world: two files named {', '.join(twice)} (students get each world "
                       "file under its own name)")
    for entry, file in zip(cfg.world, paths.world_files(cfg.world).values()):
        if not file.is_file():
            raise LabError(f"{cfg.where('world')}: world: {entry} is not a file ({shown(file)})")
        shared = paths.LAB / entry
        if "/" in entry and shared.is_file() and shared.read_bytes() != file.read_bytes():
            raise LabError(f"{shown(file)}: a stale copy of the shared world file {entry} (grading.yaml `world`): "
                           "delete it, the lab uses the shared one")


def _domains_declared(cfg: config.Config) -> None:
    """A lab without grading/lab.py gets its probe, twin and confirmation inputs from each function's declared
    domain (autograder/judge/declared_lab.py): every contract function needs one."""
    if (paths.GRADING / "lab.py").is_file():
        return
    for name, spec in cfg.contract.items():
        if not spec.domain:
            raise LabError(f"{cfg.where(f'contract.{name}')}: contract.{name} declares no `domain` (a lab without "
                           "grading/lab.py draws every function's probe, twin and confirmation inputs from its "
                           "declared domain: docs/labs.md)")


def _derived_tests(cfg: config.Config, full: bool) -> dict[str, str]:
    """The tests the contract derives -> the key deriving it (the hidden ones in a full lab only: they are not in the
    student bundle)."""
    from autograder.checks import contract_tests, derived
    return {**derived.register(cfg, hidden=full), **(contract_tests.derived_ids(cfg) if full else {})}


def _hints_can_be_confirmed(entries: list) -> None:
    """A mistake's hint is shown only once confirmation inputs confirm it: a function with hinted mistakes needs
    some."""
    from autograder.checks import lab_inputs
    for entry in entries:
        if entry.is_mistake and entry.hint and not tuple(lab_inputs.confirmation_inputs(entry.function)):
            where = shown(paths.GRADING / "lab.py") if (paths.GRADING / "lab.py").is_file() else \
                config.current().where(f"contract.{entry.function}")
            raise LabError(f"{where}: the bank's mistake {entry.id} has a hint, but the lab gives no confirmation "
                           f"inputs for {entry.function} (Lab.confirmation_calls, or a declared `domain`): no hint "
                           "would ever be shown (docs/labs.md)")


def _twins_given(cfg: config.Config, lab) -> None:
    """Every contract function gets fresh twins (of its public checks' calls, and its derived dtype test's inputs):
    from its declared domain, else from the lab's twin."""
    for name, spec in cfg.contract.items():
        if not spec.domain and lab.twin is None:
            raise LabError(f"{shown(paths.GRADING / 'lab.py')}: contract.{name} declares no `domain` and the lab "
                           "gives no twin (Lab.twin) to draw its fresh inputs: declare its domain in grading.yaml, or "
                           "give one (docs/labs.md)")


def stale_data_files() -> list[str]:
    """The lab's shipped data files (and the bank mistakes' e2e outcomes) that do not match what they are computed
    from, as paths relative to the lab folder."""
    from autograder.lab import registry
    from autograder.validity import mistake_outcomes
    stale = [_relative(d.path) for d in registry.lab().data_files if not d.is_current()]
    if mistake_outcomes.tracked() and mistake_outcomes.stale():
        stale.append(_relative(mistake_outcomes.DATA_FILE))
    return stale


def _relative(path: Path) -> str:
    return str(path.relative_to(paths.LAB)) if path.is_relative_to(paths.LAB) else str(path)
