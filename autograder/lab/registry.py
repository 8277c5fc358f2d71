"""The seam between the engine and a lab: where the engine finds the lab's code, and what the lab plugs in.

The engine knows no lab. A lab is a folder (docs/labs.md) whose `grading/` package holds everything the lab
owns on the grader's side. The engine imports that package by path under the lab's name (grading.yaml `lab`),
so the lab's modules import each other relatively and two labs never share a module:

    registry.package()                        # the lab's package (its __init__ only)
    registry.lab_module("checks.hidden.gae")  # one of its modules
    registry.lab()                            # its hooks (grading/lab.py calls register_lab once, when imported)

Its checks register with `@check` (autograder/checks) from `grading/checks/{public,hidden}/`, its e2e tests with
`@e2e_test` (autograder/judge/e2e.py), its mistakes and variants with `@mistake`/`@variant` (autograder/lab/bank.py)
from
`grading/bank/`; its extra commands are the modules of `grading/commands/` (autograder/__main__.py).
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from types import ModuleType
from typing import Any, Callable, Mapping, Sequence

from autograder.lab import config, paths


@dataclass(frozen=True)
class DataFile:
    """A file the lab ships that is computed from its code (`python -m autograder refresh` rewrites it)."""

    path: Path
    is_current: Callable[[], bool]   # it matches what it is computed from (a fingerprint)
    write: Callable[[], object]      # compute and write it


@dataclass(frozen=True)
class Replays:
    """A lab's facts for replaying the reference's recorded trainings (autograder/replay/). Its e2e tests route
    each replayable training through `replay.outcome`; the file is one of its data_files (`replay.DATA_FILE`)."""

    # how its training transforms an answer before a later call gets it: name -> f(answer tensor, the mask
    # argument of the call that answered it, or None) (an answer passed as it is, or some of its rows, is found)
    passes_on: Mapping[str, Callable[[Any, Any], Any]] = field(default_factory=dict)
    depends_on: tuple[Path, ...] = ()  # files its runs depend on beyond the world, reference, e2e code and settings


@dataclass(frozen=True)
class Lab:
    name: str
    make_parts: Callable[[dict[str, Callable]], Any]   # contract function name -> callable, to the training bundle
    probe_inputs: Callable[[], dict[str, tuple]]       # a tiny valid input per contract function
    diagnose: Callable[..., str]                       # (part, failure, reference, ask) -> hint or ""
    plot: Callable[[str, dict, tuple[str, ...]], list[tuple[str, bytes]]]  # (test, histories, metrics) -> PNGs
    # The hooks below serve the contract functions that declare no `domain` in grading.yaml; a declared one gets the
    # engine's derived inputs (autograder/checks/lab_inputs.py), and the lab's chosen examples after its derived ones.
    # function -> chosen calls that confirm a diagnosis
    confirmation_calls: Callable[[str], Sequence] = lambda function: ()
    # (function, args, kwargs, valid, position) -> a fresh input like a shown one (needed unless every function
    # declares its domain: lab_problems says so)
    twin: Callable[..., tuple[tuple, dict]] | None = None
    data_files: tuple[DataFile, ...] = ()  # in the order they are computed (a later one may read an earlier one)
    band_metrics: tuple[str, ...] = ()     # per-iteration metrics of the calibration's reference band (plots)
    # function -> the chosen examples its differential check runs after the draws (autograder/checks/examples.py),
    # after those derived from its declared domain (autograder/checks/declared.py) where it declares one
    chosen_examples: Callable[[str], Sequence] = lambda function: ()
    replays: Replays | None = None         # its recorded trainings replay (else every run trains)
    # (function, args) -> a twin's rounding allowance where it is larger than the derived one (the sum of |x dF/dx|
    # of a scalar answer: autograder/checks/tools.py `reference_answer`)
    twin_scale: Callable[[str, tuple], float] | None = None


_LAB: Lab | None = None


def register_lab(lab: Lab) -> None:
    """Called once by the lab's grading/lab.py when it is imported."""
    global _LAB
    _LAB = lab


def package() -> ModuleType:
    """The lab's grading package, imported by path under its name (grading.yaml `lab`) on first use."""
    name = config.current().lab
    if name not in sys.modules and not (paths.GRADING / "__init__.py").is_file():
        module = ModuleType(name, "the lab's grader side: its modules, and no __init__.py of its own")
        module.__path__ = [str(paths.GRADING)]  # a package: its modules (e2e_tests, bank...) import by path
        sys.modules[name] = module
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, paths.GRADING / "__init__.py",
                                                      submodule_search_locations=[str(paths.GRADING)])
        if spec is None or spec.loader is None:
            raise ImportError(f"{paths.GRADING}: no lab package (grading/__init__.py) here")
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        try:
            spec.loader.exec_module(module)
        except BaseException:
            del sys.modules[name]
            raise
    return sys.modules[name]


def lab_module(name: str) -> ModuleType:
    """One module of the lab's package ("checks.hidden.domains")."""
    return importlib.import_module(f"{package().__name__}.{name}")


def has_module(name: str) -> bool:
    """The lab's package holds this module here (the student bundle has only the public checks)."""
    return (paths.GRADING.joinpath(*name.split(".")).with_suffix(".py").is_file()
            or paths.GRADING.joinpath(*name.split(".")).is_dir())  # a package, with or without its __init__.py


def is_full_lab() -> bool:
    """The lab itself is here, with its reference and hidden side (a student bundle holds only the public side)."""
    return has_module("checks.hidden") or paths.SOLUTIONS.is_dir()


def lab() -> Lab:
    """The registered lab (importing its grading/lab.py, and so registering its tests, on first use). A lab that
    writes no lab.py gets the engine's hooks, all derived from its grading.yaml (autograder/judge/declared_lab.py,
    imported
    by name like a lab's own lab.py: it registers the lab's e2e tests too)."""
    if _LAB is None:
        if has_module("lab"):
            lab_module("lab")
        else:
            importlib.import_module("autograder.judge.declared_lab")
    assert _LAB is not None, f"{paths.GRADING / 'lab.py'} did not call registry.register_lab()"
    return _LAB


@contextmanager
def without_plots() -> Iterator[None]:
    """Meanwhile the lab's plot hook makes no plot (an e2e test whose plots no report shows)."""
    global _LAB
    registered = lab()
    _LAB = replace(registered, plot=lambda test, histories, metrics: [])
    try:
        yield
    finally:
        _LAB = registered
