"""The per-submission job of a batch: grade one submission with the same engine as `grade`.

    outcome = run_job({"student": "ada", "filename": "lab.py", "data": b"...", "only": ["gae"],
                       "key": "...", "version": "..."})

It runs in a worker (a local process or a Dask worker on another machine): the submission travels
as bytes, and the outcome is plain data (numbers, strings, lists and dicts) holding the summary
the gradebook needs and the text of every report `grade` writes (results.json, the student's
report.md and report.html, staff.md). The coordinator writes everything; a job
never touches the output folder. Any exception of the grader becomes a "failed" outcome with the
reason, so one submission never costs another its grade. The grade's own status (not importable,
not implemented, empty) and its detail become the record's status and reason.
"""

from __future__ import annotations

import os
import resource
import tempfile
import time
import traceback
from pathlib import Path

from autograder.batch.fingerprint import grader_version
from autograder.judge.outcome import part_table
from autograder.lab import config

REPORT_SECONDS = 60  # kept of a job's limit (batch.job_seconds) for writing the reports after the grade
TEMP_PREFIX = "autograder-batch-"  # + the worker's pid: the pool removes what a killed worker left behind


def run_job(job: dict) -> dict:
    """Grade `job["data"]` (saved as `job["filename"]`) with `--only job["only"]`; never raises Exception."""
    started = time.monotonic()
    try:
        outcome = _grade(job)
    except Exception as exc:  # noqa: BLE001 - a grader failure is this submission's "failed to grade" row
        outcome = failed(job, _reason(exc))
    outcome["seconds"] = round(time.monotonic() - started, 3)
    outcome.update(_memory())
    outcome["worker_grader"] = grader_version()
    return outcome


def failed(job: dict, reason: str, seconds: float = 0.0) -> dict:
    """The outcome of a job that could not be graded (also built by the coordinator, e.g. on a crash)."""
    return {"student": job["student"], "key": job["key"], "status": "failed", "reason": reason,
            "score": None, "max_score": None, "parts": {}, "e2e": None, "tests": [], "files": {},
            "seconds": round(seconds, 3)}


def _grade(job: dict) -> dict:
    from autograder.judge import lanes
    from autograder.judge.grade import grade  # torch and the engine: imported in the worker only
    from autograder.judge.report import write_reports

    if not job["only"] or "e2e" in job["only"]:
        lanes.import_dynamo()  # once per worker, shared by its grades' training lanes
    with tempfile.TemporaryDirectory(prefix=f"{TEMP_PREFIX}{os.getpid()}-") as tmp:
        path = Path(tmp) / "submission" / job["filename"]
        path.parent.mkdir()
        path.write_bytes(job["data"])
        # No platform kills a grade here: its wall-clock backstop is the worker's own job limit, less the reports'
        result = grade(path, only=set(job["only"]) or None, secrets=[Path(p) for p in job.get("secrets", [])],
                       lane_count=job.get("lanes"), wall_seconds=config.load().batch.job_seconds - REPORT_SECONDS)
        result.submission = f"{job['student']}/{job['filename']}"  # the reports name the student, not a temp path
        out = Path(tmp) / "out"
        write_reports(result, out)
        files = {p.name: p.read_text() for p in sorted(out.iterdir()) if p.is_file()}
    parts = {row["part"]: {"score": row["score"], "max": row["max"]} for row in part_table(result.tests)}
    e2e = parts.pop("e2e", None)
    tests = [{"id": t.id, "part": t.tags[0], "passed": t.passed, "score": t.score, "max_score": t.max_score,
              "seconds": round(t.seconds, 3), "diagnosis": t.diagnosis, "message": t.message[:300],
              "metrics": _metrics(t), "bounds": _bounds(t.id)}
             for t in result.tests]
    return {"student": job["student"], "key": job["key"], "status": result.status,  # graded, not_importable...
            "reason": result.status_detail if result.status != "graded" else "",
            "score": result.score, "max_score": result.max_score, "parts": parts, "e2e": e2e,
            "tests": tests, "files": files}


def _metrics(t) -> dict[str, float]:
    """An e2e test's measurements (gold gain, accuracy...) as plain floats, for the class report."""
    return {str(k): float(v) for k, v in t.finding.metrics.items() if isinstance(v, (int, float))}


def _bounds(test_id: str) -> dict[str, list]:
    """An e2e test's criteria as {metric: [">=", threshold]} (what the class report draws), else {}."""
    if not test_id.startswith("e2e."):
        return {}
    from autograder.judge import e2e
    from autograder.lab import config
    spec = config.load().e2e[test_id[4:]]
    return {c.metric: [c.side, e2e.threshold(spec, c.bound)] for c in e2e.REGISTRY[test_id[4:]].criteria}


def _reason(exc: Exception) -> str:
    """One line: the exception and where the grader raised it."""
    frames = traceback.extract_tb(exc.__traceback__)
    where = f" (at {Path(frames[-1].filename).name}:{frames[-1].lineno})" if frames else ""
    return f"grader error: {type(exc).__name__}: {str(exc)[:300]}{where}"


def _memory() -> dict:
    """Peak resident memory (MB) of this worker process and of the largest sandboxed child it ran."""
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    children = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    return {"worker_peak_mb": round(own, 1), "child_peak_mb": round(children, 1)}
