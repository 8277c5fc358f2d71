"""`python -m autograder COMMAND ...`: the Lab 12 grader's commands.

Each command module (autograder/commands/<command>.py) defines HELP (one line), EXAMPLES (shown by
--help), `add_arguments(parser)` and `main(args) -> int`; autograder/commands/common.py holds what
they share. Here: the one exit path (errors, Ctrl-C and SIGTERM) for all of them.
"""

from __future__ import annotations

import argparse
import importlib
import signal
import sys

from autograder.commands.common import EXIT_CODES, INTERRUPTED, CommandError, Parser, report_error

COMMANDS = ("grade", "grade-all", "release", "validate", "calibrate", "starter", "build-sft")
DESCRIPTION = "Grade Lab 12 (RLHF) submissions, one or a whole class, and build what students and graders get."
EXAMPLES = """examples:
  python -m autograder grade rlhf.py --out report/          grade one submission
  python -m autograder grade-all submissions/ --out grades/ grade a class: gradebook.csv, class_report.html
  python -m autograder release --out release/out            student zip, Gradescope zip, nbgrader course
  python -m autograder COMMAND --help                       a command's options and examples"""


def version() -> str:
    from importlib.metadata import PackageNotFoundError
    from importlib.metadata import version as installed
    try:
        return f"lab12-autograder {installed('lab12-autograder')}"
    except PackageNotFoundError:
        return "lab12-autograder (not installed as a package: version unknown)"


def build_parser() -> tuple[argparse.ArgumentParser, dict]:
    layout = argparse.RawDescriptionHelpFormatter
    parser = Parser(prog="python -m autograder", description=DESCRIPTION, epilog=f"{EXAMPLES}\n\n{EXIT_CODES}",
                    formatter_class=layout)
    parser.add_argument("--version", action="version", version=version())
    subparsers = parser.add_subparsers(dest="command", required=True, metavar="COMMAND", parser_class=Parser)
    modules = {}
    for name in COMMANDS:
        module_name = f"autograder.commands.{name.replace('-', '_')}"
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


def main(argv: list[str] | None = None) -> int:
    parser, modules = build_parser()
    args = parser.parse_args(argv)
    module = modules[args.command]
    previous = signal.signal(signal.SIGTERM, _interrupt)  # `kill` stops a command like Ctrl-C does
    try:
        return module.main(args)
    except CommandError as exc:
        return report_error(str(exc))
    except KeyboardInterrupt:
        print(f"interrupted: {getattr(module, 'INTERRUPTED', 'stopped; nothing was left behind')}", file=sys.stderr)
        return INTERRUPTED
    finally:
        signal.signal(signal.SIGTERM, previous)


def _interrupt(signum, frame) -> None:
    raise KeyboardInterrupt


if __name__ == "__main__":
    sys.exit(main())
