"""Fingerprints of what a lab's shipped data files are computed from, so that a stale file is found (`refresh
--check`) rather than silently trusted.

    code_of(path)              a module's code, docstrings aside (editing them computes nothing differently)
    e2e_runs("salt")           sha256 over what an e2e run's outcome depends on, begun with a salt
    numerics()                 how this machine's torch rounds: a recording is bit for bit only where it matches
"""

from __future__ import annotations

import ast
import hashlib
import sys
from pathlib import Path
from typing import Any

import torch

from autograder.judge import e2e
from autograder.lab import arithmetic, config, registry
from autograder.lab.paths import ENGINE, REFERENCE, world_files


def code_of(path: Path) -> str:
    """The module's code without its docstrings (docstring edits do not change what it computes)."""
    tree = ast.parse(path.read_text())
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(body, list) and body and isinstance(body[0], ast.Expr) \
                and isinstance(body[0].value, ast.Constant) and isinstance(body[0].value.value, str):
            node.body = body[1:] or [ast.Pass()]  # type: ignore[attr-defined]
    return ast.dump(tree)


def e2e_runs(salt: str) -> Any:
    """A sha256 (hashlib object) over what the outcome of a lab's e2e run depends on besides the functions it
    trains with: `salt`, torch and its kernels (arithmetic.torch_setup), grading.yaml's e2e settings, the world
    files, the reference, the engine's e2e.py, the lab's e2e tests' code and the files its replays declare
    (registry.Replays.depends_on)."""
    cfg = config.load()
    facts = registry.lab().replays
    h = hashlib.sha256(f"{salt}\0{arithmetic.torch_setup()}\0{cfg.e2e!r}".encode())
    for name, file in world_files(cfg.world).items():
        h.update(name.encode() + b"\0" + file.read_bytes())
    tests = sorted({Path(sys.modules[test.measure.__module__].__file__ or "") for test in e2e.load_all().values()})
    for path in [REFERENCE, ENGINE / "judge" / "e2e.py", *tests]:
        h.update(path.name.encode() + b"\0" + code_of(path).encode())
    for path in facts.depends_on if facts is not None else ():
        h.update(path.name.encode() + b"\0" + path.read_bytes())
    return h


def numerics() -> str:
    """A stamp of how this machine's torch rounds the operations a training is made of (reductions of many
    lengths, division and square roots, vector math, matrix products, softmax), on fixed inputs. Two machines
    that differ here (another CPU's vector width or library kernels) compute a recorded training differently in
    the last bits, and a training amplifies them; with the same stamp, they compute it bit for bit as far as
    these probes tell. Sizes stay below torch's parallel grain, so the thread count does not enter."""
    g = torch.Generator().manual_seed(0)
    h = hashlib.sha256()
    for n in (7, 31, 64, 100, 257, 384, 1000, 4099):
        x = torch.randn(n, generator=g) * 3
        m = (torch.rand(n, generator=g) > 0.3).float()
        mean = (x * m).sum() / m.sum()
        whitened = (x - mean) / torch.sqrt(((x - mean) ** 2 * m).sum() / m.sum() + 1e-8) * m
        a, b = torch.randn(n % 61 + 3, 48, generator=g), torch.randn(48, 37, generator=g)
        rows = torch.randn(32, n % 29 + 4, generator=g)
        for t in (x.sum(), x.mean(), x.exp(), x.log_softmax(0), torch.tanh(x), whitened, a @ b, (a @ b).softmax(-1),
                  rows.sum(1), rows.mean(), rows.logsumexp(1)):
            h.update(t.detach().numpy().tobytes())
    return h.hexdigest()[:16]
