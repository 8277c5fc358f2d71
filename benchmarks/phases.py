"""Run `python -m autograder ARGS...` with each phase of a grade timed: `python benchmarks/phases.py LOG ARGS...`.

    AUTOGRADER_LAB=/path/labs/lab13 python benchmarks/phases.py /tmp/phases.jsonl grade solutions/posttrain.py --out o

The engine's functions named in PHASES are wrapped as their modules are imported, before any of them runs (the
second lane, forked, inherits the wrappers); each call appends one JSON line to LOG: {"phase", "pid", "wall",
"cpu" (the calling thread's CPU: the judge's own, never its sandboxed child's), "inside" (the enclosing timed
phase, or "")}. "judge imports" is
this process's start (the interpreter, the engine and its commands) until the command runs; torch is imported in
the command, after it has started its children (autograder/judge/early.py), so "whole command" holds it. The root of
the engine imported is this file's folder's parent, so a copy of this file in another checkout times that one.
`summarise(LOG)` adds the lines up per phase and lane (grade_bench.py prints it).
"""

from __future__ import annotations

import functools
import importlib
import importlib.abc
import json
import os
import sys
import threading
import time
from collections.abc import Callable
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# (module, attribute, phase): a callable, or a class's method as "Class.method"
PHASES = (
    ("autograder.sandbox.secret_files", "copies", "secrets search"),
    ("autograder.sandbox.preflight", "ensure_secrets_hidden", "preflight (probe, secrets search)"),
    ("autograder.sandbox.sandbox", "Child.__init__", "child start"),
    ("autograder.judge.grade", "_shown_first", "unit checks"),
    ("autograder.judge.grade", "run_test", "tests"),
    ("autograder.replay.runs", "answers_match", "replays"),
    ("autograder.judge.report", "write_reports", "reports"),
)
_LOG: str = ""
_stack = threading.local()


def _record(phase: str, wall: float, cpu: float, inside: str) -> None:
    line = json.dumps({"phase": phase, "pid": os.getpid(), "wall": wall, "cpu": cpu, "inside": inside}) + "\n"
    fd = os.open(_LOG, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    try:
        os.write(fd, line.encode())  # one write of a short line: lines of two lanes never interleave
    finally:
        os.close(fd)


@contextmanager
def timed(phase: str):
    names = getattr(_stack, "names", [])
    _stack.names = [*names, phase]
    wall, cpu = time.perf_counter(), time.thread_time()
    try:
        yield
    finally:
        _stack.names = names
        _record(phase, time.perf_counter() - wall, time.thread_time() - cpu, names[-1] if names else "")


def _wrap(fn: Callable, phase: str | Callable[..., str]) -> Callable:
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        with timed(phase(*args) if callable(phase) else phase):
            return fn(*args, **kwargs)
    return wrapper


def _test_phase(test_id: str, *_) -> str:
    return "e2e tests" if test_id.startswith("e2e.") else "unit checks"


def _wrap_phases(module) -> None:
    for module_name, attribute, phase in PHASES:
        if module_name == module.__name__:
            owner, _, name = attribute.rpartition(".")
            target = getattr(module, owner) if owner else module
            if hasattr(target, name):
                setattr(target, name, _wrap(getattr(target, name), _test_phase if phase == "tests" else phase))


def _wrap_second_lane(lanes) -> None:
    second_lane = lanes.second_lane

    @contextmanager
    def timed_second_lane(*args, **kwargs):
        with timed("second lane start (imports, fork)"):
            manager = second_lane(*args, **kwargs)
            pool = manager.__enter__()
        try:
            yield pool
        except BaseException:
            if not manager.__exit__(*sys.exc_info()):
                raise
        else:
            manager.__exit__(None, None, None)
    lanes.second_lane = timed_second_lane


def _wrap_plots(registry) -> None:
    lab = registry.lab
    timed: dict[int, object] = {}  # id(the lab registered now) -> it with its plot hook timed

    def timed_lab():  # the lab of the moment: registry.without_plots swaps in one that plots nothing
        import dataclasses
        found = lab()
        if id(found) not in timed:
            timed[id(found)] = dataclasses.replace(found, plot=_wrap(found.plot, "plots"))
        return timed[id(found)]
    registry.lab = timed_lab


WRAPPERS: dict[str, list[Callable]] = {}
for _module, _, _ in PHASES:
    WRAPPERS.setdefault(_module, [_wrap_phases])
WRAPPERS["autograder.judge.lanes"] = [_wrap_second_lane]
WRAPPERS["autograder.lab.registry"] = [_wrap_plots]


class _WrapOnImport(importlib.abc.MetaPathFinder):
    """Wraps a module of WRAPPERS as soon as it is imported, so that timing imports nothing the command would
    import later (the grade command imports torch only after starting its children: judge/early.py)."""

    def find_spec(self, name, path, target=None):
        if name not in WRAPPERS:
            return None
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(name, path, target)
            if spec is not None and spec.loader is not None:
                execute = spec.loader.exec_module

                def exec_module(module, execute=execute):
                    execute(module)
                    for wrap in WRAPPERS[name]:
                        wrap(module)
                spec.loader.exec_module = exec_module  # type: ignore[method-assign]
                return spec
        return None


def install() -> None:
    """Wrap the engine's phases when their modules are imported (before any of them runs)."""
    for name, wrappers in WRAPPERS.items():
        if name in sys.modules:
            for wrap in wrappers:
                wrap(sys.modules[name])
    sys.meta_path.insert(0, _WrapOnImport())


def summarise(log: Path) -> dict[str, dict[str, float]]:
    """phase -> {"wall", "cpu"} summed over the first lane's calls (the process that ran the command), and
    {"wall 2", "cpu 2"} over the second lane's; a phase inside another counts in both."""
    lines = [json.loads(line) for line in log.read_text().splitlines() if line.strip()]
    if not lines:
        return {}
    first = lines[0]["pid"]  # judge imports: recorded first, by the command's process
    out: dict[str, dict[str, float]] = {}
    for line in lines:
        phase = line["phase"] if line["phase"] != "child start" or not line["inside"].startswith("preflight") \
            else "probe start"
        row = out.setdefault(phase, {"wall": 0.0, "cpu": 0.0, "wall 2": 0.0, "cpu 2": 0.0})
        suffix = "" if line["pid"] == first else " 2"
        row["wall" + suffix] += line["wall"]
        row["cpu" + suffix] += line["cpu"]
    return out


def main() -> int:
    global _LOG
    if len(sys.argv) < 3 or sys.argv[1].startswith("-"):  # `phases.py --help` must not write a log named --help
        print(__doc__.split("\n\n")[0], file=sys.stderr)
        return 2
    _LOG = sys.argv[1]
    started_cpu = time.process_time()  # the interpreter's start before this line is in neither number
    wall = time.perf_counter()
    sys.path.insert(0, str(ROOT))
    install()
    import autograder.__main__ as command
    command.build_parser()  # every command's module, as `python -m autograder` imports them (torch: not yet)
    _record("judge imports", time.perf_counter() - wall, time.process_time() - started_cpu, "")
    with timed("whole command"):
        return command.main(sys.argv[2:])


if __name__ == "__main__":
    code = main()
    import autograder.__main__ as command
    command.exit_now(code)  # as `python -m autograder` ends
