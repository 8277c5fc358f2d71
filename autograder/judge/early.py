"""A grade's sandboxed children, started as early as can be: their interpreters' imports (~1 s of CPU each where
each child is a fresh interpreter, as for a judge that is not root; where it is root, the zygote's one import, and the
secrets probe's fresh start, which imports no torch) overlap the judge's own preparation. Nothing here imports
torch, so `grade` starts them before the judge imports it.

    found = start_for(path, cfg, mode)  # the command, at once: None when no submission is found (the grade says why)
    start(found, cfg, mode)             # the grade, once it has the submission (a no-op for a child already started)

Either way, sandbox.started hands each child over where it is needed, and the grade's end kills the ones never used
(sandbox.discard_early): an early child runs nothing of the submission before its hand-over confines it.
"""

from __future__ import annotations

from pathlib import Path

from autograder.judge.discovery import Contract, Submission, SubmissionNotFound, find_submission, is_empty
from autograder.lab.config import Config
from autograder.sandbox import sandbox
from autograder.sandbox.isolation import IsolationError


def start(found: Submission, cfg: Config, mode: str, worker: bool = True) -> None:
    """The secrets probe's (a full grade) and (`worker`) the first lane's child's interpreters, for the submission
    `found`."""
    if mode == "full":
        sandbox.start_early(None, cfg.limits, program="probe.py")
    if worker and not found.problem and not is_empty(found.path):
        sandbox.start_early(found.path, cfg.limits)


def start_for(path: Path, cfg: Config, mode: str) -> Submission | None:
    """`start` for the submission found at `path`, returned for the grade (a notebook is converted once); None
    when none is found there or the children could not start: the grade meets the same problem where it can say
    it."""
    try:
        found = find_submission(path, Contract.of(cfg))
    except (SubmissionNotFound, OSError):
        return None
    try:
        start(found, cfg, mode)
    except (IsolationError, sandbox.SandboxError, OSError):
        pass
    return found
