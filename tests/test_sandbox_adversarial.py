"""The adversarial suite: each attack in tests/adversarial/ gets exactly the points it deserves.

Every attack is generated here from one source of truth: the reference (all functions right but what
the attack breaks) or the starter (nothing right: any point would be stolen), plus a snippet from
tests/adversarial/. For every attack: the grade finishes within its limit, results.json is valid and
agrees with the grade, no report holds a line of the reference or of a hidden check, and no process
of the submission survives. The suite runs at every level a deployment reaches: as detected (CI: root +
bubblewrap), and at the Docker level (tests/docker_level.py: root, namespaces refused, so own uid +
Landlock + seccomp; `.ci/run` runs this file there too). Before each grade the secrets preflight runs
inside grade(): where it refuses (a level that cannot hide the grader's files), the attacks on secrecy
pass by that refusal (fail closed), and the others are skipped there.
"""

from __future__ import annotations

import dataclasses
import json
import os
import py_compile
import re
import shutil
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

import pytest

from autograder.checks import contract_tests
from autograder.judge import grade as grade_module
from autograder.judge import outcome
from autograder.judge.grade import GraderError, grade
from autograder.judge.report import write_reports
from autograder.lab import config
from autograder.lab.paths import GRADING_YAML, REFERENCE, ROOT, STARTER
from autograder.sandbox import ipc, isolation, readable, remote, sandbox, secret_files
from autograder.sandbox.filetree import remove_tree

ATTACKS = Path(__file__).with_name("adversarial")
HIDDEN = ROOT / "grading" / "checks" / "hidden"
PUBLIC = [ROOT / "grading" / "checks" / "public", ROOT / "autograder" / "checks" / "tools.py"]
slow = pytest.mark.slow


def secret_lines() -> set[str]:
    """Lines only the reference or the hidden checks hold (what the starter and public checks share is not secret)."""
    def lines(*paths: Path) -> set[str]:
        files = [f for p in paths for f in ([p] if p.is_file() else sorted(p.glob("*.py")))]
        return {line.strip() for f in files for line in f.read_text().splitlines()}
    secret = (lines(REFERENCE) - lines(STARTER)) | (lines(HIDDEN) - lines(*PUBLIC))
    return {line for line in secret if len(line) >= 30 and not line.startswith("#")}


@pytest.fixture(scope="module")
def cfg():
    level = os.environ.get("AUTOGRADER_EXPECT_LEVEL")  # .ci/run's Docker-level step names the level it built
    assert not level or isolation.detect().describe().startswith(level), isolation.detect().describe()
    return config.load()


def new_arena() -> Path:
    """A private temp root for the children's folders (so survivors can be found): searchable by the
    sandbox's uid, as the grader's preflight requires at every level."""
    root = Path(tempfile.mkdtemp(prefix="autograder-adv-"))
    root.chmod(0o755)
    return root


@pytest.fixture
def arena(monkeypatch):
    """new_arena(), removed afterwards."""
    root = new_arena()
    monkeypatch.setattr(sandbox, "CHILD_ROOT", str(root))
    yield root
    remove_tree(root)


def sysv_of_children() -> list[tuple[str, int]]:
    """System V IPC objects of any sandbox uid (none may outlive a grade)."""
    found = []
    for kind in ipc.KINDS:
        try:
            rows = Path(f"/proc/sysvipc/{kind}").read_text().splitlines()
        except OSError:
            continue
        column = {name: i for i, name in enumerate(rows[0].split())}
        found += [(kind, int(r.split()[1])) for r in rows[1:] if int(r.split()[column["uid"]]) >= isolation.UID_BASE]
    return found


def survivors(*marks: str) -> list[str]:
    """Command lines of live processes whose command line or environment holds one of `marks`."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        if int(pid) == os.getpid():
            continue
        try:
            with open(f"/proc/{pid}/stat", "rb") as f:
                if f.read().rsplit(b")", 1)[1].split()[0] == b"Z":
                    continue
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                cmdline = f.read()
            with open(f"/proc/{pid}/environ", "rb") as f:
                environ = f.read()
        except (OSError, IndexError):
            continue
        if any(m.encode() in cmdline or m.encode() in environ for m in marks):
            found.append(cmdline.replace(b"\0", b" ").decode(errors="replace")[:200])
    return found


def attack(tmp_path: Path, arena: Path, name: str, base: Path, only: set[str], cfg, mark: str = "",
           files: dict[str, str] | None = None, secrecy: bool = False, lanes: int | None = None, **limits):
    """Build the submission, grade it, write the reports, and check what holds for every attack.

    A level that cannot hide the grader's files makes grade() refuse (its secrets preflight): then an attack
    on secrecy (`secrecy`) has been stopped, and returns None; any other attack is skipped there."""
    out = tmp_path / "out"
    out.mkdir()
    folder = tmp_path / "submission"
    folder.mkdir()
    snippet = (ATTACKS / f"{name}.py").read_text() if name else ""
    for token, value in (("__OUT__", out), ("__REPO__", ROOT), ("__REFERENCE__", REFERENCE),
                         ("__HIDDEN__", HIDDEN), ("__MARK__", mark or "0")):
        snippet = snippet.replace(token, str(value))
    (folder / "rlhf.py").write_text(base.read_text() + "\n\n# ---- attack ----\n" + snippet)
    for file, text in (files or {}).items():
        (folder / file).write_text(text)
    if limits:
        cfg = dataclasses.replace(cfg, limits=dataclasses.replace(cfg.limits, **limits))
    started = time.monotonic()
    try:
        result = grade(folder, only=only, cfg=cfg, secrets=[out], lane_count=lanes)
    except GraderError as exc:
        assert "would be readable or writable by submissions" in str(exc), exc
        if os.environ.get("AUTOGRADER_SANDBOX") == "bwrap":
            pytest.fail(f"AUTOGRADER_SANDBOX=bwrap, yet the secrets preflight refuses: {exc}")
        if secrecy:
            return None
        pytest.skip(f"refused at this level (fail closed): {str(exc)[:200]}")
    seconds = time.monotonic() - started
    assert not (out / "FORGED").exists() and not (ROOT / "FORGED").exists()
    write_reports(result, out)
    data = json.loads((out / "results.json").read_text())
    assert data["score"] == pytest.approx(result.score)
    assert seconds < cfg.grade_seconds + 30
    reports = "\n".join((out / f).read_text() for f in ("results.json", "report.md", "report.html"))
    leaked = [line for line in secret_lines() if line in reports]
    assert not leaked, f"the report shows lines of the reference or hidden checks: {leaked[:3]}"
    assert not survivors(str(arena), *([mark] if mark else [])), "a process of the submission survived"
    assert not sysv_of_children(), "a System V IPC object of the submission survived"
    assert "internal grader error" not in "\n".join(t.message for t in result.tests)
    return result


def part_score(result, part: str) -> float:
    return sum(t.score for t in result.tests if t.tags[0] == part)


def part_max(result, part: str) -> float:
    return sum(t.max_score for t in result.tests if t.tags[0] == part)


def messages(result, part: str) -> str:
    return "\n".join(t.message for t in result.tests if t.tags[0] == part)


# --------------------------------------------------------------------------- fast: one grade of one part
def test_forged_results_are_never_read(tmp_path, arena, cfg):
    result = attack(tmp_path, arena, "forge_results", REFERENCE, {"gae"}, cfg)
    assert result.score == result.max_score > 0
    assert f"could not forge {tmp_path / 'out'}" in result.output  # its private /tmp is writable, and thrown away


def test_exit_inside_a_function_costs_only_its_tests(tmp_path, arena, cfg):
    result = attack(tmp_path, arena, "exit_in_function", REFERENCE, {"gae", "rm_loss"}, cfg)
    assert part_score(result, "gae") == 0 and "exited during compute_gae()" in messages(result, "gae")
    first = next(t for t in result.tests if t.tags[0] == "gae")  # its public input: the exit code is shown with it
    assert first.finding.submission_text.startswith("exit code 0") and first.inputs_visibility == "visible"
    assert part_score(result, "rm_loss") == part_max(result, "rm_loss") > 0


@pytest.mark.parametrize("name", ["read_secrets", "proc_paths"])
def test_reading_the_reference_and_hidden_checks_finds_nothing(tmp_path, arena, cfg, name):
    result = attack(tmp_path, arena, name, STARTER, {"gae"}, cfg, secrecy=True)
    if result is not None:
        assert result.score == 0 and "ADOPTED" not in result.output
        assert "cannot read" in result.output or "PROC searched" in result.output


def test_kernel_escapes_are_refused(tmp_path, arena, cfg):
    result = attack(tmp_path, arena, "escape_kernel", REFERENCE, {"gae"}, cfg)
    assert result.score == result.max_score
    lines = [line for line in result.output.splitlines() if line.startswith("ESCAPE")]
    assert len(lines) == 6 and not [line for line in lines if line.endswith(" ok")], lines
    assert "ESCAPE uid 0 " not in result.output


def test_a_deep_frame_as_the_import_answer_is_not_importable(tmp_path, arena, cfg):
    """A frame nested 600 lists deep, sent before the worker's own answer: the child is killed and the
    submission could not be imported (before: RecursionError escaped, children were left, 84/100)."""
    result = attack(tmp_path, arena, "deep_frame_at_import", REFERENCE, {"gae", "rm_loss"}, cfg)
    assert result.score == 0 and result.status == "not_importable"
    assert all(t.message.startswith("rlhf.py could not be imported: importing the submission sent an unreadable answer")
               for t in result.tests), [t.message for t in result.tests]


def nested_depth(path: Path, name: str = "d") -> int:
    """How many folders named `name` are nested one in another below `path` (through descriptors: no PATH_MAX)."""
    depth, fd = 0, os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    while True:
        try:
            inner = os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=fd)
        except OSError:
            os.close(fd)
            return depth
        os.close(fd)
        depth, fd = depth + 1, inner


def dead_pid() -> int:
    done = subprocess.Popen(["true"])
    done.wait()
    return done.pid


@slow
def test_what_a_child_leaves_never_breaks_the_next_grade(tmp_path, arena, cfg):
    """Its temp folder holds 3,000 nested folders, folders of mode 0o000, link loops, links out and names no codec
    reads: its folder goes with it, and the reference graded next gets every point (before, at the Docker level:
    RecursionError in Sandbox.kill, the folder stayed, and every later child start crashed)."""
    results = []
    for name in ("hostile_leftovers", ""):
        (tmp_path / (name or "reference")).mkdir()
        results.append(attack(tmp_path / (name or "reference"), arena, name, REFERENCE, {"gae"}, cfg))
        assert not list(arena.iterdir()), "a child's folder stayed"
    assert "LEFTOVERS built" in results[0].output, results[0].output[-500:]
    assert [r.score for r in results] == [r.max_score for r in results] and results[0].max_score > 0


HOSTILE_JUDGE = """
import sys, time
from pathlib import Path
from autograder.lab import config
from autograder.sandbox import sandbox
sandbox.CHILD_ROOT = sys.argv[1]
child = sandbox.Child(Path(sys.argv[2]), config.load().limits)
print(child.home, flush=True)
time.sleep(600)
"""


def test_a_hostile_folder_a_killed_judge_left_is_swept_before_the_next_grade(tmp_path, arena, cfg):
    """A judge SIGKILLed while its child holds the hostile tree cannot remove it: the next child start does (with
    bubblewrap the tree was in the child's private /tmp, gone with it), and the reference gets every point."""
    path = tmp_path / "rlhf.py"
    path.write_text((ATTACKS / "hostile_leftovers.py").read_text().replace("__OUT__", str(tmp_path)))
    judge = subprocess.Popen([sys.executable, "-c", HOSTILE_JUDGE, str(arena), str(path)], cwd=ROOT,
                             stdout=subprocess.PIPE, text=True)
    left = Path(judge.stdout.readline().strip())
    judge.kill()
    judge.wait()
    assert left.parent == arena and left.is_dir()
    if not isolation.detect().bwrap:
        assert nested_depth(left / "tmp" / "leftovers") == 3_000
    (tmp_path / "next").mkdir()
    result = attack(tmp_path / "next", arena, "", REFERENCE, {"gae"}, cfg)
    assert result.score == result.max_score > 0
    assert not left.exists() and not list(arena.iterdir())


def test_a_leftover_that_cannot_be_removed_is_told_to_staff_once(arena, cfg, monkeypatch, capfd):
    """Children start on regardless, and staff read one line on stderr (never a report) naming what stays."""
    stuck = arena / f"autograder-child-{isolation.pid_namespace()}-{dead_pid()}-stuck"
    stuck.mkdir()
    remove_tree = sandbox.filetree.remove_tree
    monkeypatch.setattr(sandbox.filetree, "remove_tree",
                        lambda path: [f"{path}/held"] if Path(path) == stuck else remove_tree(path))
    monkeypatch.setattr(sandbox, "_TOLD", set())
    for _ in range(3):
        sandbox.Child(None, cfg.limits, program="probe.py").kill()
    told = [line for line in capfd.readouterr().err.splitlines() if str(stuck) in line]
    assert len(told) == 1 and "could not remove" in told[0] and "held" in told[0], told
    assert [p.name for p in arena.iterdir()] == [stuck.name]


# --------------------------------------------------------------------------- slow: the rest of the suite
@slow
def test_bad_frames_as_answers_fail_those_calls_only(tmp_path, arena, cfg):
    result = attack(tmp_path, arena, "deep_frame_in_reply", REFERENCE, {"gae", "kl", "ppo_clip", "rm_loss"}, cfg)
    assert part_score(result, "gae") == part_score(result, "kl") == 0
    assert part_score(result, "rm_loss") == part_max(result, "rm_loss") > 0
    for part, reason in (("gae", "frame nested deeper than N"), ("kl", "tensor dtype not allowed"),  # N: the
                         ("ppo_clip", "integer of N digits")):  # wire's words write every number so (wire_words)
        assert f"sent an unreadable answer ({reason}" in messages(result, part), messages(result, part)


@pytest.fixture(scope="module")
def zeros_score(tmp_path_factory, cfg):
    """What an honest compute_gae returning zeros scores (it does pass the padding test, honestly)."""
    root = new_arena()
    try:
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(sandbox, "CHILD_ROOT", str(root))
            return attack(tmp_path_factory.mktemp("zeros"), root, "returns_zeros", REFERENCE, {"gae"}, cfg).score
    finally:
        remove_tree(root)


@slow
@pytest.mark.parametrize("name, deserves, words, limits", [
    ("exit_at_import", "nothing", "exited during importing the submission: exit code 0", {}),
    ("lying_eq", "nothing", "compute_gae", {}),
    ("lying_torch_function", "zeros", "differ", {}),
    ("lying_nan", "nothing", "", {}),
    ("patch_comparisons", "zeros", "differ", {}),
    ("patch_labeler", "everything", "", {}),
    ("hang_ignoring_signals", "nothing", "did not finish within 3 s", {"call_seconds": 3}),
    ("cpu_burn", "nothing", "used more than 2 s of CPU time", {"cpu_seconds": 2, "call_seconds": 30}),
    ("memory_hog", "nothing", "ran out of memory (limit 700 MB)", {"memory_mb": 700}),
    ("memory_huge_request", "nothing", "out of memory", {}),
    ("fork_bomb", "nothing", "did not finish within 5 s", {"call_seconds": 5}),
    ("output_flood", "nothing", "did not finish within 3 s", {"call_seconds": 3}),
    ("segfault", "nothing", "crashed (killed by a signal) during compute_gae()", {}),
    ("huge_tensors", "nothing", "over the limit", {}),
    ("forged_frames", "nothing", "unreadable answer", {"call_seconds": 3}),
    ("network", "everything", "", {}),
    ("huge_print_at_import", "everything", "", {}),
    ("surrogate_errors", "nothing", "raised an exception of its own class", {}),
    ("sysv_shm", "everything", "", {"memory_mb": 700}),
    ("memfd_hog", "everything", "", {"memory_mb": 700}),
])
def test_attack_gets_what_it_deserves(tmp_path, arena, cfg, zeros_score, name, deserves, words, limits):
    """nothing: 0; zeros: what honest zeros score (the lie adds nothing); everything: the attack broke nothing."""
    result = attack(tmp_path, arena, name, REFERENCE, {"gae"}, cfg, **limits)
    expected = {"nothing": 0, "zeros": zeros_score, "everything": result.max_score}[deserves]
    assert result.score == expected, [(t.id, t.message) for t in result.tests]
    assert words in messages(result, "gae")


@slow
def test_printing_is_read_counted_and_dropped(tmp_path, arena, cfg):
    result = attack(tmp_path, arena, "huge_print_at_import", REFERENCE, {"gae"}, cfg)
    assert result.score == result.max_score and "more bytes of output were printed and not kept" in result.output
    assert "\x1b" not in result.output and "\x00" not in result.output


@slow
@pytest.mark.parametrize("name", ["sysv_shm", "memfd_hog"])
def test_memory_the_poll_cannot_see_is_refused(tmp_path, arena, cfg, name):
    result = attack(tmp_path, arena, name, REFERENCE, {"gae"}, cfg, memory_mb=700)
    assert "held" not in result.output and "refused errno 1" in result.output  # EPERM from seccomp


@slow
def test_files_in_memory_backed_folders_count_as_memory(tmp_path, arena, cfg):
    """Refused (Landlock), capped (bubblewrap's private tmpfs) or counted (stopped above memory_mb)."""
    result = attack(tmp_path, arena, "tmpfs_hog", REFERENCE, {"gae"}, cfg, memory_mb=700)
    if part_score(result, "gae") < part_max(result, "gae"):
        assert "ran out of memory (limit 700 MB)" in messages(result, "gae")
        return
    held = [line.split() for line in result.output.splitlines() if line.startswith("TMPFS held")]
    assert held, result.output
    bwrap = isolation.detect().bwrap
    on_memory = {folder: int(mib) for _, _, folder, mib in held if bwrap or sandbox._on_tmpfs(folder)}
    assert sum(on_memory.values()) <= 2 * cfg.limits.tmp_mb, held  # $TMPDIR may be /tmp itself


@slow
def test_the_childs_text_never_enters_the_graders_sentences(tmp_path, arena, cfg):
    """A hidden test's input smuggled out in an exception message or the last printed line stays in
    `detail` (shown only where the inputs may be): the sentence of every test is the grader's own."""
    result = attack(tmp_path, arena, "leak_inputs", REFERENCE, {"gae"}, cfg)
    assert result.score == 0
    assert not [t.message for t in result.tests if "LEAKED-INPUT" in t.message]


@pytest.fixture
def sent(monkeypatch):
    """Every call the judge sends the child, as (test id, args, kwargs, the release of its input: RemoteSubmission
    .sending) (grade with one lane: in this process)."""
    calls: list[tuple[str, tuple, dict, str]] = []
    current = [""]
    run_test, call = grade_module.run_test, remote.RemoteSubmission.call

    def recording_run_test(test_id, *args, **kwargs):
        current[0] = test_id
        return run_test(test_id, *args, **kwargs)

    def recording_call(self, fn, *args, **kwargs):
        calls.append((current[0], args, kwargs, self.sending))
        return call(self, fn, *args, **kwargs)
    monkeypatch.setattr(grade_module, "run_test", recording_run_test)
    monkeypatch.setattr(remote.RemoteSubmission, "call", recording_call)
    return calls


def withheld_values(calls) -> set[str]:
    """The numbers of the inputs sent withheld (not released at once: a hidden test's, a fresh twin's), as reports
    would write them (4 decimals), those with at least 4 significant digits (a shorter one could match any other)."""
    found = set()
    for _, args, kwargs, release in calls:
        if release == "visible":
            continue
        for a in [*args, *kwargs.values()]:
            values = a.flatten().tolist() if hasattr(a, "flatten") else [a] if isinstance(a, float) else []
            found |= {str(round(v, 4)) for v in values if isinstance(v, float)}
    return {v for v in found if len(v.lstrip("-").replace(".", "").lstrip("0")) >= 4}


def channels(out: Path) -> tuple[str, str]:
    """(what students see at once, what they see later or staff see): results.json's summary and visible entries,
    report.md and report.html; the other entries and staff.md."""
    data = json.loads((out / "results.json").read_text())
    now = [data["output"]] + [f"{e['name']}\n{e['output']}" for e in data["tests"] if e["visibility"] == "visible"]
    later = [f"{e['name']}\n{e['output']}" for e in data["tests"] if e["visibility"] != "visible"]
    return ("\n".join(now + [(out / "report.md").read_text(), (out / "report.html").read_text()]),
            "\n".join(later + [(out / "staff.md").read_text()]))


@pytest.mark.parametrize("name, later", [
    ("leak_class_name", "returned an object of its own class"),  # the class name is never repeated, not even later
    pytest.param("echo_hidden_input", "Got:", marks=slow),
    pytest.param("raise_at_chosen_line", "From your code: line ", marks=slow),
    pytest.param("shape_from_input", "Got:      shape (", marks=slow),
    pytest.param("leak_inputs", "LEAKED-INPUT", marks=slow),  # it leaks on the public input too: shown there
])
def test_a_withheld_input_never_reaches_a_visible_field(tmp_path, arena, cfg, sent, name, later):
    """Issue 20: a submission that writes a hidden test's input into its class names, its answers, the line it
    raises at, its exception's class and message, a shape, its exit code or its printed output shows students
    none of it before the inputs are released: the visible channels hold no marker, no line number, no number
    of four digits or more, and none of the withheld inputs' numbers; the later entries (and staff.md) do."""
    result = attack(tmp_path, arena, name, REFERENCE, {"gae"}, cfg, lanes=1)
    public = [t for t in result.tests if t.inputs_visibility == "visible"]
    now, afterwards = channels(tmp_path / "out")
    values = withheld_values(sent)
    assert len(values) >= 10 or name == "leak_inputs"  # that one fails (and shrinks) at once, on zeros
    texts = now.split("<style>")[0] + now.split("</style>")[-1]  # the report's CSS holds numbers of its own
    if name == "leak_inputs":  # drop what the public test may show: its own input, its own text
        assert result.score == 0
        shown = [line for line in texts.splitlines() if "LEAKED" in line]
        assert all("[[0.0, 0.0, 1.0, 0.0], [2.0, 9.0, 9.0, 9.0]" in line for line in shown), shown
        now = texts = "\n".join(line for line in texts.splitlines() if "LEAKED" not in line)
    else:
        assert public and all(t.passed for t in public)  # the attacks answer the public input right
        derived = contract_tests.derived_ids(cfg)  # asked on public-shaped fresh inputs, which they answer right
        assert part_score(result, "gae") == sum(t.max_score for t in public) + sum(
            t.score for t in result.tests if t.id in derived)
        assert not [t for t in result.tests if t.id.startswith("gae.") and t not in public and t.id not in derived
                    and t.passed]  # every hidden test of the part fails
    assert not [m for m in ("HIDDEN", "LEAKED") if m in now]
    assert not re.findall(r"\bline \d|exit code|signal \d", now)
    assert not re.findall(r"\d{4,}", texts), re.findall(r".{40}\d{4,}.{20}", texts)[:3]
    assert not [v for v in values if v in now]
    assert later in afterwards  # what is withheld is there for the later release and for staff
    if name == "echo_hidden_input":
        assert [v for v in values if v in afterwards]


@pytest.mark.parametrize("channel, scheduled, policy", [
    pytest.param("message", True, False, marks=slow),
    ("message", False, False),
    pytest.param("message", False, True, marks=slow),
    pytest.param("got", True, False, marks=slow),
    pytest.param("got", False, False, marks=slow),
    pytest.param("line", False, False, marks=slow),
    pytest.param("output", False, False, marks=slow),
    pytest.param("exit", False, True, marks=slow),
])
def test_a_kept_withheld_input_never_reaches_a_visible_field(tmp_path, arena, cfg, sent, monkeypatch, channel,
                                                              scheduled, policy):
    """Issue 28: every function keeps the first withheld input it receives (a hidden test's, a fresh twin's) and says
    it in every later answer of every function, through `channel`. The grade runs the public checks' shown inputs
    first, in a child that has received nothing withheld (`scheduled`); without that order (taint alone: a child's
    text is shown no earlier than every input it had received), and with the feedback policy limiting the grade,
    students still see none of it before the inputs are released; staff see it."""
    if not scheduled:
        monkeypatch.setattr(grade_module, "_shown_first", lambda *args: {})
    result = attack(tmp_path, arena, "keep_then_leak", REFERENCE, {"rm_loss", "gae"}, cfg, mark=f"keep-{channel}",
                    lanes=1)
    if policy:
        outcome.limit_feedback(result, "limited feedback (this test's policy)")
        write_reports(result, tmp_path / "out")
    now, afterwards = channels(tmp_path / "out")
    values = withheld_values(sent)
    assert len(values) >= 10
    texts = now.split("<style>")[0] + now.split("</style>")[-1]  # the report's CSS holds numbers of its own
    for title in {t.title for t in result.tests}:  # and the tests' titles ("gaps from 1e-3 to 2000")
        texts = texts.replace(title, "")
    assert "HIDDEN" not in now
    assert not re.findall(r"\bline \d|exit code|signal \d", now)
    assert not re.findall(r"\d{4,}", texts), re.findall(r".{40}\d{4,}.{20}", texts)[:3]
    assert not [v for v in values if v in now]
    assert any(not t.passed for t in result.tests if t.inputs_visibility == "visible") or scheduled
    said = {"message": "HIDDEN-MESSAGE", "line": "HIDDEN-LINE", "output": "HIDDEN-OUTPUT", "exit": "exit code",
            "got": "Got:"}[channel]
    assert said in afterwards  # what is withheld is there for the later release and for staff


@slow
def test_a_training_input_never_reaches_a_visible_field(tmp_path, cfg):
    """The e2e tests' inputs are the judge's rollouts: what the submission says about them (its exception's class,
    line and message) is shown with the test's inputs_visibility, never with its outcome."""
    from autograder.judge import e2e
    from autograder.judge.grade import load_reference
    from autograder.judge.outcome import inputs_shown, scored, test_text
    path = tmp_path / "rlhf.py"
    path.write_text(REFERENCE.read_text() + "\n" + (ATTACKS / "leak_in_training.py").read_text())
    sub = remote.RemoteSubmission(path, cfg.limits)
    try:
        finding = e2e.run("kl_penalty", cfg, sub, load_reference())
    finally:
        sub.close()
    t = scored(cfg.tests["e2e.kl_penalty"], "PPO", ["e2e"], finding)
    assert t.inputs_visibility != "visible" and not inputs_shown(t, t.visibility)
    shown = test_text(t, inputs_shown(t, t.visibility))
    assert "shaped_rewards raised an exception of its own class" in shown, shown
    assert "HIDDEN" not in shown and not re.findall(r"line \d|\d{4,}", shown), shown
    assert "HIDDEN-MESSAGE" in test_text(t) and "From your code: line " in test_text(t)


@slow
def test_wrong_shapes_fail_the_function_in_unit_checks(tmp_path, arena, cfg):
    result = attack(tmp_path, arena, "wrong_shapes", REFERENCE, {"gae", "kl"}, cfg)
    assert part_score(result, "gae") == 0 and "shape" in messages(result, "gae")
    assert part_score(result, "kl") == 0


@slow
def test_flattened_gradients_fail_the_function_not_the_judge(tmp_path, arena, cfg):
    result = attack(tmp_path, arena, "flat_gradients", REFERENCE, {"ppo_clip", "rm_loss"}, cfg)
    assert result.score < result.max_score and "the gradient for argument" in messages(result, "ppo_clip")


@slow
def test_wrong_shapes_in_training_fail_the_function_not_the_judge(tmp_path, cfg):
    """shaped_rewards answering (2**19, 1, 1) in an e2e run: refused before the training loop broadcasts
    it (that took the judge from ~0.5 to ~1.5 GB, growing with the wire cap)."""
    import resource

    from autograder.judge import e2e
    from autograder.judge.grade import load_reference
    from autograder.sandbox.remote import RemoteSubmission
    path = tmp_path / "rlhf.py"
    path.write_text(REFERENCE.read_text() + "\n" + (ATTACKS / "wrong_shapes.py").read_text())
    sub = RemoteSubmission(path, cfg.limits)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    try:
        finding = e2e.run("kl_penalty", cfg, sub, load_reference())
    finally:
        sub.close()
    grown_mb = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024
    assert "shaped_rewards returned a shape of its own, expected shape" in finding.message, finding.message
    assert finding.kind == "shape" and finding.submission_text == "shape (524288, 1, 1)"  # shown with the inputs
    assert grown_mb < 300, f"the judge grew by {grown_mb:.0f} MB"


@slow
def test_a_disk_search_adopts_nothing(tmp_path, arena, cfg):
    result = attack(tmp_path, arena, "search_disk", STARTER, {"gae"}, cfg, secrecy=True)
    if result is not None:
        assert result.score == 0 and "ADOPTED" not in result.output, result.output[-2000:]


@pytest.fixture(scope="module")
def copies_beside_the_interpreter():
    """Copies of the grader where the child may read, as installs and caches leave them: a non-editable
    `pip install .` (with its __pycache__), a renamed copy of the reference, and a .pyc of the reference with
    no source beside it. The grader's search for copies is forgotten before and after."""
    place = Path(sys.prefix) / "lib" / f"autograder-copy-{uuid.uuid4().hex[:8]}"
    try:
        subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-build-isolation",
                        "--target", str(place / "site"), str(ROOT)], check=True, capture_output=True, timeout=600)
        (place / "notes").mkdir()
        shutil.copy(REFERENCE, place / "notes" / "reference_backup.py")
        py_compile.compile(str(REFERENCE), cfile=str(place / "cache" / "__pycache__" / "helpers.cpython-311.pyc"),
                           doraise=True)
        secret_files._searched.clear()
        yield place
    finally:
        shutil.rmtree(place, ignore_errors=True)
        secret_files._searched.clear()


@slow
@pytest.mark.parametrize("name", ["import_installed_copy", "load_compiled_copy", "search_disk"])
def test_copies_of_the_grader_beside_the_interpreter_are_hidden(tmp_path, arena, cfg, copies_beside_the_interpreter,
                                                                name):
    """The bank's variants from the installed copy, the reference from its .pyc, the renamed reference: each
    scored 20/20 for gae before copies were searched for; now each is out of reach (outside the child's
    allow-list, or inside it and found and hidden by the search): 0, or the grade refused."""
    found = {c.path for c in isolation.secret_copies()}
    for copy in (copies_beside_the_interpreter / "notes" / "reference_backup.py",
                 copies_beside_the_interpreter / "cache" / "__pycache__" / "helpers.cpython-311.pyc"):
        assert copy.is_file() and (copy in found or not readable.view().readable(copy)), copy
    assert not (copies_beside_the_interpreter / "site" / "grading").exists()  # an install holds no lab: no bank
    result = attack(tmp_path, arena, name, STARTER, {"gae"}, cfg, secrecy=True)
    if result is not None:
        assert result.score == 0 and "ADOPTED" not in result.output, result.output[-2000:]


@slow
def test_network_is_unreachable(tmp_path, arena, cfg):
    result = attack(tmp_path, arena, "network", REFERENCE, {"gae"}, cfg)
    assert "NETWORK REACHED" not in result.output and "socket allowed 2" not in result.output


@slow
def test_patching_the_labeler_stays_in_the_child(tmp_path, arena, cfg):
    import lab_helpers
    before = lab_helpers.gold_score
    result = attack(tmp_path, arena, "patch_labeler", REFERENCE, {"gae"}, cfg)
    assert result.score == result.max_score and lab_helpers.gold_score is before


@slow
def test_detached_processes_are_killed(tmp_path, arena, cfg):
    mark = str(900000 + uuid.uuid4().int % 99999)
    result = attack(tmp_path, arena, "detached_daemons", REFERENCE, {"gae"}, cfg, mark=mark)
    assert result.score == result.max_score


@slow
def test_executing_the_reference_gets_nothing(tmp_path, arena, cfg):
    result = attack(tmp_path, arena, "import_reference", STARTER, {"gae"}, cfg, secrecy=True)
    if result is not None:
        assert result.score == 0 and "executed the reference" not in result.output


@slow
def test_files_beside_the_submission_are_ignored(tmp_path, arena, cfg):
    files = {"conftest.py": "import pytest\n@pytest.hookimpl(tryfirst=True)\ndef pytest_runtest_call(item):\n"
                            "    pass\n",
             "test_rlhf.py": "def test_everything():\n    assert True\n",
             "lab_helpers.py": "raise SystemExit('fake world')\n",
             "hypothesis.py": "raise SystemExit('fake hypothesis')\n"}
    result = attack(tmp_path, arena, "", STARTER, {"gae"}, cfg, files=files)
    assert result.score == 0 and "not implemented" in messages(result, "gae").lower()


@slow
def test_a_link_to_the_reference_is_not_followed(tmp_path, arena, cfg):
    folder = tmp_path / "linked"
    folder.mkdir()
    (folder / "rlhf.py").symlink_to(REFERENCE)
    try:  # discovery takes regular files only; the sandbox's copy (O_NOFOLLOW) refuses a link too
        result = grade(folder, only={"gae"}, cfg=cfg)
    except GraderError as exc:
        assert "symbolic link" in str(exc) and "only regular files are graded" in str(exc)
    else:
        assert result.score == 0 and "links are not followed" in messages(result, "gae")
    assert GRADING_YAML.is_file()


@slow
def test_a_function_that_writes_into_its_input_loses_every_call_of_it(tmp_path, arena, cfg):
    """Found by the child's before/after comparison (the sandbox sends copies, so nothing else would see it)."""
    result = attack(tmp_path, arena, "mutates_input", REFERENCE, {"kl", "e2e"}, cfg)
    assert part_score(result, "kl") == 0, [(t.id, t.message) for t in result.tests]
    assert "kl_estimate modified its argument logp in place" in messages(result, "kl")
    assert "shaped_rewards modified its argument logp in place" in messages(result, "kl")  # it calls kl_estimate
    e2e = [t for t in result.tests if t.tags[0] == "e2e"]
    assert [t.id for t in e2e if t.passed] == ["e2e.reward_model"]  # the only one not training with part kl
    assert all("modified its argument logp in place" in t.message for t in e2e if not t.passed)


@slow
@pytest.mark.parametrize("name", ["stale_cache", "first_sight_wrong", "wrong_until_seen_thrice"])
def test_a_function_with_state_loses_its_points(tmp_path, arena, cfg, name):
    """Two different answers to one input, found by the judge asking again (remote.py) or by hypothesis."""
    result = attack(tmp_path, arena, name, REFERENCE, {"gae"}, cfg)
    assert result.score == 0, [(t.id, t.message) for t in result.tests]
    assert "different answers to the same input" in messages(result, "gae")
