"""The coordinator of a batch: decide what to grade, run the jobs, write results as they land.

    summary = grade_all(Path("submissions"), Path("grades"), workers=2)

1. check every argument before any work: DIR is this class's (store.ownership_problem; `force`
   overrides), the roster reads, every --student exists, DIR/overrides.csv is valid; discover the
   submissions, remove the results of students no longer among them (said, never silently);
2. compute each job's key (submission bytes, `--only`, grader version) before importing anything
   heavy, and keep every student whose record has that key (with --student: every other student);
3. grade the rest on local worker processes or a Dask cluster, writing each student's reports and
   record atomically as soon as its outcome arrives, and rewriting the gradebook after each;
4. write the Canvas export, the class report, the similar pairs (--similarity) and (asked for) the
   nbgrader gradebook's scores, all from the rows of batch/outputs.py (roster and overrides applied).
A rerun with nothing changed imports no torch and starts no process.
"""

from __future__ import annotations

import datetime
import difflib
import json
import time
import zipfile
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator

import yaml
from rich.console import Console

from autograder.batch import overrides as overrides_mod
from autograder.batch import similarity as similarity_mod
from autograder.batch import store
from autograder.batch.discover import Submission, discover
from autograder.batch.fingerprint import grader_version, job_key
from autograder.batch.gradebook import write_canvas, write_gradebook
from autograder.batch.jobs import failed
from autograder.batch.outputs import Views
from autograder.batch.roster import Enrolled, RosterError, read_roster
from autograder.judge.discovery import Contract
from autograder.lab import config, lab_problems

GRADEBOOK = "gradebook.csv"
CANVAS = "canvas.csv"
CLASS_REPORT = "class_report.html"
OWN_FILES = (GRADEBOOK, CANVAS, CLASS_REPORT, similarity_mod.FOLDER, store.OWNER)  # what grade-all writes in DIR
STAFF_FILES = (overrides_mod.FILE,)  # what staff write there for grade-all to read: never written nor removed


class BatchError(Exception):
    """The batch cannot start (a wrong argument): exit non-zero with this message."""


@dataclass
class Summary:
    students: int         # rows: submissions, plus enrolled students without one (--roster)
    up_to_date: int
    graded: int           # graded in this run (a submission's own failure still counts as graded)
    failed: int           # failed to grade in this run
    seconds: float
    other_grader: int     # outcomes from a worker running a different grader version (Dask)
    statuses: dict[str, int]   # every row's status -> how many
    removed: list[str]    # students whose results were removed (no longer among the submissions)
    submissions: int = 0  # entries found in SUBMISSIONS
    enrolled: int | None = None          # students on the roster (None: no --roster)
    not_on_roster: list[str] = field(default_factory=list)
    kept: int = 0         # with --student: the other students, kept as they were
    overridden: int = 0   # students with a manual override (DIR/overrides.csv)


def check_batch(source: Path, out: Path, only: list[str] | None, force: bool, cfg: config.Config) -> dict:
    """Every reason not to start that needs no discovery (BatchError); returns DIR's identity (store.OWNER)."""
    parts = list(cfg.parts)
    unknown = sorted(set(only or []) - {*parts, "e2e"})
    if unknown:
        raise BatchError(f"--only {','.join(unknown)}: not a part ({', '.join(parts)}) nor e2e")
    if not (source.is_dir() or zipfile.is_zipfile(source)):
        raise BatchError(f"{source} is neither a folder nor a zip file")
    identity = {"assignment": cfg.title, "parts": parts, "submissions": str(Path(source).resolve())}
    problem = store.ownership_problem(out, identity, OWN_FILES + STAFF_FILES)
    if problem and not force:
        raise BatchError(f"{problem}. Give another --out, or add --force to grade into it anyway: grade-all then "
                         f"removes only what it wrote there (student folders holding a {store.RECORD}, "
                         f"{', '.join(OWN_FILES)}) and keeps every other file")
    return identity


def max_points(cfg: config.Config, only: list[str] | None) -> float:
    """The points a full grade (or the --only selection) is out of: an empty submission's maximum."""
    return float(sum(spec.points for tid, spec in cfg.tests.items() if not only or tid.split(".")[0] in only))


def grade_all(source: Path, out: Path, workers: int = 1, force: bool = False,
              only: list[str] | None = None, dask: str | None = None, console: Console | None = None,
              retry_failed: bool = False, nbgrader: tuple[Path, str] | None = None, roster: Path | None = None,
              students: list[str] | None = None, similarity: bool = False) -> Summary:
    """Grade every submission of `source` into `out` (see the module docstring); `nbgrader`:
    (gradebook.db, assignment) to write the scores into; `roster`: the enrolled students; `students`: grade
    only these (--student); `similarity`: find the most similar pairs of submissions."""
    started = time.monotonic()
    console = console or Console(stderr=True, soft_wrap=True)
    try:
        cfg = config.load()
    except config.ConfigError as exc:
        raise BatchError(str(exc)) from None
    parts, job_seconds = list(cfg.parts), float(cfg.batch.job_seconds)
    only = sorted(set(only)) if only else None
    identity = check_batch(source, out, only, force, cfg)
    enrolled = _roster(roster)
    if similarity:
        try:
            similarity_mod.check_available()
        except similarity_mod.SimilarityUnavailable as exc:
            raise BatchError(str(exc)) from None
    try:
        subs = {s.student: s for s in discover(source, skip=out, contract=Contract.of(cfg),
                                               reserved=OWN_FILES + STAFF_FILES)}
    except (OSError, ValueError, yaml.YAMLError, zipfile.BadZipFile) as exc:
        raise BatchError(f"cannot read the submissions in {source}: {exc}") from None
    selected = _selected(students, subs, enrolled)
    targets = overrides_mod.maxima(cfg)
    views = Views(subs, enrolled, _overrides(out, subs, enrolled, targets), targets, max_points(cfg, only))
    version = grader_version()
    out.mkdir(parents=True, exist_ok=True)
    store.atomic_write(out / store.OWNER, json.dumps(identity, indent=1, sort_keys=True))
    removed = [s for s in store.student_folders(out) if s not in subs]
    store.remove_students(out, removed)
    if removed:
        console.print(f"removed the results of {len(removed)} students not in {source}: {', '.join(removed)}")

    records: dict[str, dict] = {}
    todo: list[tuple[Submission, str]] = []
    up_to_date = kept = 0
    last_seconds: dict[str, float] = {}
    for sub in subs.values():
        data = sub.problem.encode() if sub.problem else sub.data()
        key = job_key(data, sub.filename, only, version)
        old = store.load(out, sub.student)
        retry = retry_failed and old is not None and old["status"] == "failed" and not sub.problem
        if selected is not None and sub.student not in selected:
            records[sub.student] = old or _pending(sub)  # --student: everyone else stays as they are
            kept += 1
        elif old is not None and not (force or retry or selected) and store.is_current(out, old, key):
            records[sub.student] = old
            up_to_date += 1
        elif sub.problem:  # nothing to grade: its "empty or missing" row needs no worker
            job = {"student": sub.student, "key": key}
            records[sub.student] = store.save(out, empty(job, sub, max_points(cfg, only)),
                                              _identity(sub, version, only))
        else:
            todo.append((sub, key))
            last_seconds[sub.student] = (old or {}).get("seconds") or float("inf")
            records[sub.student] = _pending(sub)
    if todo:  # the lab folder's declarations (lab_problems), checked once something is to grade: a rerun with
        try:    # nothing changed imports no torch
            lab_problems.ensure_complete(cfg, grading=True)
        except config.ConfigError as exc:
            raise BatchError(str(exc)) from None
    console.print(f"{_count(len(subs), 'submission')} in {source}: "
                  + (f"{len(todo)} to grade (--student), the other {kept} kept as they are" if selected is not None
                     else f"{up_to_date} up to date, {len(todo)} to grade")
                  + (f" (--only {','.join(only)})" if only else ""))
    todo.sort(key=lambda item: -last_seconds[item[0].student])  # longest first (as last time; new ones first)
    gradebook = out / GRADEBOOK
    write_gradebook(gradebook, views.rows(records), parts)

    graded = failures = other = 0
    if todo:
        from autograder.batch.progress import progress_bar
        with progress_bar(console) as bar:
            task = bar.add_task("grading", total=len(todo), failed=0)
            secrets = [str(Path(source).resolve()), str(out.resolve())]
            for outcome in _outcomes(todo, only, version, workers, job_seconds, dask, secrets):
                sub = subs[outcome["student"]]
                worker = outcome.pop("worker_grader", version)
                if worker != version:  # recorded under the grader that made it: the next run regrades it
                    other += 1
                    outcome["key"] = job_key(sub.data(), sub.filename, only, worker)
                record = store.save(out, outcome, _identity(sub, worker, only))
                records[sub.student] = record
                write_gradebook(gradebook, views.rows(records), parts)
                if record["status"] == "failed":
                    failures += 1
                    console.print(f"[red]failed to grade[/red] {sub.student}: {record['reason']}")
                else:
                    graded += 1
                bar.update(task, advance=1, failed=failures)

    rows = views.rows(records)
    write_canvas(out / CANVAS, rows, cfg.title, max_points(cfg, only))
    views.show_overrides(out, rows)
    keys = {s: r["key"] for s, r in records.items() if r.get("key")}
    if similarity:
        _similarity(out, subs, records, keys, console)
    from autograder.batch.class_report import write_class_report
    thresholds = {name: dict(spec.settings) for name, spec in cfg.e2e.items()}
    write_class_report(out / CLASS_REPORT, rows, parts, cfg.title, thresholds,
                       similarity_mod.load_similarity(out, keys), len(enrolled) if enrolled is not None else None)
    if nbgrader is not None:
        from autograder.batch.nbgrader_gradebook import NbgraderError, write_scores
        try:
            written = write_scores(nbgrader[0], nbgrader[1], rows)
        except NbgraderError as exc:
            raise BatchError(f"the grades are saved in {out}, but not in nbgrader: {exc}") from None
        console.print(f"nbgrader gradebook {nbgrader[0]}: scores of {written} students written "
                      f"into assignment {nbgrader[1]}")
    statuses = Counter(r["status"] for r in rows)
    return Summary(len(rows), up_to_date, graded, failures, time.monotonic() - started, other, dict(statuses),
                   removed, submissions=len(subs), enrolled=len(enrolled) if enrolled is not None else None,
                   not_on_roster=views.not_on_roster, kept=kept,
                   overridden=sum(1 for r in rows if r.get("overrides")))


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" + ("" if n == 1 else "s")


def _roster(path: Path | None) -> list[Enrolled] | None:
    if path is None:
        return None
    try:
        return read_roster(path)
    except RosterError as exc:
        raise BatchError(str(exc)) from None


def _selected(students: list[str] | None, subs: dict[str, Submission], enrolled: list[Enrolled] | None) -> set | None:
    """The --student selection, each name checked against the class (BatchError naming the unknown ones)."""
    if not students:
        return None
    absent = {e.student for e in enrolled or []} - set(subs)
    why = []
    for name in students:
        if name in subs:
            continue
        if name in absent:
            why.append(f"{name} is on the roster but has no submission")
        else:
            near = difflib.get_close_matches(name, sorted(subs), n=1)
            why.append(f"{name} is not a student of this class" + (f" (did you mean {near[0]}?)" if near else ""))
    if why:
        raise BatchError(f"--student: {'; '.join(why)}")
    return set(students)


def _overrides(out: Path, subs: dict[str, Submission], enrolled: list[Enrolled] | None,
               targets: dict[str, float]) -> dict[str, list[overrides_mod.Override]]:
    path = out / overrides_mod.FILE
    if not path.is_file():
        return {}
    try:
        return overrides_mod.load(path, {*subs, *(e.student for e in enrolled or [])}, targets)
    except overrides_mod.OverridesError as exc:
        raise BatchError(str(exc)) from None


def _similarity(out: Path, subs: dict[str, Submission], records: dict[str, dict], keys: dict[str, str],
                console: Console) -> None:
    """Compare every submission that was read (not the starter's: nothing of it is counted) and keep the top
    pairs; every submission not compared is named with why (pairs.json, the class report, here)."""
    from autograder.judge.discovery import code_of
    from autograder.lab.paths import STARTER
    sources: dict[str, str] = {}
    skipped: dict[str, str] = {}
    for s, sub in subs.items():
        status = records[s]["status"]
        if not sub.member or sub.problem:
            skipped[s] = "nothing to compare" + (f" ({sub.problem})" if sub.problem else "")
        elif status in ("not_implemented", "pending"):
            skipped[s] = "the starter's stubs (not implemented)" if status == "not_implemented" else "not graded yet"
        else:
            try:
                code, why = similarity_mod.comparable(code_of(sub.filename, sub.data()))
            except (OSError, ValueError) as exc:
                code, why = "", f"its code could not be read ({exc})"
            if why:
                skipped[s] = why
            else:
                sources[s] = code
    pairs = similarity_mod.find_pairs(sources, [similarity_mod.strip_comments(STARTER.read_text())])
    similarity_mod.write_similarity(out, pairs, sources, keys, skipped)
    top = ""
    if pairs:
        share = 100 * max(pairs[0]["similarity_a"], pairs[0]["similarity_b"])
        top = f"; most similar: {pairs[0]['a']} and {pairs[0]['b']} ({share:.0f} % shared)"
    unread = {s: why for s, why in skipped.items() if not why.startswith(("nothing", "the starter", "not graded"))}
    left = (f"; not compared: {', '.join(f'{s} ({why})' for s, why in sorted(unread.items()))}" if unread else "")
    console.print(f"similarity: {_count(len(sources), 'submission')} compared{top}{left} "
                  "(class report, Similar pairs)", markup=False)


def empty(job: dict, sub: Submission, points: float) -> dict:
    """The record of a submission with nothing to grade (no file, an empty file, a link, several candidate
    files): 0 points."""
    return {**failed(job, sub.problem), "status": "ambiguous" if sub.ambiguous else "empty", "score": 0.0,
            "max_score": points}


def _outcomes(todo: list[tuple[Submission, str]], only: list[str] | None, version: str, workers: int,
              job_seconds: float, dask: str | None, secrets: list[str]) -> Iterator[dict]:
    """Each job's outcome; `secrets`: what no submission may reach (the class's files, the output folder).

    Local workers share this machine's CPUs: each grade gets CPUs / workers judge lanes (at least one);
    a Dask worker's grade decides from its own machine (lanes None)."""
    from autograder.judge.machine import usable_cpus
    lanes = None if dask else max(1, int(usable_cpus() // workers))
    jobs = ({"student": sub.student, "filename": sub.filename, "data": sub.data(), "only": only or [],
             "key": key, "secrets": secrets, "lanes": lanes} for sub, key in todo)
    if dask:
        from autograder.batch.dask_runner import run_on_dask
        yield from run_on_dask(dask, jobs)
        return
    from autograder.batch.pool import LocalPool
    from autograder.sandbox import isolation
    isolation.secret_copies()  # searched once, here: each worker reuses it (secret_files.CACHE), checking the folders
    with LocalPool(workers, job_seconds) as pool:
        yield from pool.run(jobs)


def _pending(sub: Submission) -> dict:
    return {"student": sub.student, "name": sub.name, "email": sub.email, "sid": sub.sid, "status": "pending",
            "key": None,
            "score": None, "max_score": None, "parts": {}, "e2e": None, "tests": [], "seconds": 0.0, "reason": ""}


def _identity(sub: Submission, version: str, only: list[str] | None) -> dict:
    """What the record says besides the outcome: who, which file, which grader, when."""
    return {"name": sub.name, "email": sub.email, "sid": sub.sid, "file": sub.member, "grader": version,
            "only": only or [],
            "graded_at": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")}
