"""`python -m autograder [--lab DIR] COMMAND ...`: the engine's commands, for the lab in DIR (default: the repository).

Each command module (autograder/commands/<command>.py) defines HELP (one line), EXAMPLES (shown by
--help), `add_arguments(parser)` and `main(args) -> int`; autograder/commands/common.py holds what
they share. Here: the one exit path (errors, Ctrl-C and SIGTERM) for all of them, and the exit itself
(`exit_now`: without the interpreter's teardown of torch).
"""

from __future__ import annotations

import argparse
import atexit
import importlib
import os
import signal
import subprocess
import sys
import threading
from pathlib import Path
from typing import NoReturn

from autograder.commands.common import BROKEN_PIPE, EXIT_CODES, INTERRUPTED, CommandError, Parser, report_error
from autograder.lab import paths
from autograder.lab.config import ConfigError

COMMANDS = ("grade", "grade-all", "release", "validate", "calibrate", "refresh", "starter",
            "new-lab")  # + the lab's own
DESCRIPTION = "Grade a lab's submissions, one or a whole class, and build what students and graders get."
EXAMPLES = """examples:
  python -m autograder grade upload/ --out report/          grade one submission
  python -m autograder grade-all submissions/ --out grades/ grade a class: gradebook.csv, class_report.html
  python -m autograder release --out out/release            student zip, Gradescope zip, nbgrader course
  python -m autograder COMMAND --help                       a command's options and examples"""


def version() -> str:
    from importlib.metadata import PackageNotFoundError
    from importlib.metadata import version as installed
    try:
        return f"llm-labs-autograder {installed('llm-labs-autograder')}"
    except PackageNotFoundError:
        return "llm-labs-autograder (not installed as a package: version unknown)"


def build_parser() -> tuple[argparse.ArgumentParser, dict]:
    layout = argparse.RawDescriptionHelpFormatter
    parser = Parser(prog="python -m autograder", description=DESCRIPTION, epilog=f"{EXAMPLES}\n\n{EXIT_CODES}",
                    formatter_class=layout)
    parser.add_argument("--version", action="version", version=version())
    parser.add_argument("--lab", type=Path, metavar="DIR",
                        help="the lab folder to work on: its grading.yaml, assignment/, solutions/, release/ and "
                             "grading/ (default: the repository's own lab)")
    subparsers = parser.add_subparsers(dest="command", required=True, metavar="COMMAND", parser_class=Parser)
    modules = {}
    for name, module_name in [*((n, f"autograder.commands.{n.replace('-', '_')}") for n in COMMANDS), *_lab_commands()]:
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as exc:
            if exc.name != module_name:
                raise
            continue  # a command not shipped in this bundle
        modules[name] = module
        sub = subparsers.add_parser(name, help=module.HELP, description=module.HELP,
                                    epilog=f"{module.EXAMPLES}\n\n{EXIT_CODES}", formatter_class=layout)
        module.add_arguments(sub)
    return parser, modules


def _lab_commands() -> list[tuple[str, str]]:
    """(command, module) for each module of the lab's grading/commands/ (e.g. build-sft)."""
    folder = paths.GRADING / "commands"
    if not (folder / "__init__.py").is_file():
        return []
    from autograder.lab import registry
    package = registry.lab_module("commands").__name__
    return [(p.stem.replace("_", "-"), f"{package}.{p.stem}")
            for p in sorted(folder.glob("*.py")) if p.stem != "__init__"]


def main(argv: list[str] | None = None) -> int:
    try:
        parser, modules = build_parser()  # imports the lab's own commands, so reads its grading.yaml
    except ConfigError as exc:  # a broken grading.yaml or lab folder (LabError): one line, before any work
        return report_error(str(exc))
    args = parser.parse_args(argv)
    if args.lab is not None and args.lab.resolve() != paths.LAB:
        return _run_for_lab(args.lab, sys.argv[1:] if argv is None else argv)
    module = modules[args.command]
    previous = signal.signal(signal.SIGTERM, _interrupt)  # `kill` stops a command like Ctrl-C does
    try:
        return module.main(args)
    except (CommandError, ConfigError) as exc:  # a lab's grading.yaml found wrong once a command runs
        return report_error(str(exc))
    except KeyboardInterrupt:
        print(f"interrupted: {getattr(module, 'INTERRUPTED', 'stopped; nothing was left behind')}", file=sys.stderr)
        return INTERRUPTED
    except BrokenPipeError:  # its reader left (`... | head -1`): nothing more to say, and no traceback
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # (the exit's flush would fail again)
        return BROKEN_PIPE
    finally:
        signal.signal(signal.SIGTERM, previous)


def _run_for_lab(lab: Path, argv: list[str]) -> int:
    """Run the command again in a process whose every import sees `lab` (AUTOGRADER_LAB, inherited by the judge's
    lanes and children), so no module holds the default lab's paths."""
    if not (lab / "grading.yaml").is_file():
        return report_error(f"--lab {lab}: not a lab folder (it holds no grading.yaml)")
    os.environ["AUTOGRADER_LAB"] = str(lab.resolve())
    rest = [a for i, a in enumerate(argv) if a != "--lab" and not a.startswith("--lab=")
            and not (i > 0 and argv[i - 1] == "--lab")]
    return subprocess.run([sys.executable, "-m", "autograder", *rest]).returncode


def _interrupt(signum, frame) -> None:
    raise KeyboardInterrupt


def exit_now(code: int) -> NoReturn:
    """End the process with `code` once the command is done, as the interpreter ends it (its threads joined, the
    exit handlers run, the output flushed) but without tearing every module down one object at a time: with torch
    imported that teardown took 0.33-0.39 s of wall time after the last line was written (0.02 s this way), which a
    student waits for at every grade. Nothing is lost: every file the commands write is closed when written."""
    threading._shutdown()  # type: ignore[attr-defined]  # what the interpreter does first: join non-daemon threads
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a reader that left (`| head -1`): exit quietly, as main() does
            pass
    os._exit(int(code or 0))


if __name__ == "__main__":
    exit_now(main())
