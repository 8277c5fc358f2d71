"""Local worker processes for a batch: each grades one submission at a time, under a deadline.

    with LocalPool(workers=2, job_seconds=1200) as pool:
        for outcome in pool.run(jobs):
            ...

Unlike a ProcessPoolExecutor, a worker that dies (a submission's child killed its judge, the
kernel's OOM killer...) or passes the deadline costs only the job it was running: that job becomes
a "failed to grade" outcome with the reason, and a fresh worker takes its place. Workers are
spawned (no fork of the coordinator's threads) and import the grading engine once each.
"""

from __future__ import annotations

import multiprocessing as mp
import os
import signal
import sys
import tempfile
import time
from collections import deque
from dataclasses import dataclass
from multiprocessing.connection import Connection, wait
from pathlib import Path
from typing import Iterable, Iterator

from autograder.batch.jobs import TEMP_PREFIX, failed, run_job
from autograder.sandbox.filetree import remove_tree

STOP_SECONDS = 10  # a worker asked to stop (SIGTERM: it kills its sandboxed child) is killed after this


def serve(conn: Connection) -> None:
    """A worker's loop: receive a job, send its outcome, until the coordinator goes away."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the coordinator's to handle
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))  # unwinds grade(), which kills its child
    from autograder.sandbox import zygote
    zygote.keep()  # one submission after another: the warm children's zygote serves every grade of this worker
    while True:
        try:
            job = conn.recv()
        except (EOFError, OSError):
            return
        outcome = run_job(job)
        try:
            conn.send(outcome)
        except (BrokenPipeError, OSError):
            return


@dataclass
class _Worker:
    process: mp.process.BaseProcess
    conn: Connection
    job: dict | None = None
    started: float = 0.0


class LocalPool:
    def __init__(self, workers: int, job_seconds: float):
        self.size, self.job_seconds = workers, job_seconds
        self._context = mp.get_context("spawn")
        self._workers: list[_Worker] = []

    def __enter__(self) -> "LocalPool":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def _spawn(self) -> _Worker:
        parent, child = self._context.Pipe()
        # not daemonic: a grade starts processes of its own (a second judge for e2e lane 1)
        process = self._context.Process(target=serve, args=(child,), name="autograder-grader")
        process.start()
        child.close()
        return _Worker(process, parent)

    def run(self, jobs: Iterable[dict]) -> Iterator[dict]:
        """Outcomes of `jobs`, in the order they finish."""
        _remove_leftovers()
        pending = deque(jobs)
        while len(self._workers) < min(self.size, len(pending)):
            self._workers.append(self._spawn())
        while pending or any(w.job for w in self._workers):
            for i, w in enumerate(self._workers):
                if w.job is None and pending:
                    try:
                        w.conn.send(pending[0])
                    except OSError:  # it died while idle: the job goes to a fresh worker
                        self._stop(w)
                        self._workers[i] = self._spawn()
                        continue
                    w.job, w.started = pending.popleft(), time.monotonic()
            busy = [w for w in self._workers if w.job is not None]
            deadline = min(w.started for w in busy) + self.job_seconds
            wait([w.conn for w in busy] + [w.process.sentinel for w in busy],
                 timeout=max(0.0, deadline - time.monotonic()))
            for i, w in enumerate(self._workers):
                if w.job is None:
                    continue
                outcome = self._collect(w)
                if outcome is not None:
                    yield outcome
                if w.job is None and not w.process.is_alive():
                    self._workers[i] = self._spawn()

    def _collect(self, w: _Worker) -> dict | None:
        """The worker's outcome if it finished, died or ran out of time; None while it works."""
        job = w.job
        assert job is not None  # only busy workers are collected
        if w.conn.poll():
            try:
                w.job = None
                return w.conn.recv()
            except (EOFError, OSError):
                pass  # it died while sending: report the death below
        elif w.process.is_alive():
            if time.monotonic() - w.started < self.job_seconds:
                return None
            self._stop(w)
            w.job = None
            return failed(job, f"grading took longer than {self.job_seconds:g} s and was stopped",
                          seconds=time.monotonic() - w.started)
        self._stop(w)
        w.job = None
        code = w.process.exitcode
        how = f"was killed by signal {-code}" if code is not None and code < 0 else f"exited with code {code}"
        return failed(job, f"the grading process {how} (the submission may have attacked it)",
                      seconds=time.monotonic() - w.started)

    def _stop(self, w: _Worker) -> None:
        """End a worker (SIGTERM lets it kill its sandboxed child; SIGKILL after STOP_SECONDS), and
        remove the job folder a killed worker left behind."""
        w.process.terminate()
        w.process.join(timeout=STOP_SECONDS)
        if w.process.is_alive():
            w.process.kill()
            w.process.join(timeout=5)
        w.conn.close()
        for leftover in Path(tempfile.gettempdir()).glob(f"{TEMP_PREFIX}{w.process.pid}-*"):
            remove_tree(leftover)

    def close(self) -> None:
        """Stop every worker: idle ones leave when their channel closes, busy ones are terminated."""
        for w in self._workers:
            if w.job is not None:
                w.process.terminate()
            w.conn.close()
        for w in self._workers:
            w.process.join(timeout=STOP_SECONDS)
            if w.process.is_alive():
                w.process.kill()
                w.process.join(timeout=5)
        self._workers = []
        _remove_leftovers()  # again: a killed worker may have been a zombie, still "alive", at the start


def _remove_leftovers() -> None:
    """Job folders of workers that no longer exist (a batch killed with all its workers)."""
    for folder in Path(tempfile.gettempdir()).glob(f"{TEMP_PREFIX}*-*"):
        pid = folder.name[len(TEMP_PREFIX):].split("-", 1)[0]
        if pid.isdigit() and not _alive(int(pid)):
            remove_tree(folder)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process
        return True
    return True
