"""The module graph: no import cycles, the engine reaches the lab only through the registries, and the
results model and reports render without torch."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from autograder.paths import ROOT
from autograder.release.engine import imported_modules

PACKAGE = ROOT / "autograder"
LAB_PREFIXES = ("autograder.lab12", "autograder.checks", "autograder.bank", "autograder.diagnosis",
                "autograder.e2e_tests", "autograder.baseline", "autograder.replay", "autograder.plots",
                "autograder.validity", "autograder.notebook_checks", "autograder.commands.build_sft",
                "autograder.commands.calibrate", "autograder.commands.validate")
REGISTRIES = {"autograder.checks"}  # the check registry (checks/__init__.py) is where the lab's checks register


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {module_name(p): p for p in PACKAGE.rglob("*.py") if "child" not in p.parts}


def imports(name: str) -> set[str]:
    """autograder modules that `name` imports anywhere (module level or inside functions)."""
    found = set()
    for n in imported_modules(MODULES[name], name):
        while n and n not in MODULES:  # `from autograder.x import name` names x
            n = n.rpartition(".")[0]
        if n and n != name:
            found.add(n)
    return found


def is_lab(name: str) -> bool:
    return name.startswith(LAB_PREFIXES)


def test_no_import_cycles():
    graph = {m: imports(m) for m in MODULES}

    def reaches(start: str, goal: str, seen: set[str]) -> bool:
        for nxt in graph[start]:
            if nxt == goal or (nxt not in seen and not seen.add(nxt) and reaches(nxt, goal, seen)):
                return True
        return False

    cycles = sorted(m for m in graph if reaches(m, m, set()))
    assert not cycles, f"modules on an import cycle: {cycles}"


def test_the_engine_reaches_the_lab_only_through_the_registries():
    bad = {m: sorted(d for d in imports(m) if is_lab(d) and d not in REGISTRIES)
           for m in MODULES if not is_lab(m)}
    bad = {m: d for m, d in bad.items() if d}
    assert not bad, f"engine modules importing lab modules directly: {bad}"


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
