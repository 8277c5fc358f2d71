"""The module graph: no import cycles; the engine (autograder/) knows no lab: it imports no module of a lab's
grading/ package (it loads that package by path, autograder/registry.py) and names no lab, no function of a
lab's contract and no file of its world; the results model and reports render without torch."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from autograder import config, registry
from autograder.bundling.engine import imported_modules
from autograder.paths import ENGINE, ROOT

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
from autograder.outcome import Finding, GradeResult, TestResult
from autograder.report import write_reports
t = TestResult("gae.known_values", "GAE", ["gae"], 4, 0, "visible", "visible", Finding(message="wrong"))
write_reports(GradeResult("rlhf.py", [t], False, 1.0), Path({str(tmp_path)!r}))
import autograder.config
autograder.config.load()
assert "torch" not in sys.modules, sorted(m for m in sys.modules if m.startswith("torch"))[:5]
"""
    done = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "report.html").is_file() and (tmp_path / "results.json").is_file()
