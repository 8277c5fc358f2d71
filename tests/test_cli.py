"""The command contract (autograder/commands/common.py): every bad input is refused before any work,
with one `error: ...` line on stderr and exit 2; --help has examples; --version; Ctrl-C exits 130."""

from __future__ import annotations

import dataclasses
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from autograder.__main__ import COMMANDS, main
from autograder.commands.common import CommandError, check_out_folder, comma_list
from autograder.lab.paths import REFERENCE, ROOT
from autograder.sandbox import isolation, zygote
from autograder.sandbox.filetree import remove_tree


@pytest.fixture
def files(tmp_path):
    (tmp_path / "rlhf.py").write_text("x = 1\n")
    (tmp_path / "class" / "ada").mkdir(parents=True)
    (tmp_path / "class" / "ada" / "rlhf.py").write_text("x = 1\n")
    (tmp_path / "afile").write_text("not a folder\n")
    for name, text in {"two/a_old.py": REFERENCE.read_text(), "two/z_final.py": REFERENCE.read_text(),
                       "none/a_old.py": "x = 1\n", "none/z_final.py": "y = 2\n",
                       "roster.csv": "name,mail\nAda,ada@uni.edu\n",
                       "prev/overrides.csv": "student,target,points,reason\nada,gae,99,typo\n",
                       "prev2/overrides.csv": "student,target,points,reason\nadaa,gae,9,by hand\n"}.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    (tmp_path / "emptydir").mkdir()
    import sqlite3
    with sqlite3.connect(tmp_path / "other.db") as db:
        db.execute("create table t (x)")
    return tmp_path


def snapshot(folder: Path) -> dict:
    """Every path under `folder`, with a file's modification time (a folder's changes with the write probe)."""
    return {p: p.stat().st_mtime_ns if p.is_file() else None for p in folder.rglob("*")}


# (arguments with {t} for the temporary folder, a piece of the one error line)
BAD = [
    (["grade", "{t}/nothing.py", "--out", "{t}/o"], "no submission at"),
    (["grade", "{t}/rlhf.py", "--out", "{t}/o", "--only", "nonsense"], "nonsense is unknown. Valid: rm_loss, gae"),
    (["grade", "{t}/rlhf.py", "--out", "{t}/o", "--only", "GAE"], "case-sensitive (did you mean gae?)"),
    (["grade", "{t}/rlhf.py", "--out", "{t}/o", "--only", "gae.known_values"], "is a test, not a part (its part: gae)"),
    (["grade", "{t}/rlhf.py", "--out", "{t}/afile"], "is a file, not a folder"),
    (["grade", "{t}/rlhf.py", "--out", "{t}/afile/sub"], "cannot be created"),
    (["grade", "{t}/rlhf.py", "--out", "/proc/lab12-out"], "cannot be written: /proc refuses new files"),
    (["grade", "{t}/rlhf.py"], "the following arguments are required: --out"),
    (["grade", "{t}/two", "--out", "{t}/o"], "holds no rlhf.py, and 2 files define contract functions (a_old.py: 7 "
                                             "of 7, z_final.py: 7 of 7): rename the one to grade to rlhf.py"),
    (["grade", "{t}/none", "--out", "{t}/o"], "no file that defines a contract function (it holds: a_old.py, "
                                              "z_final.py): it needs rlhf.py, or one .py or .ipynb file defining"),
    (["grade", "{t}/emptydir", "--out", "{t}/o"], "emptydir is empty (no file at all): it needs rlhf.py"),
    (["grade", "{t}/rlhf.py", "--out", "{t}/o", "--metadata", "{t}/nothere.json"], "no --metadata file at"),
    (["grade", "{t}/rlhf.py", "--out", "{t}/o", "--metadata", "{t}/class"], "--metadata file: "),
    (["grade", "{t}/rlhf.py", "--out", "{R}/autograder"], "is inside the grader's package"),
    (["grade", "{t}/rlhf.py", "--out", "{R}/solutions/o"], "is inside the reference solutions"),
    (["grade", "{t}/rlhf.py", "--out", "{R}/assignment"], "is inside the given world"),
    (["grade", "{t}/rlhf.py", "--out", "{R}"], "is inside the grader's repository: what is written there changes "
                                              "the grader or ships in the next release"),
    (["grade-all", "{t}/missing", "--out", "{t}/o"], "no submissions at"),
    (["grade-all", "{t}/rlhf.py", "--out", "{t}/o"], "rlhf.py is not a folder or a zip file"),
    (["grade-all", "{t}/class", "--out", "{t}"], "is not empty and was not written by grade-all"),
    (["grade-all", "{t}/class", "--out", "{t}/o", "--only", "gea"], "gea is unknown"),
    (["grade-all", "{t}/class", "--out", "{t}/o", "--workers", "0"], "--workers: must be at least 1"),
    (["grade-all", "{t}/class", "--out", "{t}/o", "--workers", "two"], "'two' is not a whole number"),
    (["grade-all", "{t}/class", "--out", "{t}/afile"], "is a file, not a folder"),
    (["grade-all", "{t}/class", "--out", "{t}/o", "--nbgrader-db", "{t}/none.db"], "no nbgrader gradebook at"),
    (["grade-all", "{t}/class", "--out", "{t}/o", "--nbgrader-db", "{t}/afile", "--only", "gae"], "drop --only"),
    (["grade-all", "{t}/class", "--out", "{R}/autograder/o"], "is inside the grader's package"),
    (["grade-all", "{t}/class", "--out", "{t}/o", "--roster", "{t}/none.csv"], "no roster at"),
    (["grade-all", "{t}/class", "--out", "{t}/o", "--roster", "{t}/roster.csv"],
     "has no `student` column, nor a Gradescope roster's columns (First Name, Last Name, SID, Email, Role): its "
     "first line is name, mail"),
    (["grade-all", "{t}/class", "--out", "{t}/o", "--roster", "{t}/other.db"], "is an sqlite file but not an "
                                                                              "nbgrader gradebook"),
    (["grade-all", "{t}/class", "--out", "{t}/o", "--student", "nobody"],
     "--student: nobody is not a student of this class"),
    (["grade-all", "{t}/class", "--out", "{t}/prev"], "prev/overrides.csv:2: points 99 for gae is outside 0 .. 20"),
    (["grade-all", "{t}/class", "--out", "{t}/prev2"], "no student 'adaa' in this class (did you mean ada?)"),
    (["validate", "--parts", "e2e"], "--parts: e2e is unknown. Valid: rm_loss"),
    (["validate", "--workers", "-1"], "--workers: must be at least 1"),
    (["release", "--out", "{t}/afile"], "is a file, not a folder"),
    (["release", "--out", "{R}/autograder"], "is inside the grader's package"),
    (["release", "--out", "{R}/release/out"], "is inside the grader's repository"),
    (["frobnicate"], "invalid choice: 'frobnicate'"),
]


@pytest.mark.parametrize("argv, message", BAD, ids=[" ".join(a) for a, _ in BAD])
def test_bad_input_is_one_error_line_and_exit_2(files, capsys, argv, message):
    argv = [a.replace("{t}", str(files)).replace("{R}", str(ROOT)) for a in argv]
    before, grader = snapshot(files), snapshot(ROOT / "autograder")
    try:
        code = main(argv)
    except SystemExit as exc:  # argparse's own checks (types, required arguments)
        code = exc.code
    err = capsys.readouterr().err
    assert code == 2, err
    assert err.startswith("error: ") and err.count("\n") == 1 and message in err, err
    assert snapshot(files) == before and snapshot(ROOT / "autograder") == grader  # refused before any work
    assert not (ROOT / "solutions" / "o").exists()


def test_similarity_without_copydetect_is_one_sentence(files, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "copydetect", None)  # as if the optional package were not installed
    assert main(["grade-all", str(files / "class"), "--out", str(files / "o"), "--similarity"]) == 2
    assert capsys.readouterr().err == ('error: --similarity needs the optional package copydetect: '
                                       'pip install -e ".[similarity]"\n')
    assert not (files / "o").exists()


def test_an_empty_class_is_counted_and_warned_about(files, capsys):
    assert main(["grade-all", str(files / "emptydir"), "--out", str(files / "o")]) == 0
    out, err = capsys.readouterr()
    assert out.startswith("0 students: 0 up to date"), out
    assert "warning: no student: " in err and "is it the right folder?" in err
    (files / "emptydir" / "ada").mkdir()
    assert main(["grade-all", str(files / "emptydir"), "--out", str(files / "o")]) == 0
    assert capsys.readouterr().out.startswith("1 student (1 empty or missing): ")


def test_a_temp_folder_submissions_cannot_use_stops_grade_and_grade_all(files, capsys, monkeypatch):
    """The Docker level (own uid, no bubblewrap) with TMPDIR a folder of root's of mode 0700: every student was
    graded "not importable" and grade-all exited 0. Both refuse before grading: one sentence, exit 2."""
    bare = dataclasses.replace(isolation.detect(), bwrap=None)
    if not bare.own_uid:
        pytest.skip("a child of the grader's own uid can use the grader's folders")
    base = Path(tempfile.mkdtemp(prefix="autograder-tmpdir-"))
    base.chmod(0o755)
    temp = base / "temp"
    temp.mkdir(mode=0o700)
    monkeypatch.setattr(isolation, "detect", lambda: bare)
    monkeypatch.setattr(tempfile, "tempdir", str(temp))
    try:
        for argv in (["grade", str(files / "rlhf.py"), "--out", str(files / "o1")],
                     ["grade-all", str(files / "class"), "--out", str(files / "o2")]):
            code = main(argv)
            err = capsys.readouterr().err
            assert code == 2 and err.count("\n") == 1, err
            assert err.startswith(f"error: submissions cannot run in {temp} (the temporary folder: TMPDIR)"), err
        assert not (files / "o2" / "gradebook.csv").exists()
    finally:
        remove_tree(base)


def test_every_command_has_examples_in_its_help(capsys):
    for command in COMMANDS:
        with pytest.raises(SystemExit) as exit_:
            main([command, "--help"])
        assert exit_.value.code == 0
        text = capsys.readouterr().out
        assert "examples:" in text and f"python -m autograder {command}" in text, command
        assert "exit codes:" in text and "130" in text, command


def test_version(capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["--version"])
    assert exit_.value.code == 0 and capsys.readouterr().out.startswith("llm-labs-autograder ")


def test_comma_list_and_out_folder(tmp_path):
    assert comma_list(" gae, kl,,gae ") == ["gae", "kl"]
    assert check_out_folder(tmp_path / "new" / "deeper") == tmp_path / "new" / "deeper"
    assert not (tmp_path / "new").exists()  # checked, not created
    assert list(tmp_path.iterdir()) == []   # the write probe leaves nothing behind
    with pytest.raises(CommandError):
        check_out_folder(Path("/proc/1/lab12"))


@pytest.mark.parametrize("after", [0.0, 0.5, 1.2, 2.5])
def test_ctrl_c_is_one_line_and_exit_130(tmp_path, after):
    """At any moment once the grade has started its children: they start before the judge imports torch, and a
    Ctrl-C during that import was lost in it (the grade went on) or ended in a traceback."""
    (tmp_path / "rlhf.py").write_text("import time\ntime.sleep(60)\n")
    proc = subprocess.Popen([sys.executable, "-m", "autograder", "grade", str(tmp_path / "rlhf.py"),
                             "--out", str(tmp_path / "out"), "--only", "gae"], cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    # (SIGINT at its default, as in a terminal, even when the tests run in a background job, which inherits it
    # ignored: Python then never raises KeyboardInterrupt)
    deadline = time.monotonic() + 60
    while not _children(proc.pid) and time.monotonic() < deadline:  # the grade is under way: its child runs
        time.sleep(0.2)
    time.sleep(after)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert err.strip().splitlines() == ["interrupted: grade stopped; its sandboxed child was stopped and no "
                                        "report was written"], err
    assert not _children(proc.pid)
    assert not (tmp_path / "out").exists()


def _children(pid: int) -> list[str]:
    return subprocess.run(["pgrep", "-P", str(pid)], capture_output=True, text=True).stdout.split()


def test_self_check_is_an_explicit_mode(tmp_path):
    import json

    from autograder.lab import config
    (tmp_path / "rlhf.py").write_text("def bradley_terry_loss(:\n")
    run = subprocess.run([sys.executable, "-m", "autograder", "grade", str(tmp_path / "rlhf.py"), "--out",
                          str(tmp_path / "out"), "--only", "rm_loss", "--self-check"], cwd=ROOT, capture_output=True,
                         text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    every = {t for t in config.load().tests if t.startswith("rm_loss.")}
    ran = {t["name"].split(":")[0] for t in json.loads((tmp_path / "out" / "results.json").read_text())["tests"]}
    assert ran and ran < every and not any("reference" in t for t in ran)  # reference-free checks only


@pytest.mark.parametrize("extra, secrets, plots", [
    ([], ["out"], True),
    (["--metadata", "meta.json", "--no-plots"], ["out", "meta.json"], False)])
def test_grade_proves_every_file_it_is_given_unreadable_and_draws_plots_unless_told(tmp_path, monkeypatch, capsys,
                                                                                    extra, secrets, plots):
    """run_autograder has no preflight of its own: the grade's proves the results folder and Gradescope's metadata
    (the student's name, earlier submissions) out of the submission's reach. --no-plots: nobody opens report.html."""
    from autograder.judge import grade as grade_mod
    asked = {}

    def fake_grade(path, **kwargs):
        asked.update(kwargs)
        raise grade_mod.GraderError("stopped here")
    monkeypatch.setattr(grade_mod, "grade", fake_grade)
    (tmp_path / "rlhf.py").write_text("x = 1\n")
    (tmp_path / "meta.json").write_text("{}")
    argv = ["grade", str(tmp_path / "rlhf.py"), "--out", str(tmp_path / "out"),
            *[str(tmp_path / a) if a == "meta.json" else a for a in extra]]
    assert main(argv) == 2 and "stopped here" in capsys.readouterr().err
    assert asked["secrets"] == [tmp_path / name for name in secrets] and asked["plots"] is plots


def test_grade_starts_its_children_before_the_judge_imports_torch():
    """`grade` starts the secrets probe's and the first lane's children first, so that their imports (~1 s each under
    bubblewrap) overlap the judge's torch import: starting them imports no torch (a blank starter: 4.2-5.1 s -> 3.0-3.5
    s wall); a lab problem found next stops the command with the children killed (main's finally)."""
    script = (
        "import sys\nfrom pathlib import Path\n"
        "from autograder.judge import early\nfrom autograder.lab import config\n"
        "from autograder.sandbox import sandbox\n"
        "early.start_for(Path(sys.argv[1]), config.load(), 'full')\n"
        "started = dict(sandbox._EARLY)\n"
        "print('torch' in sys.modules, len(started), sorted(key[2] for key in started))\n"
        "sandbox.discard_early()\n"
        "print([c.proc.poll() is not None for c in started.values()])\n")
    done = subprocess.run([sys.executable, "-c", script, str(REFERENCE)], cwd=ROOT, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    lines = done.stdout.splitlines()
    if not zygote.serves(isolation.detect()):  # fresh children (where the judge is root, the zygote's start
        # stands for both)
        assert lines == ["False 2 ['probe.py', 'worker.py']", "[True, True]"], done.stdout
    else:
        assert lines[0].startswith("False"), done.stdout


def test_the_exit_keeps_what_the_interpreters_own_does(tmp_path):
    """`exit_now` (the end of `python -m autograder`) skips the interpreter's teardown of every module, not what it
    owes: threads still running are joined, exit handlers run (a notebook's temp folder is removed by one), the
    output is flushed, the exit code is the command's."""
    script = (
        "import atexit, sys, threading, time\n"
        "from pathlib import Path\n"
        "from autograder.__main__ import exit_now\n"
        f"out = Path({str(tmp_path)!r})\n"
        "atexit.register(lambda: (out / 'handler').write_text('ran'))\n"
        "threading.Thread(target=lambda: (time.sleep(0.3), (out / 'thread').write_text('joined'))).start()\n"
        "sys.stdout.write('unflushed')\n"
        "exit_now(3)\n")
    done = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert (done.returncode, done.stdout, done.stderr) == (3, "unflushed", "")
    assert (tmp_path / "handler").read_text() == "ran" and (tmp_path / "thread").read_text() == "joined"


def test_an_output_read_by_no_one_ends_without_a_traceback():
    """`python -m autograder refresh --check | head -1`: the reader leaves, the command says nothing more (exit
    141, as a shell's SIGPIPE), and neither its print nor the exit's flush ends in a traceback."""
    read, write = os.pipe()
    os.close(read)
    done = subprocess.run([sys.executable, "-m", "autograder", "refresh", "--check"], cwd=ROOT, stdout=write,
                          stderr=subprocess.PIPE, text=True, timeout=120)
    os.close(write)
    assert done.returncode == 141 and done.stderr == "", done.stderr
