"""grade-all end to end on a mixed class (`--only gae,kl` keeps it to seconds per submission).

The class: correct (the reference), blank (the starter), partly done (one function raises
NotImplementedError), broken (a syntax error), adversarial (exits at import; kills its judge),
a notebook, a folder with no code, and a link to the reference. Checked: the gradebook equals single
`grade` runs with each grade's status (not importable, not implemented...), a link is not graded, an
attack costs only its own row, a rerun with nothing changed is quick and imports no torch, a
changed submission alone is regraded, a batch killed midway is completed by the rerun without
regrading finished students, and the same jobs run on a Dask cluster give the same gradebook.
"""

from __future__ import annotations

import csv
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from autograder.lab.paths import REFERENCE, ROOT, STARTER

pytestmark = pytest.mark.slow
ONLY = ["gae", "kl"]
CHECKED = ("alice", "bob", "carl", "dora", "eve", "nora")  # graded normally: compared with `grade`


def partly_done(function: str) -> str:
    """The reference with `function`'s solution replaced by `raise NotImplementedError`."""
    src = REFERENCE.read_text()
    start = src.index("### BEGIN SOLUTION", src.index(f"def {function}("))
    end = src.index("### END SOLUTION", start) + len("### END SOLUTION")
    return src[:start] + "raise NotImplementedError" + src[end:]


def notebook(source: str) -> str:
    cells = [{"cell_type": "markdown", "metadata": {}, "source": ["# Lab 12"]},
             {"cell_type": "code", "metadata": {}, "execution_count": None, "outputs": [], "source": [source]},
             {"cell_type": "code", "metadata": {}, "execution_count": None, "outputs": [], "source": ["print(1)"]}]
    return json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5})


def make_class(folder: Path) -> dict[str, Path]:
    files = {
        "alice": (folder / "alice" / "rlhf.py", REFERENCE.read_text()),
        "bob": (folder / "bob" / "rlhf.py", STARTER.read_text()),
        "dora": (folder / "dora" / "rlhf.py", partly_done("shaped_rewards")),
        "carl": (folder / "carl.py", REFERENCE.read_text().replace("def compute_gae(", "def compute_gae((", 1)),
        "eve": (folder / "eve" / "rlhf.py", "import os\nos._exit(3)\n"),
        "nora": (folder / "nora" / "lab12.ipynb", notebook(REFERENCE.read_text())),
        "mallory": (folder / "mallory.py", "import os, signal\nos.kill(os.getppid(), signal.SIGKILL)\n"),
        "empty": (folder / "empty" / "README.txt", "I forgot to upload my code\n"),
    }
    for path, text in files.values():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return {name: path for name, (path, _) in files.items()}


def leave_out(paths: dict[str, Path], *names: str) -> None:
    """Take these students out of the class: their file, and their folder (an empty folder is a student too)."""
    for name in names:
        paths[name].unlink()
        if paths[name].parent.name == name:
            paths[name].parent.rmdir()


def grade_all(*args: str, **popen) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "autograder", "grade-all", *args], cwd=ROOT, capture_output=True,
                          text=True, timeout=900, **popen)


def gradebook(out: Path) -> dict[str, dict]:
    with open(out / "gradebook.csv", newline="") as f:
        return {row["student"]: row for row in csv.DictReader(f)}


def stamps(out: Path) -> dict[str, tuple]:
    """Each student's record: its modification time and graded_at (changed by any regrade)."""
    return {p.parent.name: (p.stat().st_mtime_ns, json.loads(p.read_text())["graded_at"])
            for p in out.glob("*/grade.json")}


@pytest.fixture(scope="module")
def batch(tmp_path_factory):
    root = tmp_path_factory.mktemp("class")
    paths = make_class(root / "submissions")
    (root / "submissions" / "copycat").mkdir()
    (root / "submissions" / "copycat" / "rlhf.py").symlink_to(REFERENCE)
    out = root / "grades"
    run = grade_all(str(root / "submissions"), "--out", str(out), "--only", ",".join(ONLY), "--workers", "2")
    failed = gradebook(out)["mallory"]["status"] == "failed to grade"
    assert run.returncode == (1 if failed else 0), run.stderr  # 1: a submission failed to grade
    return paths, out, run


def test_gradebook_matches_single_grade_runs(batch):
    from autograder.batch.gradebook import STATUS
    from autograder.judge.grade import grade
    paths, out, _ = batch
    rows = gradebook(out)
    assert set(rows) == {*paths, "copycat"}
    for student in CHECKED:
        single = grade(paths[student], only=set(ONLY))
        row = rows[student]
        assert row["status"] == STATUS[single.status], (student, row)
        for part in ONLY:
            tests = [t for t in single.tests if t.tags[0] == part]
            assert row[part] == (f"{sum(t.score for t in tests):g}" if tests else ""), (student, part, row)
        assert float(row["total"]) == single.score and float(row["max_total"]) == single.max_score
        diagnoses = [d for d in dict.fromkeys((t.tags[0], t.diagnosis) for t in single.tests if t.diagnosis)]
        assert row["mistakes"] == " | ".join(f"{p}: {d}" for p, d in diagnoses)
        batch_json = json.loads((out / student / "results.json").read_text())
        assert [(t["name"], t["score"]) for t in batch_json["tests"]] == [
            (f"{t.id}: {t.title}", round(t.score, 4)) for t in single.tests]
        assert (out / student / "report.md").is_file() and (out / student / "report.html").is_file()
    assert float(rows["alice"]["total"]) == float(rows["alice"]["max_total"]) > 0
    assert rows["bob"]["total"] == rows["carl"]["total"] == rows["eve"]["total"] == "0"
    assert rows["nora"]["total"] == rows["alice"]["total"]
    statuses = {s: rows[s]["status"] for s in ("alice", "bob", "carl", "dora", "eve", "nora")}
    assert statuses == {"alice": "graded", "bob": "not implemented", "carl": "not importable", "dora": "graded",
                        "eve": "not importable", "nora": "graded"}
    assert "SyntaxError: line " in rows["carl"]["detail"]  # the line, in the student's own file


def test_failures_cost_only_their_own_row(batch):
    _, out, run = batch
    rows = gradebook(out)
    assert rows["empty"]["status"] == "empty or missing" and "README.txt" in rows["empty"]["detail"]
    assert rows["copycat"]["status"] == "empty or missing" and "symbolic link" in rows["copycat"]["detail"]
    assert rows["copycat"]["total"] == "0" and not (out / "copycat" / "report.html").exists()
    # mallory kills its judge: a "failed to grade" row (or a plain 0 if the sandbox stops the signal)
    assert rows["mallory"]["status"] in ("failed to grade", "graded", "not importable")
    if rows["mallory"]["status"] == "failed to grade":
        assert "grading process" in rows["mallory"]["detail"]
    else:
        assert rows["mallory"]["total"] == "0"
    html = (out / "class_report.html").read_text()
    assert "empty" in html and "README.txt" in html and "gae.known_values" in html
    assert 'href="alice/report.html"' in html and "symbolic link" in html
    assert "9 students" in run.stdout


def test_rerun_with_nothing_changed_is_quick_and_imports_no_torch(batch):
    """Quick: under 5 s of CPU, the process's own and its children's (its wall time is the machine's load: CI's
    other stream ran it to 6.3 s once while it cost ~1.5 s)."""
    paths, out, _ = batch
    before = stamps(out)
    probe = ("import resource, sys; from autograder.__main__ import main; "
             f"rc = main(['grade-all', {str(paths['alice'].parent.parent)!r}, '--out', {str(out)!r}, "
             f"'--only', {','.join(ONLY)!r}]); "
             "cpu = sum(u.ru_utime + u.ru_stime for u in map(resource.getrusage, "
             "(resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN))); "
             "print(rc, 'torch' in sys.modules, 'autograder.batch.pool' in sys.modules, cpu)")
    run = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, timeout=60)
    rc, torch_loaded, pool_loaded, seconds = run.stdout.split()[-4:]
    assert (rc in ("0", "1"), torch_loaded, pool_loaded) == (True, "False", "False"), run.stdout + run.stderr
    assert float(seconds) < 5
    assert "9 up to date, 0 to grade" in run.stderr
    assert stamps(out) == before


def test_changed_submission_alone_is_regraded(batch, tmp_path):
    paths, out, _ = batch
    before = stamps(out)
    paths["bob"].write_text(paths["bob"].read_text() + "\n# one more line\n")
    run = grade_all(str(paths["alice"].parent.parent), "--out", str(out), "--only", ",".join(ONLY))
    assert run.returncode in (0, 1), run.stderr  # 1 when mallory failed to grade
    after = stamps(out)
    assert [s for s in after if after[s] != before[s]] == ["bob"]
    assert gradebook(out)["bob"]["status"] == "not implemented"  # the starter, one comment longer


def test_force_regrades_everything(tmp_path):
    paths = make_class(tmp_path / "submissions")
    leave_out(paths, "alice", "bob", "dora", "eve", "nora", "mallory", "empty")
    out = tmp_path / "grades"
    args = (str(tmp_path / "submissions"), "--out", str(out), "--only", "gae", "--workers", "1")
    assert grade_all(*args).returncode == 0
    first = stamps(out)
    time.sleep(1.1)  # graded_at has one-second resolution
    run = grade_all(*args, "--force")
    assert run.returncode == 0 and "0 up to date, 1 to grade" in run.stderr
    assert stamps(out)["carl"] != first["carl"]


def test_retry_failed_regrades_only_the_failed_rows(tmp_path):
    paths = make_class(tmp_path / "submissions")
    leave_out(paths, "alice", "bob", "dora", "nora", "mallory", "empty")
    out = tmp_path / "grades"
    args = (str(tmp_path / "submissions"), "--out", str(out), "--only", "gae", "--workers", "1")
    assert grade_all(*args).returncode == 0
    record = json.loads((out / "eve" / "grade.json").read_text())  # as a worker's death would leave it
    record.update(status="failed", reason="the grading process was killed by signal 9", score=None, parts={})
    (out / "eve" / "grade.json").write_text(json.dumps(record))
    before = stamps(out)
    assert "2 up to date, 0 to grade" in grade_all(*args).stderr  # a failure is kept: same key, same outcome
    run = grade_all(*args, "--retry-failed")
    assert run.returncode == 0 and "1 up to date, 1 to grade" in run.stderr
    after = stamps(out)
    assert after["carl"] == before["carl"] and after["eve"] != before["eve"]
    assert gradebook(out)["eve"]["status"] == "not importable"


def test_a_dead_worker_costs_only_its_job():
    import threading

    from autograder.batch.pool import LocalPool
    job = {"key": "k", "filename": "rlhf.py", "only": ["gae"]}
    jobs = [{**job, "student": "victim", "data": b"import time\ntime.sleep(5)\n"},  # still busy when killed
            {**job, "student": "next", "data": b"def compute_gae(:\n"}]
    with LocalPool(workers=1, job_seconds=600) as pool:
        killer = threading.Timer(1.0, lambda: os.kill(pool._workers[0].process.pid, signal.SIGKILL))
        killer.start()
        outcomes = {o["student"]: o for o in pool.run(jobs)}
        killer.join()
    assert outcomes["victim"]["status"] == "failed" and "killed by signal 9" in outcomes["victim"]["reason"]
    assert outcomes["next"]["status"] == "not_importable" and outcomes["next"]["score"] == 0


def test_killed_batch_is_completed_by_the_rerun(tmp_path):
    paths = make_class(tmp_path / "submissions")
    leave_out(paths, "mallory", "empty", "nora")
    out = tmp_path / "grades"
    args = (str(tmp_path / "submissions"), "--out", str(out), "--only", ",".join(ONLY), "--workers", "1")
    proc = subprocess.Popen([sys.executable, "-m", "autograder", "grade-all", *args], cwd=ROOT,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        deadline = time.monotonic() + 300
        while not list(out.glob("*/grade.json")) and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.05)
    finally:
        os.killpg(proc.pid, signal.SIGKILL)  # the coordinator and its workers, at once
        proc.wait()
    finished = stamps(out)
    assert 1 <= len(finished) < 5, finished
    rows = gradebook(out)  # rewritten after each record: it may lag the last record by one
    assert len(rows) == 5 and {s for s, r in rows.items() if r["status"] != "pending"} <= set(finished)
    rerun = grade_all(*args)
    assert rerun.returncode == 0, rerun.stderr
    assert f"{len(finished)} up to date, {5 - len(finished)} to grade" in rerun.stderr
    after = stamps(out)
    assert set(after) == {"alice", "bob", "carl", "dora", "eve"}
    assert {s: after[s] for s in finished} == finished  # finished students were not regraded
    assert not {r["status"] for r in gradebook(out).values()} & {"pending", "failed to grade"}
    dead = [p for p in Path(tempfile.gettempdir()).glob("autograder-batch-*-*")
            if not Path(f"/proc/{p.name.split('-')[2]}").exists()]
    assert not dead  # the killed workers' job folders were removed by the rerun


def test_dask_cluster_gives_the_same_gradebook(batch, tmp_path):
    distributed = pytest.importorskip("distributed")
    from autograder.batch.run import grade_all as grade_all_in_process
    paths, out, _ = batch
    classroom = tmp_path / "submissions"
    for name in ("alice", "dora", "eve", "empty"):
        target = classroom / paths[name].relative_to(paths["alice"].parent.parent)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(paths[name].read_bytes())
    import dask
    cluster_args = dict(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None)
    with dask.config.set({"distributed.worker.daemon": False}), distributed.LocalCluster(**cluster_args) as cluster:
        summary = grade_all_in_process(classroom, tmp_path / "grades", only=ONLY, dask=cluster.scheduler_address)
    assert (summary.graded, summary.failed, summary.other_grader) == (3, 0, 0)
    local, remote = gradebook(out), gradebook(tmp_path / "grades")
    for student in ("alice", "dora", "eve", "empty"):
        keep = lambda row: {k: v for k, v in row.items() if k != "seconds"}  # noqa: E731
        assert keep(remote[student]) == keep(local[student])


def test_ctrl_c_stops_the_batch_with_one_line(tmp_path):
    (tmp_path / "submissions" / "slow").mkdir(parents=True)
    (tmp_path / "submissions" / "slow" / "rlhf.py").write_text("import time\ntime.sleep(120)\n")
    args = (str(tmp_path / "submissions"), "--out", str(tmp_path / "grades"), "--only", "gae", "--workers", "1")
    proc = subprocess.Popen([sys.executable, "-m", "autograder", "grade-all", *args], cwd=ROOT, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))  # as test_cli's
    time.sleep(15)  # the worker is grading (torch imported, the sandboxed child sleeping)
    os.killpg(proc.pid, signal.SIGINT)  # what Ctrl-C in a terminal does: the whole foreground group
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err
    lines = [line for line in err.splitlines() if line.strip()]
    assert lines[-1] == ("interrupted: grade-all stopped; every finished grade is saved: run the same command to "
                         "continue") and "Traceback" not in err, err
    ps = subprocess.run(["ps", "-o", "stat=,pid=,cmd=", "-s", str(proc.pid)], capture_output=True, text=True)
    alive = [line for line in ps.stdout.splitlines() if not line.startswith("Z")]  # a zombie has exited
    assert not alive, alive  # the workers and their sandboxed children are gone
    assert {r["status"] for r in gradebook(tmp_path / "grades").values()} == {"pending"}
