"""`python -m autograder COMMAND ...`: every command lives in autograder/commands/<command>.py.

Each command module defines `HELP` (one line), `add_arguments(parser)` and `main(args) -> int`.
"""

from __future__ import annotations

import argparse
import importlib
import sys

COMMANDS = ("grade", "grade-all", "release", "validate", "calibrate", "starter", "build-sft")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m autograder", description=__doc__.splitlines()[0])
    subparsers = parser.add_subparsers(dest="command", required=True)
    modules = {}
    for name in COMMANDS:
        try:
            module = importlib.import_module(f"autograder.commands.{name.replace('-', '_')}")
        except ModuleNotFoundError as exc:
            if exc.name != f"autograder.commands.{name.replace('-', '_')}":
                raise
            continue  # a command not shipped in this bundle
        modules[name] = module
        module.add_arguments(subparsers.add_parser(name, help=module.HELP, description=module.HELP))
    args = parser.parse_args(argv)
    return modules[args.command].main(args)


if __name__ == "__main__":
    sys.exit(main())
