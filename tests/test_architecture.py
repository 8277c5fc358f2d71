"""The module graph: no import cycles; the engine (autograder/) knows no lab: it imports no module of a lab's
grading/ package (it loads that package by path, autograder/lab/registry.py) and names no lab, no function of a
lab's contract and no file of its world; the results model and reports render without torch."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from autograder.bundling.engine import imported_modules
from autograder.lab import config, registry
from autograder.lab.paths import ENGINE, ROOT

LAB = registry.package().__name__  # the lab's package name, as the engine loads it (grading.yaml `lab`)


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {module_name(p): p for p in ENGINE.rglob("*.py") if "child" not in p.parts}


def imports(name: str) -> set[str]:
    """autograder modules that `name` imports anywhere (module level or inside functions)."""
    found = set()
    for n in imported_modules(MODULES[name], name):
        while n and n not in MODULES:  # `from autograder.x import name` names x
            n = n.rpartition(".")[0]
        if n and n != name:
            found.add(n)
    return found


def test_no_import_cycles():
    graph = {m: imports(m) for m in MODULES}

    def reaches(start: str, goal: str, seen: set[str]) -> bool:
        for nxt in graph[start]:
            if nxt == goal or (nxt not in seen and not seen.add(nxt) and reaches(nxt, goal, seen)):
                return True
        return False

    cycles = sorted(m for m in graph if reaches(m, m, set()))
    assert not cycles, f"modules on an import cycle: {cycles}"


def test_the_engine_imports_no_module_of_a_lab():
    bad = {m: sorted(n for n in imported_modules(p, m) if n.split(".")[0] not in ("autograder",)
                     and n.split(".")[0] in (LAB, "grading", "training", "tinylm", "lab_helpers"))
           for m, p in MODULES.items()}
    assert not {m: d for m, d in bad.items() if d}, bad


def test_the_engine_names_no_lab():
    """No engine file (code, templates) holds the lab's name, title, submission file, world files or functions:
    everything of a lab comes from its folder (docs/labs.md)."""
    cfg = config.current()
    names = {cfg.lab, cfg.submission, *cfg.world, *cfg.contract, "RLHF", "Lab 12"}
    found = []
    for path in sorted(ENGINE.rglob("*")):
        if path.suffix in (".py", ".j2") and "__pycache__" not in path.parts:
            text = path.read_text()
            found += [f"{path.relative_to(ROOT)}: {n}" for n in names if re.search(rf"(?<![\w.]){re.escape(n)}", text)]
    assert not found, found


def test_reports_render_without_torch(tmp_path):
    script = f"""
import sys
from pathlib import Path
from autograder.judge.outcome import Finding, GradeResult, TestResult
from autograder.judge.report import write_reports
t = TestResult("gae.known_values", "GAE", ["gae"], 4, 0, "visible", "visible", Finding(message="wrong"))
write_reports(GradeResult("rlhf.py", [t], False, 1.0), Path({str(tmp_path)!r}))
import autograder.lab.config
autograder.lab.config.load()
assert "torch" not in sys.modules, sorted(m for m in sys.modules if m.startswith("torch"))[:5]
"""
    done = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "report.html").is_file() and (tmp_path / "results.json").is_file()


# --- The rooms (ARCHITECTURE.md's map): which room may import which, and where a child is started ---------------

ROOM_IMPORTS = {  # a room -> the rooms its modules may import besides its own (and `autograder`, the package itself)
    "lab": set(),
    "sandbox": {"lab"},
    "checks": {"lab", "sandbox"},
    "replay": {"lab", "sandbox"},
    "judge": {"lab", "sandbox", "checks", "replay"},
    "validity": {"lab", "sandbox", "checks", "replay", "judge"},
    "bundling": {"lab", "sandbox", "judge"},
    "batch": {"lab", "sandbox", "judge", "validity"},
    "commands": {"lab", "sandbox", "checks", "replay", "judge", "validity", "batch", "bundling"},
    "__main__": {"lab", "commands"},
    "__init__": set(),
}
UPWARD = {  # the imports against that order, each for its reason: module -> (rooms it may also import, why)
    "autograder": ({"lab"}, "every process that imports the engine pins torch's kernels before torch runs an "
                   "operation (lab/arithmetic.py)"),
    "autograder.lab.fingerprints": ({"judge"}, "an e2e run's fingerprint covers the registered e2e tests' code"),
    "autograder.lab.lab_problems": ({"checks", "judge", "validity"}, "a lab's declarations are checked against the "
                                    "registered checks and e2e tests, and its data files' freshness"),
    "autograder.lab.new_lab": ({"checks"}, "a new lab's files are written from the contract's derived tests"),
    "autograder.replay.record": ({"judge"}, "recording the reference's runs runs its e2e tests"),
}
# Outside sandbox/, these start processes, none of which runs or reads submitted code: module -> why
PROCESSES_OUTSIDE_THE_SANDBOX = {
    "autograder.__main__": "`--lab DIR` runs the same command again, with the lab's paths",
    "autograder.judge.lanes": "the second judge lane: a fork of the judge, killed with it (prctl PDEATHSIG)",
    "autograder.batch.pool": "grade-all's workers, each grading through the sandbox",
    "autograder.validity.calibration": "calibrate's workers, training the reference and the bank",
    "autograder.validity.validation": "validate's workers, grading the bank through the sandbox",
}
PROCESS_MODULES = ("subprocess", "multiprocessing", "concurrent.futures", "pty")
PROCESS_CALLS = {"fork", "forkpty", "execv", "execve", "execvp", "execvpe", "execl", "execle", "execlp", "spawnv",
                 "spawnve", "posix_spawn", "posix_spawnp", "setrlimit", "prlimit", "prctl", "unshare", "setns",
                 "chroot", "setuid", "setgid", "setresuid", "setresgid", "setgroups", "ProcessPoolExecutor"}


def room_of(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def test_every_top_level_entry_is_a_room_of_the_map():
    """A module or folder added at the top of autograder/ has a room: it is in ROOM_IMPORTS and in ARCHITECTURE.md."""
    entries = {p.stem for p in ENGINE.iterdir() if (p.suffix == ".py" or (p / "__init__.py").is_file())}
    assert entries == set(ROOM_IMPORTS), sorted(entries ^ set(ROOM_IMPORTS))
    text = (ROOT / "ARCHITECTURE.md").read_text()
    unmapped = [e for e in sorted(entries) if f"`{e}/`" not in text and f"`{e}.py`" not in text]
    assert not unmapped, f"rooms missing from ARCHITECTURE.md's map: {unmapped}"
    folders = {p.name for p in ENGINE.iterdir() if p.is_dir() and p.name != "__pycache__"}
    assert not [f for f in sorted(folders) if f"`{f}/`" not in text], "a folder of autograder/ missing from the map"


def test_each_room_imports_only_the_rooms_below_it():
    bad = []
    for name in MODULES:
        here = room_of(name)
        for target in imports(name):
            there = room_of(target)
            if there in (here, "__init__") or there in ROOM_IMPORTS[here] or there in UPWARD.get(name, ((),))[0]:
                continue
            bad.append(f"{name} -> {target} ({here} may import {sorted(ROOM_IMPORTS[here]) or 'no other room'})")
    assert not bad, bad
    gone = {name: rooms - {room_of(t) for t in imports(name)} for name, (rooms, _) in UPWARD.items()}
    assert not any(gone.values()), f"UPWARD lists imports that are gone: {gone}"


def process_uses(path: Path) -> list[str]:
    """What the file imports or calls that starts a process or confines one (ast: imports anywhere, calls)."""
    import ast

    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found += [a.name for a in node.names if a.name.startswith(PROCESS_MODULES)]
        elif isinstance(node, ast.ImportFrom) and node.module:
            if node.module.startswith(PROCESS_MODULES):
                found.append(node.module)
            found += [a.name for a in node.names if a.name in PROCESS_CALLS]
        elif isinstance(node, ast.Attribute) and node.attr in PROCESS_CALLS:
            found.append(node.attr)
    return found


def test_only_the_sandbox_starts_or_confines_a_child():
    """Everything that starts a process running or reading submitted code, or confines one (fork, exec, rlimits,
    prctl, namespaces, uids), is in sandbox/; the few other process starters are listed with their reason."""
    users = {name: uses for name, path in MODULES.items() if room_of(name) != "sandbox"
             for uses in [process_uses(path)] if uses}
    assert set(users) <= set(PROCESSES_OUTSIDE_THE_SANDBOX), \
        {n: u for n, u in users.items() if n not in PROCESSES_OUTSIDE_THE_SANDBOX}
    assert set(PROCESSES_OUTSIDE_THE_SANDBOX) <= set(users), "a listed module starts no process any more"
