"""Run a batch's jobs on an existing Dask distributed cluster (`grade-all --dask ADDRESS`).

Each job is the same `run_job` as with local workers: the submission's bytes go to a Dask worker,
which runs the sandboxed grade on its own machine and sends back plain data; the coordinator writes
the results. Every worker needs this project installed (the same commit: a job reports its
worker's grader version and the coordinator refuses an outcome from a different grader).
A job whose worker dies is retried by Dask on another worker, then becomes "failed to grade".
Dask workers must not be daemonic processes (`DASK_DISTRIBUTED__WORKER__DAEMON=False`): a full
grade starts a second judge process for the end-to-end tests of lane 1.
"""

from __future__ import annotations

import uuid
from typing import Iterable, Iterator

from autograder.batch.jobs import failed, run_job

DAEMON_HINT = "start the Dask workers with DASK_DISTRIBUTED__WORKER__DAEMON=False"


def run_on_dask(address: str, jobs: Iterable[dict]) -> Iterator[dict]:
    """Outcomes of `jobs` graded on the cluster at `address`, in the order they finish."""
    try:
        from distributed import Client, as_completed
    except ImportError as exc:
        raise RuntimeError('--dask needs dask.distributed: pip install "llm-labs-autograder[dask]"') from exc
    with Client(address, timeout="30s") as client:
        futures = {client.submit(run_job, job, pure=False, key=f"grade-{job['student']}-{uuid.uuid4().hex[:8]}"):
                   job for job in jobs}
        for future in as_completed(futures):
            job = futures[future]
            try:
                outcome = future.result()
                if "daemonic processes" in outcome["reason"]:  # the grade could not start its e2e lane
                    outcome["reason"] += f" ({DAEMON_HINT})"
                yield outcome
            except Exception as exc:  # noqa: BLE001 - e.g. KilledWorker: this submission's row only
                yield failed(job, f"the Dask job failed: {type(exc).__name__}: {str(exc)[:300]}")
            finally:
                future.release()
