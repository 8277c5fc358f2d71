"""`calibrate [--seeds N] [--workers 2]`: the e2e tests' reference distributions, margins and band."""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from autograder.commands.common import FAILURES, add_workers, check_names, comma_list, fail, load_config
from autograder.lab.paths import LAB_DATA
from autograder.validity import mistake_outcomes

HELP = "run the end-to-end tests for the reference over many seeds; print distributions and margins"
EXAMPLES = """examples:
  python -m autograder calibrate                                   every e2e test, grading.yaml's seed count
  python -m autograder calibrate --tests kl_penalty --seeds 10 --no-write
  python -m autograder calibrate --set blind_spot.ppo.lr=4e-4 --tests blind_spot --seeds 5 --no-write
  python -m autograder calibrate --seeds 0 --mistakes all          which bank mistakes fail which e2e tests
  python -m autograder calibrate --raw runs.jsonl                  resumable: rerun the same command after a stop

Exit 1: a reference seed fails a test, or a margin is thinner than grading.yaml's calibration asks."""
INTERRUPTED = "calibrate stopped; with --raw, the same command resumes where it stopped"
DATA = LAB_DATA


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--seeds", type=int, default=None,
                        help="reference seeds per test (default: grading.yaml calibration.seeds)")
    add_workers(parser, "worker processes (one torch thread each)")
    parser.add_argument("--tests", type=comma_list, default=[],
                        help="comma-separated e2e tests to calibrate (default: every test in grading.yaml)")
    parser.add_argument("--set", action="append", default=[], metavar="TEST.KEY=VALUE",
                        help="try other settings than grading.yaml's, e.g. blind_spot.ppo.lr=4e-4")
    parser.add_argument("--mistakes", type=comma_list, default=[],
                        help="also run bank mistakes: 'all' (every mistake of a part an e2e test trains "
                             "with) or comma-separated ids such as gae.forward_recursion")
    parser.add_argument("--mistake-seeds", type=int, default=mistake_outcomes.SEEDS,
                        help="seeds per mistake and test (a mistake is held to failing a test that fails on all)")
    parser.add_argument("--band", type=Path, default=DATA / "reference_band.json",
                        help="where to write the reference band for the report's plots")
    parser.add_argument("--raw", type=Path, default=None,
                        help="append every run's metrics to this JSON-lines file as it finishes; runs already "
                             "in it (same settings) are not run again, so an interrupted calibration resumes")
    parser.add_argument("--no-write", action="store_true",
                        help="write neither the band nor the mistakes' e2e outcomes (e2e_mistakes.json)")


def main(args: argparse.Namespace) -> int:
    from autograder.validity import calibration as cal

    cfg = load_config()
    seeds = args.seeds if args.seeds is not None else cfg.calibration.seeds  # 0: mistakes only
    min_std, min_abs = cfg.calibration.min_margin_std, cfg.calibration.min_margin
    e2e = cal.apply_overrides(cfg.e2e, args.set)
    tests = check_names("--tests", args.tests, list(e2e)) if args.tests else list(e2e)
    tasks = cal.tasks_for(tests, seeds)
    for entry_id in _mistakes(args.mistakes, tests, e2e):
        part = entry_id.split(".")[0]
        tasks += cal.tasks_for([t for t in tests if part in e2e[t]["parts"]], args.mistake_seeds, entry_id)

    done = cal.load_raw(args.raw, e2e) if args.raw else []
    tasks = [t for t in tasks if not cal.task_done(t, done)]
    started = time.monotonic()
    print(f"calibrating {', '.join(tests)}: {seeds} reference seeds, {len(tasks)} tasks on {args.workers} workers"
          + (f" ({len(done)} runs resumed from {args.raw})" if done else ""))
    for item in args.set:
        print(f"  setting {item}")
    runs = cal.unique(done + cal.run_all(e2e, tasks, args.workers, progress=_progress(started, args.raw, e2e)))
    print(f"done in {time.monotonic() - started:.0f} s wall\n")

    rows = cal.summarise(runs, e2e, min_std, min_abs)
    print(format_rows(rows, min_std, min_abs))
    outcomes = cal.mistake_outcomes(runs)
    if outcomes:
        print("\n" + format_outcomes(outcomes))
    if not args.no_write:
        band = cal.reference_band(runs)
        if band:
            kept = json.loads(args.band.read_text()) if args.band.is_file() else {}
            args.band.parent.mkdir(parents=True, exist_ok=True)  # the tests not calibrated now keep their band
            args.band.write_text(json.dumps({**kept, **band}, separators=(",", ":")) + "\n")
            print(f"\nreference band ({', '.join(band)}) written to {args.band}")
        if outcomes and args.set:
            print(f"mistakes' e2e outcomes not written to {mistake_outcomes.DATA_FILE}: --set changed the settings")
        elif outcomes:
            mistake_outcomes.merge(outcomes, args.mistake_seeds)
            print(f"mistakes' e2e outcomes merged into {mistake_outcomes.DATA_FILE} (the mistakes and tests not run "
                  "now kept)")
    bad = [r for r in rows if not r.ok]
    for r in bad:
        why = f"{r.failures} reference seed(s) fail" if r.failures else "the margin is thin"
        print(f"FAIL {r.test}.{r.metric}: {why}", file=sys.stderr)
    return FAILURES if bad else 0


def _mistakes(spec: list[str], tests: list[str], e2e: dict) -> list[str]:
    if not spec:
        return []
    from autograder.lab import bank
    mistakes = [e for e in bank.load_all() if e.is_mistake]
    if spec == ["all"]:
        trained = {p for t in tests for p in e2e[t]["parts"]}
        return [e.id for e in mistakes if e.part in trained]
    known = {e.id for e in mistakes}
    missing = sorted(set(spec) - known)
    if missing:
        fail(f"--mistakes: unknown bank mistakes: {', '.join(missing)} (ids look like {min(known)}; or 'all')")
    return spec


def _progress(started: float, raw: Path | None, e2e: dict):
    from autograder.validity.calibration import append_raw

    def report(done: int, total: int, runs) -> None:
        if raw:
            append_raw(raw, runs, e2e)
        what = ", ".join(f"{r.test}[{r.index}]{'/' + r.entry if r.entry else ''}"
                         f"{' FAIL' if r.message and r.entry is None else ''}" for r in runs)
        print(f"  {done}/{total} {time.monotonic() - started:5.0f} s  {what}", flush=True)
    return report


def format_rows(rows, min_std: float, min_abs: float) -> str:
    from autograder.validity.calibration import quantile
    head = (f"{'test.metric':28} {'n':>3} {'min':>7} {'5%':>7} {'median':>7} {'95%':>7} {'max':>7} {'std':>6}"
            f"  {'threshold':>11} {'fails':>5} {'margin':>7} {'/std':>6}")
    lines = [head, "-" * len(head)]
    for r in rows:
        v = r.values
        stats = " ".join(f"{x:7.3f}" for x in (min(v, default=float('nan')), quantile(v, .05), quantile(v, .5),
                                                quantile(v, .95), max(v, default=float('nan'))))
        flag = "" if r.ok else "  <- " + ("FAILS" if r.failures else "THIN")
        lines.append(f"{r.test + '.' + r.metric:28} {len(v):3d} {stats} {r.std:6.3f}  {r.side:>2} {r.threshold:8.3f}"
                     f" {r.failures:5d} {r.worst_margin:7.3f} {r.margin_in_std:6.1f}{flag}")
    lines.append(f"(margin: worst reference seed to the threshold; required >= {min_abs:g} and >= {min_std:g} std)")
    return "\n".join(lines)


def format_outcomes(outcomes: dict) -> str:
    lines = ["bank mistakes: fraction of seeds failing each e2e test"]
    for entry, tests in sorted(outcomes.items()):
        lines.append(f"  {entry:36} " + "  ".join(f"{t} {frac:.2f}" for t, frac in sorted(tests.items())))
    return "\n".join(lines)
