"""The seam between the engine and a lab: what the lab plugs in, and where the engine finds it.

The engine (sandbox, remote calls, grading, results, reports, release, batch, commands) knows nothing of
RLHF. A lab is one module that, when imported, registers its checks (`@check`, autograder/checks), its
end-to-end tests (`@e2e_test`, autograder/e2e.py) and the hooks below:

    registry.lab().diagnose(part, failure, reference, ask)   # name a known mistake, or ""
    registry.lab().make_parts({"compute_gae": fn, ...})      # the lab's training code's function bundle

`lab()` imports LAB_MODULE once. A second lab on the same engine is a new lab module (its checks, e2e tests,
world files and hooks) plus its grading.yaml; see ARCHITECTURE.md.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

LAB_MODULE = "autograder.lab12"   # the lab this engine grades


@dataclass(frozen=True)
class DataFile:
    """A file the lab ships that is computed from its code (`python -m autograder refresh` rewrites it)."""

    path: Path
    is_current: Callable[[], bool]   # it matches what it is computed from (a fingerprint)
    write: Callable[[], object]      # compute and write it


@dataclass(frozen=True)
class Lab:
    name: str
    make_parts: Callable[[dict[str, Callable]], Any]   # contract function name -> callable, to the training bundle
    probe_inputs: Callable[[], dict[str, tuple]]       # a tiny valid input per contract function
    diagnose: Callable[..., str]                       # (part, failure, reference, ask) -> hint or ""
    plot: Callable[[str, dict, tuple[str, ...]], list[tuple[str, bytes]]]  # (test, histories, metrics) -> PNGs
    data_files: tuple[DataFile, ...] = ()  # in the order they are computed (a later one may read an earlier one)


_LAB: Lab | None = None


def register_lab(lab: Lab) -> None:
    """Called once by the lab module when it is imported."""
    global _LAB
    _LAB = lab


def lab() -> Lab:
    """The registered lab (importing LAB_MODULE, and so registering its tests, on first use)."""
    if _LAB is None:
        importlib.import_module(LAB_MODULE)
    assert _LAB is not None, f"{LAB_MODULE} did not call registry.register_lab()"
    return _LAB
