"""Lab 13's e2e calibration: the reference over many seeds, each criterion's distribution and margin.

    python -m labs.lab13.grading.calibrate [--seeds 50] [--workers 2] [--tests a,b] [--raw FILE] [--set T.K=V]

Seed i of a test is its grading.yaml seed + i (i = 0 is the graded seed): other GRPO rollouts and
evaluation problems, other labeler pairs and DPO minibatches. The policy is grading.yaml's `calibration`
(as Lab 12's, docs/calibration.md): no seed fails, and the worst seed lies >= min_margin_std standard
deviations and >= min_margin inside every threshold. Margins come from the engine's own
`autograder.validity.calibration.Row`. Writes data/calibration.json (the table) unless --no-write; --raw
appends each run as a JSON line and skips runs already there (resumable). Exit 1 when a margin is thin.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import sys
import time
from pathlib import Path

import yaml

from autograder.validity.calibration import Row, apply_overrides, quantile

from . import world

DATA = Path(__file__).resolve().parent / "data"


def load_config() -> dict:
    return yaml.safe_load(world.GRADING_YAML.read_text())


def groups_of(tests: list[str]) -> list[tuple[str, ...]]:
    """Tests measured in one process because one reuses the other's runs (`shares`)."""
    from .e2e import REGISTRY
    groups = [(REGISTRY[t].shares, t) for t in tests if REGISTRY[t].shares in tests]
    groups += [(t,) for t in tests if not any(t in g for g in groups)]
    return groups


def run_task(args: tuple[tuple[str, ...], int, dict, str | None]) -> list[dict]:
    """Measure the task's tests for seed `index` with the reference (or a bank entry replacing one function)."""
    tests, index, e2e, entry = args
    import torch
    torch.set_num_threads(1)
    from . import e2e as e2e_mod
    sys.path.insert(0, str(world.ASSIGNMENT))
    import training
    reference = world.load_reference()
    parts = training.Parts.from_module(reference)
    if entry is not None:
        from .bank import entry_function, load_all
        found = next(e for e in load_all() if e.id == entry)
        parts = parts.replace(**{found.function: entry_function(found)})
    memo: dict = {}
    out = []
    for test in tests:
        spec = {**e2e[test], "seed": e2e[test]["seed"] + index}
        t0 = time.process_time()
        try:
            metrics, _, _ = e2e_mod.REGISTRY[test].measure(None, spec, parts, memo)
            verdict = e2e_mod.REGISTRY[test].verdict(spec, metrics)
        except (RuntimeError, ValueError) as exc:
            metrics, verdict = None, f"training diverged: {str(exc)[:120]}"
        out.append({"test": test, "seed": index, "entry": entry, "metrics": metrics, "verdict": verdict,
                    "cpu": time.process_time() - t0})
    return out


def summarise(runs: list[dict], e2e: dict, min_std: float, min_abs: float) -> list[Row]:
    from autograder.e2e import margin, threshold

    from .e2e import REGISTRY
    rows = []
    for test in dict.fromkeys(r["test"] for r in runs):
        mine = [r for r in runs if r["test"] == test and r["entry"] is None]
        for c in REGISTRY[test].criteria:
            bound = threshold(e2e[test], c.bound)
            values = [r["metrics"][c.metric] for r in mine if r["metrics"] is not None]
            failures = sum(1 for r in mine if r["metrics"] is None
                           or margin(r["metrics"][c.metric], bound, c.side) < 0)
            rows.append(Row(test, c.metric, c.side, bound, values, failures, min_std, min_abs))
    return rows


def table(rows: list[Row]) -> str:
    lines = ["| test | metric | criterion | seeds | min | p10 | median | max | std | worst margin | in std | ok |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        v = r.values
        lines.append(f"| {r.test} | {r.metric} | {r.side} {r.threshold:g} | {len(v)} | {min(v):.3f} | "
                     f"{quantile(v, 0.1):.3f} | {quantile(v, 0.5):.3f} | {max(v):.3f} | {r.std:.3f} | "
                     f"{r.worst_margin:.3f} | {r.margin_in_std:.1f} | {'yes' if r.ok else 'NO'} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=None)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--tests", default="")
    parser.add_argument("--set", action="append", default=[], metavar="TEST.KEY=VALUE")
    parser.add_argument("--raw", type=Path, default=None)
    parser.add_argument("--entry", default=None, help="a bank entry id replacing one reference function")
    parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args(argv)
    cfg = load_config()
    e2e = apply_overrides(cfg["e2e"], args.set)
    seeds = args.seeds if args.seeds is not None else cfg["calibration"]["seeds"]
    tests = args.tests.split(",") if args.tests else list(e2e)
    done = [json.loads(line) for line in args.raw.read_text().splitlines()] if args.raw and args.raw.exists() else []
    have = {(r["test"], r["seed"], r["entry"]) for r in done}
    tasks = [(g, i, e2e, args.entry) for i in range(seeds) for g in groups_of(tests)
             if not all((t, i, args.entry) in have for t in g)]
    runs = [r for r in done if r["test"] in tests and r["seed"] < seeds and r["entry"] == args.entry]
    with multiprocessing.get_context("spawn").Pool(args.workers) as pool:
        for result in pool.imap_unordered(run_task, tasks):
            runs += result
            if args.raw:
                with args.raw.open("a") as f:
                    f.writelines(json.dumps(r) + "\n" for r in result)
            print(f"{len(runs)} runs: " + ", ".join(f"{r['test']}#{r['seed']} {r['verdict'] or 'pass'}"
                                                    for r in result), file=sys.stderr, flush=True)
    cal = cfg["calibration"]
    rows = summarise(runs, e2e, cal["min_margin_std"], cal["min_margin"])
    print(table(rows))
    if not args.no_write and args.entry is None:
        DATA.mkdir(exist_ok=True)
        (DATA / "calibration.json").write_text(json.dumps(
            {"seeds": seeds, "rows": [{"test": r.test, "metric": r.metric, "side": r.side, "threshold": r.threshold,
                                       "min": min(r.values), "max": max(r.values), "std": r.std,
                                       "worst_margin": r.worst_margin, "margin_in_std": r.margin_in_std,
                                       "failures": r.failures, "ok": r.ok} for r in rows]}, indent=1) + "\n")
    return 0 if all(r.ok for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
