"""Which bank mistakes fail which e2e tests on every calibrated seed: the lab's grading/data/e2e_mistakes.json.

    {"fingerprint": what every run depended on (fingerprints.e2e_runs: world, reference, e2e code, settings, torch),
     "mistakes": {"gae.forward_recursion": {"source": sha256 of the entry's code, "seeds": 3,
                                            "ran": ["blind_spot", "kl_penalty", "ptx"], "fails": ["blind_spot"]}}}

Written by `calibrate --mistakes` (merged test by test into what is current), read by `validate --e2e`, which
holds each current entry to failing its `fails` tests. An entry is current when the file's fingerprint and the
entry's source are today's and it ran every e2e test that trains with its part: a change to the e2e code stales
every entry (an outcome near a tipping point may flip), a change to one mistake stales that one.
`refresh --check` names the file while an entry is missing or stale; `refresh` runs those mistakes again.
"""

from __future__ import annotations

import hashlib
import inspect
import json
from typing import Any, Callable

from autograder.lab import bank, config
from autograder.lab.paths import LAB_DATA

DATA_FILE = LAB_DATA / "e2e_mistakes.json"
SALT = "e2e outcomes of the bank's mistakes, v2"
SEEDS = 3  # seeds per mistake and test: a mistake is held to failing a test only when all of them fail it


def fingerprint() -> str:
    from autograder.lab import fingerprints  # torch: not for the commands that only read SEEDS (grade-all starts light)
    return fingerprints.e2e_runs(SALT).hexdigest()


def source_of(entry: bank.Entry) -> str:
    return hashlib.sha256(inspect.getsource(entry.impl).encode()).hexdigest()[:16]


def trained_tests(entry: bank.Entry) -> list[str]:
    """The e2e tests that train with the entry's part."""
    return sorted(name for name, spec in config.current().e2e.items() if entry.part in spec.parts)


def tracked() -> list[bank.Entry]:
    """The mistakes some e2e test trains with."""
    return [e for e in bank.load_all() if e.is_mistake and trained_tests(e)]


def read() -> dict[str, Any]:
    """The file ({"fingerprint": "", "mistakes": {}} when absent or of an older format)."""
    data = json.loads(DATA_FILE.read_text()) if DATA_FILE.is_file() else {}
    if not isinstance(data.get("mistakes"), dict):
        return {"fingerprint": "", "mistakes": {}}
    return data


def current() -> dict[str, list[str]]:
    """mistake id -> the e2e tests it fails on every seed, for the entries that are current."""
    data = read()
    if data["fingerprint"] != fingerprint():
        return {}
    out = {}
    for entry in tracked():
        known = data["mistakes"].get(entry.id)
        if known and known["source"] == source_of(entry) and set(trained_tests(entry)) <= set(known["ran"]):
            out[entry.id] = known["fails"]
    return out


def stale() -> list[str]:
    """The tracked mistakes without a current entry."""
    have = current()
    return [e.id for e in tracked() if e.id not in have]


def merge(outcomes: dict[str, dict[str, float]], seeds: int) -> None:
    """Write this calibration's `outcomes` (mistake -> test -> fraction of its `seeds` that failed it) over the
    file's current entries, test by test; entries of another fingerprint, source or seed count are replaced."""
    data, stamp = read(), fingerprint()
    kept = data["mistakes"] if data["fingerprint"] == stamp else {}
    entries = {e.id: e for e in bank.load_all() if e.is_mistake}
    merged = {k: v for k, v in kept.items() if k in entries}
    for entry_id, tests in outcomes.items():
        source = source_of(entries[entry_id])
        old = merged.get(entry_id)
        if not old or old["source"] != source or old["seeds"] != seeds:
            old = {"source": source, "seeds": seeds, "ran": [], "fails": []}
        ran = set(old["ran"]) | set(tests)
        fails = set(old["fails"]) - set(tests) | {t for t, frac in tests.items() if frac == 1.0}
        merged[entry_id] = {**old, "ran": sorted(ran), "fails": sorted(fails)}
    DATA_FILE.parent.mkdir(parents=True, exist_ok=True)
    DATA_FILE.write_text(json.dumps({"fingerprint": stamp, "mistakes": dict(sorted(merged.items()))}, indent=1) + "\n")


def refresh(workers: int, progress: Callable[[int, int, list], None] | None = None) -> None:
    """Run every stale mistake through the e2e tests that train with its part, SEEDS seeds each, and merge
    (`progress(done, total, runs)` after each task, as calibration.run_all calls it)."""
    from autograder.validity import calibration as cal
    entries, tasks = {e.id: e for e in tracked()}, []
    for entry_id in stale():
        tasks += cal.tasks_for(trained_tests(entries[entry_id]), SEEDS, entry_id)
    runs = cal.run_all(cal.apply_overrides(config.current().e2e, []), tasks, workers, progress)
    merge(cal.mistake_outcomes(runs), SEEDS)
