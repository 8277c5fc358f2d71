"""The coordinator of a batch: decide what to grade, run the jobs, write results as they land.

    summary = grade_all(Path("submissions"), Path("grades"), workers=2)

1. discover the submissions; compute each job's key (submission bytes, `--only`, grader version)
   before importing anything heavy, and keep every student whose record has that key;
2. grade the rest on local worker processes or a Dask cluster, writing each student's reports and
   record atomically as soon as its outcome arrives, and rewriting the gradebook after each;
3. render the class report.
A rerun with nothing changed imports no torch and starts no process.
"""

from __future__ import annotations

import datetime
import os
import time
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

import yaml
from rich.console import Console

from autograder.batch import store
from autograder.batch.discover import Submission, discover
from autograder.batch.fingerprint import grader_version, job_key
from autograder.batch.gradebook import write_gradebook
from autograder.batch.jobs import failed
from autograder.paths import GRADING_YAML

GRADEBOOK = "gradebook.csv"
CLASS_REPORT = "class_report.html"


class BatchError(Exception):
    """The batch cannot start (a wrong argument): exit non-zero with this message."""


@dataclass
class Summary:
    students: int
    up_to_date: int
    graded: int           # graded in this run (a submission's own failure still counts as graded)
    failed: int           # failed to grade in this run
    seconds: float
    other_grader: int     # outcomes from a worker running a different grader version (Dask)


def default_workers() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


def grade_all(source: Path, out: Path, workers: int | None = None, force: bool = False,
              only: list[str] | None = None, dask: str | None = None, console: Console | None = None,
              retry_failed: bool = False) -> Summary:
    started = time.monotonic()
    console = console or Console(stderr=True, soft_wrap=True)
    settings = yaml.safe_load(GRADING_YAML.read_text())
    parts, job_seconds = list(settings["parts"]), float(settings["batch"]["job_seconds"])
    only = sorted(set(only)) if only else None
    unknown = sorted(set(only or []) - {*parts, "e2e"})
    if unknown:
        raise BatchError(f"--only {','.join(unknown)}: not a part ({', '.join(parts)}) nor e2e")
    if not (source.is_dir() or zipfile.is_zipfile(source)):
        raise BatchError(f"{source} is neither a folder nor a zip file")
    subs = {s.student: s for s in discover(source, skip=out)}
    version = grader_version()
    out.mkdir(parents=True, exist_ok=True)

    records: dict[str, dict] = {}
    todo: list[tuple[Submission, str]] = []
    up_to_date = 0
    last_seconds: dict[str, float] = {}
    for sub in subs.values():
        data = sub.problem.encode() if sub.problem else sub.data()
        key = job_key(data, sub.filename, only, version)
        old = store.load(out, sub.student)
        retry = retry_failed and old is not None and old["status"] == "failed" and not sub.problem
        if not (force or retry) and store.is_current(out, old, key):
            records[sub.student] = old
            up_to_date += 1
        elif sub.problem:  # nothing to grade: its "failed to grade" row needs no worker
            job = {"student": sub.student, "key": key}
            records[sub.student] = store.save(out, failed(job, sub.problem), _identity(sub, version, only))
        else:
            todo.append((sub, key))
            last_seconds[sub.student] = (old or {}).get("seconds") or float("inf")
            records[sub.student] = _pending(sub)
    console.print(f"{len(subs)} submissions in {source}: {up_to_date} up to date, {len(todo)} to grade"
                  + (f" (--only {','.join(only)})" if only else ""))
    todo.sort(key=lambda item: -last_seconds[item[0].student])  # longest first (as last time; new ones first)
    gradebook = out / GRADEBOOK
    write_gradebook(gradebook, list(records.values()), parts)

    graded = failures = other = 0
    if todo:
        from autograder.batch.progress import progress_bar
        with progress_bar(console) as bar:
            task = bar.add_task("grading", total=len(todo), failed=0)
            for outcome in _outcomes(todo, only, version, workers, job_seconds, dask):
                sub = subs[outcome["student"]]
                worker = outcome.pop("worker_grader", version)
                if worker != version:  # recorded under the grader that made it: the next run regrades it
                    other += 1
                    outcome["key"] = job_key(sub.data(), sub.filename, only, worker)
                record = store.save(out, outcome, _identity(sub, worker, only))
                records[sub.student] = record
                write_gradebook(gradebook, list(records.values()), parts)
                if record["status"] == "failed":
                    failures += 1
                    console.print(f"[red]failed to grade[/red] {sub.student}: {record['reason']}")
                else:
                    graded += 1
                bar.update(task, advance=1, failed=failures)

    from autograder.batch.class_report import write_class_report
    write_class_report(out / CLASS_REPORT, list(records.values()), parts, settings["assignment"])
    return Summary(len(subs), up_to_date, graded, failures, time.monotonic() - started, other)


def _outcomes(todo: list[tuple[Submission, str]], only: list[str] | None, version: str, workers: int | None,
              job_seconds: float, dask: str | None) -> Iterator[dict]:
    jobs = ({"student": sub.student, "filename": sub.filename, "data": sub.data(), "only": only or [],
             "key": key} for sub, key in todo)
    if dask:
        from autograder.batch.dask_runner import run_on_dask
        yield from run_on_dask(dask, jobs)
        return
    from autograder.batch.pool import LocalPool
    with LocalPool(workers or default_workers(), job_seconds) as pool:
        yield from pool.run(jobs)


def _pending(sub: Submission) -> dict:
    return {"student": sub.student, "name": sub.name, "email": sub.email, "status": "pending", "key": None,
            "score": None, "max_score": None, "parts": {}, "e2e": None, "tests": [], "seconds": 0.0, "reason": ""}


def _identity(sub: Submission, version: str, only: list[str] | None) -> dict:
    """What the record says besides the outcome: who, which file, which grader, when."""
    return {"name": sub.name, "email": sub.email, "file": sub.member, "grader": version, "only": only or [],
            "graded_at": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")}
