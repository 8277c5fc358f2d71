"""Lab 13 as the engine sees it: the hooks of `autograder.registry.Lab`, and the tests it grades.

When issue 21's seam loads a lab folder, it imports this module by path and calls `register(registry)`;
until then the standalone runner (local.py) and labs/lab13/tests use the same functions.
"""

from __future__ import annotations

from typing import Any, Callable

from . import diagnosis, world

world.use_world()
import training  # noqa: E402


def make_parts(functions: dict[str, Callable]) -> Any:
    """Contract function name -> callable, to the training code's bundle."""
    return training.Parts(**functions)


def probe_inputs() -> dict[str, tuple]:
    return training.probe_inputs()


def diagnose(part: str, failure, reference, ask=None) -> str:
    """(part, failure, reference, ask) -> a hint, or "" (registry.Lab.diagnose's signature; ask unused:
    the mistakes run in the judge on the failing input)."""
    return diagnosis.hint(failure, reference)


def plot(test: str, histories: dict, metrics: tuple[str, ...]) -> list[tuple[str, bytes]]:
    """(test, histories, metrics) -> PNGs: Lab 12's plotting (one line per history, per metric) fits as is."""
    from autograder import plots
    return plots.e2e_plots(test, histories, metrics)


def register(registry: Any) -> None:
    """Hand the lab to the engine (the seam's entry point): its hooks, and its checks and e2e tests when the
    engine's registry takes a lab's own (`register_tests`, issue 21; SEAM.md)."""
    from .checks import load_all
    from .e2e import REGISTRY as E2E
    registry.register_lab(registry.Lab(name="lab13", make_parts=make_parts, probe_inputs=probe_inputs,
                                       diagnose=diagnose, plot=plot))
    if hasattr(registry, "register_tests"):
        registry.register_tests(load_all(), E2E)
