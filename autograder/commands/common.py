"""What every command shares: one way to check arguments, one error format, one exit path.

    parser.add_argument("--only", type=comma_list, default=[])     # "gae, kl" -> ["gae", "kl"]
    only = check_only(args.only, cfg)                               # unknown names: CommandError
    check_out_folder(args.out)                                      # a file, read-only place: CommandError

Every check runs before any work. A `CommandError` (raised by `fail`) is printed by `__main__` as
one line `error: ...` on stderr and exits 2. Exit codes, the same for every command:
"""

from __future__ import annotations

import argparse
import signal
import sys
import tempfile
from collections.abc import Collection, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

from autograder.sandbox.filetree import remove_tree

if TYPE_CHECKING:
    from autograder.lab.config import Config

DONE, FAILURES, BAD_INPUT, INTERRUPTED, BROKEN_PIPE = 0, 1, 2, 130, 141
EXIT_CODES = """exit codes:
  0    done
  1    the run worked and found failures: validate, calibrate, starter --check, build-sft --check;
       grade-all when a submission failed to grade (never `grade`: a low score is a finished grade)
  2    bad input or environment (a wrong argument, a missing file, an unwritable --out, a broken grading.yaml)
  130  interrupted (Ctrl-C or SIGTERM); child processes are stopped and temporary files removed
  141  the output's reader left (`| head`): the rest was not printed, as a shell's SIGPIPE"""
__doc__ += "\n" + EXIT_CODES + "\n"


class CommandError(Exception):
    """Bad input or environment: the command stops before (or without) doing its work; exit 2."""


def fail(message: str) -> NoReturn:
    """Stop the command with `error: <message>` on stderr and exit code 2."""
    raise CommandError(message)


def report_error(message: str) -> int:
    """Print the one error format; return the exit code for bad input."""
    print(f"error: {message}", file=sys.stderr)
    return BAD_INPUT


class Parser(argparse.ArgumentParser):
    """argparse with the commands' error format (`error: ...` and where to find help) and exit code 2."""

    def error(self, message: str) -> NoReturn:
        print(f"error: {message} (see `{self.prog} --help`)", file=sys.stderr)
        sys.exit(BAD_INPUT)


def comma_list(text: str) -> list[str]:
    """argparse type of every comma-separated option: "gae, kl," -> ["gae", "kl"] (order kept, no repeats)."""
    return list(dict.fromkeys(item.strip() for item in text.split(",") if item.strip()))


def positive_int(text: str) -> int:
    """argparse type of counts such as --workers: an integer >= 1."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, not {value}")
    return value


def default_workers() -> int:
    """Worker processes when --workers is not given: the CPUs this process may really use (at least 1)."""
    from autograder.judge.machine import usable_cpus
    return max(1, int(usable_cpus()))


def add_workers(parser: argparse.ArgumentParser, what: str) -> None:
    """The --workers option, with the same default and wording in every command."""
    workers = default_workers()
    parser.add_argument("--workers", type=positive_int, default=workers, metavar="N",
                        help=f"{what} run in parallel (default: the CPUs this machine lets us use, here {workers})")


def only_choices(parts: list[str]) -> list[str]:
    """What --only accepts: the parts of grading.yaml and e2e."""
    return [*parts, "e2e"]


def check_only(names: list[str], parts: list[str], test_ids: Collection[str] = ()) -> set[str] | None:
    """The --only selection as a set (None: everything); an unknown name stops the command."""
    return set(check_names("--only", names, only_choices(parts), test_ids)) or None


def check_names(option: str, names: list[str], valid: list[str], test_ids: Collection[str] = ()) -> list[str]:
    """`names` when every one is in `valid` (case-sensitive); else stop, listing the valid names. A test id
    (`gae.known_values`) gets a pointer to its part, a wrong case the right spelling."""
    unknown = [n for n in names if n not in valid]
    if not unknown:
        return names
    by_case = {v.lower(): v for v in valid}
    why = []
    for name in unknown:
        head = name.split(".")[0]
        if name in test_ids or ("." in name and head in valid):
            why.append(f"{name} is a test, not a part (its part: {head})")
        elif name.lower() in by_case:
            why.append(f"{name}: names are case-sensitive (did you mean {by_case[name.lower()]}?)")
        else:
            why.append(f"{name} is unknown")
    fail(f"{option}: {'; '.join(why)}. Valid: {', '.join(valid)}")


def check_input(path: Path, what: str = "input", kinds: tuple[str, ...] = ("file", "folder")) -> Path:
    """`path` exists and is one of `kinds` ("file", "folder", "zip"); returns it."""
    path = Path(path)
    if not path.exists():
        fail(f"no {what} at {path}: it does not exist")
    is_kind = {"file": path.is_file(), "folder": path.is_dir(), "zip": path.is_file() and _is_zip(path)}
    if not any(is_kind[k] for k in kinds):
        names = {"file": "file", "folder": "folder", "zip": "zip file"}
        fail(f"{what}: {path} is not a {' or a '.join(names[k] for k in kinds)}")
    return path


# The repository's place for outputs (git-ignored): an --out may lie there, nowhere else in the grader's tree.
OUTPUT_FOLDERS = ("out",)


def check_out_folder(path: Path, option: str = "--out") -> Path:
    """`path` is a writable folder outside the grader's own tree, or can be created as one (it is not created
    here); returns it."""
    path = Path(path)
    check_outside_grader(path, option)
    if path.exists() or path.is_symlink():
        if not path.is_dir():
            fail(f"{option} {path} is a file, not a folder: give a folder for the results")
        _probe(path, option, path)
        return path
    parent = path.parent
    while not parent.exists():
        parent = parent.parent
    if not parent.is_dir():
        fail(f"{option} {path} cannot be created: {parent} is a file")
    _probe(parent, option, path)
    return path


def check_outside_grader(path: Path, option: str = "--out") -> None:
    """Stop unless `path` (links resolved) lies outside the engine's repository and the lab's folder, or in one of
    the repository's OUTPUT_FOLDERS: a report written into the package, solutions/ or assignment/ changes the
    grader's version (grade-all would regrade the class) and would ship in the next autograder.zip."""
    from autograder.lab.paths import ASSIGNMENT, ENGINE, LAB, ROOT, SOLUTIONS
    root, target = ROOT.resolve(), Path(path).resolve()
    if any(_within(target, root / f) for f in OUTPUT_FOLDERS):
        return
    places = [(ENGINE, "the grader's package"), (SOLUTIONS, "the reference solutions"),
              *([(ASSIGNMENT, "the given world")] if ASSIGNMENT != LAB else []),
              *([(LAB, "the lab's folder")] if LAB.resolve() != root else []), (root, "the grader's repository")]
    what = next((words for place, words in places if _within(target, place.resolve())), None)
    if what is None:
        return
    resolved = f" ({target})" if str(target) != str(path) else ""
    fail(f"{option} {path}{resolved} is inside {what}: what is written there changes the grader or ships in the "
         f"next release; give a folder outside {root}, or under {root / OUTPUT_FOLDERS[0]}")


def check_child_can_work() -> None:
    """Before grading many: a sandboxed child started here can use its folder (TMPDIR...), else exit 2 with why."""
    from autograder.sandbox import preflight
    from autograder.sandbox.isolation import IsolationError
    try:
        preflight.ensure_child_can_work(load_config(lab=False).limits)
    except IsolationError as exc:
        fail(str(exc))


def _within(path: Path, folder: Path) -> bool:
    return path == folder or folder in path.parents


def _probe(folder: Path, option: str, target: Path) -> None:
    """Create and remove a folder inside `folder`: the only sure test of writing there (root ignores modes)."""
    try:
        remove_tree(tempfile.mkdtemp(prefix=".autograder-write-probe-", dir=folder))
    except OSError as exc:
        fail(f"{option} {target} cannot be written: {folder} refuses new files ({exc.strerror or exc}); "
             "choose another folder")


def _is_zip(path: Path) -> bool:
    import zipfile
    return zipfile.is_zipfile(path)


def load_config(lab: bool = True):
    """grading.yaml, typed, and (`lab`) the lab folder's declarations checked against it (check_lab): a broken or
    incomplete one stops the command (exit 2) with one sentence naming the file and line, before any work."""
    from autograder.lab import config
    try:
        cfg = config.load()
    except config.ConfigError as exc:
        fail(str(exc))
    if lab:
        check_lab(cfg)
    return cfg


def check_lab(cfg: Config, grading: bool = False) -> None:
    """The lab folder's declarations checked against grading.yaml (lab_problems; `grading`: only what a grade relies
    on); a problem stops the command (exit 2) with one sentence. It imports the lab's checks, and so torch."""
    from autograder.lab import config, lab_problems
    try:
        lab_problems.ensure_complete(cfg, grading=grading)
    except config.ConfigError as exc:
        fail(str(exc))


@contextmanager
def interrupts_after() -> Iterator[None]:
    """Ctrl-C or SIGTERM meanwhile stops the command (KeyboardInterrupt) once the block has run: while torch and the
    lab's modules import (a few seconds), a library that catches everything would swallow it."""
    hit: list[int] = []
    handlers = {sig: signal.signal(sig, lambda signum, frame: hit.append(signum))
                for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for sig, handler in handlers.items():
            signal.signal(sig, handler)
    if hit:
        raise KeyboardInterrupt
