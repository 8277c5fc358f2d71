"""Before a real grade: prove, from the child's own point of view, that no secret of the grader is readable.

    ensure_secrets_hidden(cfg.limits, extra=[out_dir, *other_submissions])   # raises SecretsVisible

A probe (autograder/sandbox/child/probe.py) is started exactly like the child that will run the submission
(same sandbox command, uid, rlimits, Landlock, seccomp) and tries to list, open and write every
secret: the reference, the hidden checks, the mistake bank, the diagnosis, calibration data, the
validity code, grading.yaml (autograder/sandbox/secret_files.py lists them), every copy of them found by
content where the child may read (a non-editable install in site-packages, another checkout, a
__pycache__: the sandbox hides these like the originals), and `extra` (the output folder, other
students' submissions). One it can read or write fails the grade closed, with one sentence that says
what to fix. Paths that do not exist (a student's self-check has none of them) need nothing, so the
self-check never refuses. Costs one small process start (~0.1 s, no torch import) and, once per
process, the search for copies (secret_files.py).

What the child may read is an allow-list (autograder/sandbox/readable.py): the interpreter, its standard library,
the installed files of the lab's run-time distributions, the world and its own submission; bubblewrap's
binds or Landlock's rules enforce it. Without either, nothing can (file modes hide only the files they are
set on, not an edited copy of the reference in a `src/` checkout, an egg or a cache beside the
interpreter): the grade is refused with one sentence. A byte-exact copy found beside the interpreter
(secret_files.py, the second line) that the probe could still read refuses the grade, naming it.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable
from pathlib import Path

from autograder.lab.config import Limits
from autograder.sandbox import isolation, secret_files
from autograder.sandbox.isolation import IsolationError
from autograder.sandbox.sandbox import Child, ChildFailure, SandboxError, started

CHUNK = 2_000  # paths per question to the probe (a frame's JSON stays far below wire.MAX_JSON)
USABLE = ("its world folder", "its submission folder", "its temp folder", "its world files")  # probe.usable's words


class SecretsVisible(IsolationError):
    """A secret would be readable (or writable) by the submission: grading here is refused."""


class ChildCannotWork(IsolationError):
    """The sandboxed child could not use its own folder (e.g. a TMPDIR its uid cannot search): every submission
    would be graded "not importable", so grading here is refused."""


def secret_paths(extra: Iterable[Path] = ()) -> list[Path]:
    """The grader's secrets that exist on this machine, and `extra`, each folder with everything beneath."""
    return secret_files.listed(extra)


def ensure_secrets_hidden(limits: Limits, extra: Iterable[Path] = (),
                          iso: isolation.Isolation | None = None) -> None:
    """Raise SecretsVisible (one sentence: what is exposed, what to do) unless the child could reach none."""
    iso = iso or isolation.detect()
    secrets = secret_paths(extra)
    if not secrets:
        return
    if not iso.bwrap and not iso.landlock:
        raise SecretsVisible("without bubblewrap or Landlock nothing limits what a submission reads to the "
                             "interpreter and the lab's packages, so a copy of the reference beside them (an "
                             f"edited one, an egg, a cache) would be in its reach ({iso.describe()}): install "
                             "bubblewrap (apt install bubblewrap) or use Linux >= 5.13 with Landlock enabled")
    copies = isolation.secret_copies()
    probe = _start_probe(limits, iso)
    exposed, identities = [], _identities([c.path for c in copies] + secrets)
    try:
        _ensure_usable(probe)
        for start in range(0, len(identities), CHUNK):
            answer = probe.request({"op": "probe", "paths": identities[start:start + CHUNK]}, timeout=60,
                                   what="the secrets probe")
            exposed += [p for p in answer.get("readable", []) + answer.get("writable", []) if isinstance(p, str)]
    except ChildFailure as exc:
        raise SecretsVisible(f"the secrets probe failed ({exc}); not grading") from None
    finally:
        probe.kill()
    copy = next((c for c in copies if str(c.path) in exposed), None)
    if copy is not None:
        raise SecretsVisible(f"{copy.path} is a copy of the grader's {copy.original} that submissions could read "
                             f"at this isolation level ({iso.describe()}): remove it (a non-editable `pip install` "
                             "of the grader puts one beside the interpreter; `pip install -e .` does not)")
    if exposed:
        raise SecretsVisible(f"{exposed[0]} (and {len(set(exposed)) - 1} more) would be readable or writable "
                             f"by submissions at this isolation level ({iso.describe()}): {_fix(iso)}")


def ensure_child_can_work(limits: Limits, iso: isolation.Isolation | None = None) -> None:
    """Raise ChildCannotWork (one sentence) unless a child started here could read its world and submission
    folders and write its temp folder (~0.1 s: one probe). ensure_secrets_hidden asks this too."""
    probe = _start_probe(limits, iso or isolation.detect())
    try:
        _ensure_usable(probe)
    finally:
        probe.kill()


def _start_probe(limits: Limits, iso: isolation.Isolation) -> Child:
    try:
        return started(None, limits, iso, program="probe.py")
    except (SandboxError, ChildFailure) as exc:
        raise SecretsVisible(f"cannot check that the grader's files are hidden from submissions ({exc}); "
                             "not grading") from None


def _ensure_usable(probe: Child) -> None:
    """The probe's answer to "usable": ChildCannotWork names the folder the child's uid cannot search."""
    try:
        answer = probe.request({"op": "usable"}, timeout=60, what="the sandbox's probe")
    except ChildFailure as exc:
        raise ChildCannotWork(f"the sandbox's probe failed ({exc}); not grading") from None
    if answer.get("usable") is True:
        return
    # only the grader's own words: the folders above the child's, and what the probe could not use
    above = {str(p) for p in [probe.home, *probe.home.parents]}
    blocked = next((p for p in sorted(above, key=len) if p == answer.get("blocked")), "")
    what = next((w for w in USABLE if w == answer.get("what")), "its own folder")
    why = f"{blocked} is not searchable by the sandbox's uid" if blocked else f"{what} is out of the child's reach"
    raise ChildCannotWork(f"submissions cannot run in {probe.home.parent} (the temporary folder: TMPDIR): {why} at "
                          f"this isolation level ({probe.isolation}), so every submission would be graded not "
                          "importable; set TMPDIR to a folder anyone may search and write in, like /tmp (mode 1777)")


def _identities(secrets: list[Path]) -> list[list]:
    """[path, device, inode] of each (the probe counts only the judge's own file, not one of the same
    name, e.g. bubblewrap's private /tmp); a file removed meanwhile needs no check."""
    found = []
    for path in secrets:
        try:
            info = os.stat(path, follow_symlinks=False)
        except OSError:
            continue
        found.append([str(path), info.st_dev, info.st_ino])
    return found


def _fix(iso: isolation.Isolation) -> str:
    """What would hide the secrets here, in one clause."""
    if not iso.own_uid and not iso.landlock:
        return ("install bubblewrap (apt install bubblewrap), or grade as root, or on Linux >= 5.13 with "
                "Landlock enabled; a student's self-check (python self_check.py) needs none of this")
    if iso.own_uid:
        return ("make them unreadable for other users (chown -R root:root, chmod -R go-rwx: the Gradescope "
                "bundle's setup.sh does this for /autograder/source), or install bubblewrap")
    return "install bubblewrap (apt install bubblewrap), or grade as root with the secrets not world-readable"


def main(argv: list[str]) -> int:
    """`python -m autograder.sandbox.preflight [EXTRA ...]`: check, print the level and the cost; exit 1 if refused."""
    import time

    from autograder.lab import config
    started, cpu = time.monotonic(), time.process_time()
    try:
        ensure_secrets_hidden(config.load().limits, [Path(a) for a in argv])
    except IsolationError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    print(f"secrets hidden from submissions ({isolation.detect().describe()}; {len(isolation.secret_copies())} "
          f"copies found and hidden; checked in {(time.monotonic() - started) * 1000:.0f} ms, "
          f"{(time.process_time() - cpu) * 1000:.0f} ms of CPU in this process)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
