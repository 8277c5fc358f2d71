"""A standalone runner for Lab 13's checks and e2e tests, in process, until issue 21's seam grades the lab.

    python -m labs.lab13.grading.local PATH [--e2e] [--only PART,...]

`LocalSubmission` answers `ctx.sub.call` as the engine's RemoteSubmission does (value, gradients of a
one-element answer, SubmissionError kinds), but in this process: trusted code only (the reference, the
bank, the nulls, the starter). Student code is graded by the engine's sandbox once the seam lands.
Points come from grading.yaml; each failure gets a hint only when exactly one bank mistake reproduces it.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from types import ModuleType

import torch
import yaml

from autograder.checks import CheckFailed, Context
from autograder.remote import SubmissionError

from . import world


class LocalSubmission:
    """A trusted module called like the sandboxed submission: `call(fn, *args, grad=(...), **kwargs)`."""

    def __init__(self, module: ModuleType):
        self.module = module

    def call(self, fn: str, *args, grad: tuple[int, ...] = (), timeout: float | None = None, valid: bool = True,
             **kwargs):
        function = getattr(self.module, fn, None)
        if not callable(function):
            raise SubmissionError(f"{fn} is not defined", kind="missing")
        args = tuple(a.detach().clone().requires_grad_(i in grad) if isinstance(a, torch.Tensor) else a
                     for i, a in enumerate(args))
        before = [a.detach().clone() if isinstance(a, torch.Tensor) else None for a in args]
        try:
            value = function(*args, **kwargs)
        except NotImplementedError as exc:
            if valid:
                raise SubmissionError(f"{fn} is not implemented yet", kind="not_implemented") from None
            raise SubmissionError(f"{fn} raised NotImplementedError", kind="raised", exc_type="NotImplementedError",
                                  detail=str(exc)) from None
        except Exception as exc:  # noqa: BLE001 - any error of the submission is its answer
            raise SubmissionError(f"{fn} raised {type(exc).__name__}", kind="raised", exc_type=type(exc).__name__,
                                  detail=str(exc)) from None
        for i, (a, b) in enumerate(zip(args, before)):
            if b is not None and not torch.equal(a.detach(), b):
                raise SubmissionError(f"{fn} modified its argument number {i + 1} in place", kind="mutated")
        grads: list = []
        if grad:
            if isinstance(value, torch.Tensor) and value.requires_grad and value.numel() == 1:
                targets = [args[i] for i in grad]
                grads = list(torch.autograd.grad(value, targets, allow_unused=True))
            else:
                grads = [None for _ in grad]
        if isinstance(value, torch.Tensor):
            value = value.detach()
        elif isinstance(value, tuple):
            value = [v.detach() if isinstance(v, torch.Tensor) else v for v in value]
        return value, grads


def config() -> dict:
    return yaml.safe_load(world.GRADING_YAML.read_text())


def run_checks(module: ModuleType, reference: ModuleType | None, parts: tuple[str, ...] = (),
               diagnose: bool = True) -> dict[str, tuple[float, float, str, str]]:
    """check id -> (points earned, points, message, hint); the reference None runs the public checks only."""
    from . import diagnosis
    from .checks import load_all
    cfg = config()
    checks = load_all(hidden=reference is not None)
    ctx = Context(sub=LocalSubmission(module), ref=reference, hypothesis=cfg["hypothesis"])
    results = {}
    for cid, chk in checks.items():
        if (parts and chk.part not in parts) or (reference is None and ".public." not in chk.run.__module__):
            continue
        points = float(cfg["tests"][cid]["points"])
        try:
            chk.run(ctx)
            results[cid] = (points, points, "", "")
        except CheckFailed as failure:
            hint = diagnosis.hint(failure, reference) if diagnose and reference is not None else ""
            results[cid] = (0.0, points, failure.message, hint)
        except SubmissionError as exc:
            results[cid] = (0.0, points, str(exc), "")
    return results


def run_e2e(module: ModuleType, reference: ModuleType, tests: tuple[str, ...] = ()) -> dict[str, tuple]:
    """e2e test -> (points earned, points, message, metrics): the module's functions for the test's parts,
    the reference's for every other part (one mistake costs points once)."""
    from .e2e import REGISTRY
    from .lab import make_parts
    cfg = config()
    memo: dict = {}
    results = {}
    for name, spec in cfg["e2e"].items():
        if tests and name not in tests:
            continue
        functions = {fn: getattr(reference, fn) for part in cfg["parts"] for fn in cfg["parts"][part]}
        for part in spec["parts"]:
            functions.update({fn: getattr(module, fn) for fn in cfg["parts"][part]})
        parts = make_parts(functions)
        points = float(spec["points"])
        try:
            metrics, details, _ = REGISTRY[name].measure(None, spec, parts, memo.setdefault(tuple(spec["parts"]), {}))
            message = REGISTRY[name].verdict(spec, metrics)
        except NotImplementedError as exc:
            metrics, message = {}, f"not implemented: {exc}"
        except Exception as exc:  # noqa: BLE001 - a submission's answer that breaks the training fails the test
            metrics, message = {}, f"training failed: {type(exc).__name__}: {str(exc)[:160]}"
        results[name] = (0.0 if message else points, points, message, metrics)
    return results


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("path", type=Path)
    parser.add_argument("--e2e", action="store_true")
    parser.add_argument("--only", default="")
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    module = world.load_module(args.path, "submission")
    reference = world.load_reference()
    parts = tuple(args.only.split(",")) if args.only else ()
    got = total = 0.0
    for cid, (earned, points, message, hint) in run_checks(module, reference, parts).items():
        got, total = got + earned, total + points
        print(f"{'PASS' if earned else 'FAIL'} {earned:g}/{points:g} {cid}" + (f": {message}" if message else "")
              + (f"\n      hint: {hint}" if hint else ""))
    if args.e2e:
        for name, (earned, points, message, metrics) in run_e2e(module, reference).items():
            got, total = got + earned, total + points
            shown = ", ".join(f"{k} {v:.3f}" for k, v in metrics.items())
            print(f"{'PASS' if earned else 'FAIL'} {earned:g}/{points:g} e2e.{name} [{shown}]"
                  + (f": {message}" if message else ""))
    print(f"score {got:g}/{total:g} = {100 * got / total:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
