"""The pieces of grade-all, fast: discovery, keys, atomic records, gradebook, class report, pool deadline."""

from __future__ import annotations

import csv
import io
import json
import zipfile

from autograder.batch import store
from autograder.batch.class_report import summarize, write_class_report
from autograder.batch.discover import discover
from autograder.batch.fingerprint import GRADE_NEUTRAL, grader_files, job_key
from autograder.batch.gradebook import columns, write_gradebook
from autograder.batch.jobs import failed
from autograder.batch.pool import LocalPool
from autograder.lab import config
from autograder.lab.paths import GRADING_YAML, REFERENCE

PARTS = list(config.load().parts)

GRADESCOPE_METADATA = """\
submission_101:
  :submitters:
  - :name: Ada Lovelace
    :sid: '1'
    :email: ada@uni.edu
  :created_at: 2026-11-20 10:00:00.000000000 -08:00
  :score: !ruby/object:BigDecimal 18:0.0
submission_102:
  :submitters:
  - :name: Bob Babbage
    :sid: '2'
    :email: bob@uni.edu
  - :name: Carla Pair
    :sid: '3'
    :email: carla@uni.edu
submission_103:
  :submitters:
  - :name: Dan Empty
    :sid: '4'
"""


NOTEBOOK = json.dumps({"cells": [{"cell_type": "code", "source": ["%matplotlib inline\n", "def compute_gae(r):\n",
                                                                  "    return r\n"]}]})


def test_folder_layout(tmp_path):
    (tmp_path / "ada").mkdir()
    (tmp_path / "ada" / "rlhf.py").write_text("x = 1\n")
    (tmp_path / "ada" / "tinylm.py").write_text("# a copy of the world\n")
    (tmp_path / "bo b").mkdir()
    (tmp_path / "bo b" / "lab12.ipynb").write_text(NOTEBOOK)  # not rlhf.ipynb, but it defines compute_gae
    (tmp_path / "bo b" / ".ipynb_checkpoints").mkdir()
    (tmp_path / "bo b" / ".ipynb_checkpoints" / "rlhf.py").write_text("stale\n")
    (tmp_path / "carl.py").write_text("y = 2\n")
    (tmp_path / "notes.txt").write_text("not a submission\n")
    (tmp_path / "dan").mkdir()
    (tmp_path / "dan" / "README.md").write_text("forgot the code\n")
    subs = {s.student: s for s in discover(tmp_path)}
    assert set(subs) == {"ada", "bo_b", "carl", "dan"}
    assert subs["ada"].member == "ada/rlhf.py" and subs["ada"].data() == b"x = 1\n"
    assert subs["bo_b"].filename == "lab12.ipynb"
    assert subs["carl"].filename == "carl.py" and subs["carl"].data() == b"y = 2\n"
    assert subs["dan"].member == "" and "README.md" in subs["dan"].problem


def test_gradescope_export_zip(tmp_path):
    export = tmp_path / "export.zip"
    with zipfile.ZipFile(export, "w") as z:
        root = "assignment_777_export/"
        z.writestr(root + "submission_metadata.yml", GRADESCOPE_METADATA)
        z.writestr(root + "submission_101/rlhf.py", "ada = 1\n")
        z.writestr(root + "submission_102/work/rlhf.ipynb", "{}")
        z.writestr(root + "submission_103/answers.txt", "no code\n")
        z.writestr(root + "submission_104/rlhf.py", "not in the metadata\n")
        z.writestr("../evil/rlhf.py", "outside the tree\n")
    subs = {s.student: s for s in discover(export)}
    assert set(subs) == {"ada@uni.edu", "bob@uni.edu", "Dan_Empty"}
    assert subs["ada@uni.edu"].name == "Ada Lovelace" and subs["ada@uni.edu"].data() == b"ada = 1\n"
    assert subs["bob@uni.edu"].name == "Bob Babbage; Carla Pair"
    assert subs["bob@uni.edu"].email == "bob@uni.edu; carla@uni.edu"
    assert subs["bob@uni.edu"].filename == "rlhf.ipynb"
    assert subs["Dan_Empty"].problem and not subs["Dan_Empty"].member


def test_unzipped_gradescope_export_and_plain_zip(tmp_path):
    root = tmp_path / "export"
    (root / "submission_101").mkdir(parents=True)
    (root / "submission_metadata.yml").write_text(GRADESCOPE_METADATA)
    (root / "submission_101" / "rlhf.py").write_text("ada = 1\n")
    assert [s.student for s in discover(root)] == ["Dan_Empty", "ada@uni.edu", "bob@uni.edu"]
    plain = tmp_path / "class.zip"
    with zipfile.ZipFile(plain, "w") as z:  # one wrapper folder, then one entry per student
        z.writestr("class/eve/rlhf.py", "eve = 1\n")
        z.writestr("class/fay.py", "fay = 1\n")
        z.writestr("__MACOSX/class/._fay.py", "resource fork\n")
    subs = {s.student: s for s in discover(plain)}
    assert set(subs) == {"eve", "fay"} and subs["fay"].data() == b"fay = 1\n"


def test_job_key_and_grader_files():
    key = job_key(b"abc", "rlhf.py", ["gae"], "v1")
    assert key == job_key(b"abc", "rlhf.py", ["gae"], "v1")
    assert len({key, job_key(b"abd", "rlhf.py", ["gae"], "v1"), job_key(b"abc", "rlhf.py", None, "v1"),
                job_key(b"abc", "rlhf.ipynb", ["gae"], "v1"), job_key(b"abc", "rlhf.py", ["gae"], "v2")}) == 5
    files = grader_files()
    names = [f.as_posix() for f in files]
    assert REFERENCE in files and GRADING_YAML in files
    assert any(n.endswith("autograder/judge/grade.py") for n in names)
    assert not any(f"autograder/{neutral}" in n for n in names for neutral in GRADE_NEUTRAL)


def test_atomic_write_leaves_no_temporary_file(tmp_path):
    store.atomic_write(tmp_path / "a" / "f.txt", "one")
    store.atomic_write(tmp_path / "a" / "f.txt", b"two")
    assert (tmp_path / "a" / "f.txt").read_text() == "two"
    assert [p.name for p in (tmp_path / "a").iterdir()] == ["f.txt"]


def _record(student: str, gae: float, kl: float, diagnosis: str = "", seconds: float = 3.0) -> dict:
    tests = [{"id": "gae.known_values", "part": "gae", "passed": gae == 4, "score": gae, "max_score": 4,
              "seconds": 1.0, "diagnosis": diagnosis, "message": ""},
             {"id": "kl.shaped_known_values", "part": "kl", "passed": kl == 3, "score": kl, "max_score": 3,
              "seconds": 1.0, "diagnosis": "", "message": ""}]
    return {"student": student, "key": "k", "status": "graded", "reason": "", "score": gae + kl, "max_score": 7,
            "parts": {"gae": {"score": gae, "max": 4}, "kl": {"score": kl, "max": 3}}, "e2e": None,
            "tests": tests, "seconds": seconds}


def test_store_record_is_current_only_with_its_key_and_reports(tmp_path):
    outcome = {**_record("ada", 4, 3), "files": {"results.json": "{}", "report.md": "# ok"}}
    record = store.save(tmp_path, outcome, {"name": "Ada"})
    assert store.load(tmp_path, "ada") == record and record["name"] == "Ada" and "files" not in record
    assert store.is_current(tmp_path, record, "k") and not store.is_current(tmp_path, record, "other")
    (tmp_path / "ada" / "report.md").unlink()
    assert not store.is_current(tmp_path, record, "k")
    assert store.load(tmp_path, "nobody") is None


def test_gradebook_columns_and_rows(tmp_path):
    records = [_record("zed", 4, 0, diagnosis="forward recursion: run the loop backwards"),
               {**failed({"student": "amy", "key": "k"}, "the grading process was killed by signal 9"),
                "seconds": 2.0}]
    write_gradebook(tmp_path / "gradebook.csv", records, PARTS)
    rows = list(csv.DictReader(io.StringIO((tmp_path / "gradebook.csv").read_text())))
    assert list(rows[0]) == columns(PARTS)
    assert columns(PARTS)[:4] == ["student", "name", "email", "sid"] and columns(PARTS)[4:4 + len(PARTS)] == PARTS
    amy, zed = rows
    assert amy["student"] == "amy" and amy["status"] == "failed to grade" and amy["total"] == ""
    assert "signal 9" in amy["detail"]
    assert zed["gae"] == "4" and zed["kl"] == "0" and zed["rm_loss"] == "" and zed["total"] == "4"
    assert zed["max_total"] == "7" and zed["status"] == "graded"
    assert zed["mistakes"] == "gae: forward recursion: run the loop backwards"


def test_class_report(tmp_path):
    records = [_record(f"s{i}", 4 if i % 2 else 0, 3, diagnosis="" if i % 2 else "forward recursion",
                       seconds=float(i)) for i in range(6)]
    for i, r in enumerate(records):
        r["reports"] = ["report.html"]
        r["e2e"] = {"score": 5.0 * (i % 2), "max": 5.0}
        r["tests"].append({"id": "e2e.kl_penalty", "part": "e2e", "passed": i % 2 == 1, "score": 5.0 * (i % 2),
                           "max_score": 5, "seconds": 9.0, "diagnosis": "", "message": "",
                           "metrics": {"gold_gain": 0.1 * i, "malformed": 0.0}})
    records.append({**failed({"student": "mallory", "key": "k"}, "the grading process was killed"), "seconds": 9})
    records.append({**failed({"student": "nobody", "key": "k"}, "rlhf.py is empty"), "status": "empty",
                    "score": 0.0, "max_score": 12})
    e2e = {"kl_penalty": {"min_gold_gain": 0.34, "max_malformed": 0.1}}
    s = summarize(records, PARTS, e2e)
    assert s["graded"] == 6 and s["failed"] == [{"student": "mallory", "reason": "the grading process was killed"}]
    assert s["statuses"] == {"empty or missing": 1, "failed to grade": 1, "graded": 6}
    rates = {t["id"]: t["rate"] for t in s["tests"]}
    assert rates == {"gae.known_values": 0.5, "kl.shaped_known_values": 1.0, "e2e.kl_penalty": 0.5}
    assert s["mistakes"] == {"gae": [{"text": "forward recursion", "students": 3, "who": ["s0", "s2", "s4"]}]}
    assert [r["student"] for r in s["slowest"][:2]] == ["mallory", "s5"]
    assert s["totals"].count(0.0 + 3) == 3 and len(s["totals"]) == 7  # the empty submission's 0 counts
    gold = next(m for m in s["measurements"] if m["metric"] == "gold_gain")
    assert (gold["threshold"], gold["side"], gold["passing"]) == (0.34, "min", 2)  # 0.4 and 0.5
    roster = {r["student"]: r for r in s["roster"]}
    assert roster["s1"]["report"] == "s1/report.html" and roster["mallory"]["report"] == ""
    assert roster["s0"]["mistakes"] == ["gae: forward recursion"] and roster["nobody"]["status"] == "empty or missing"
    path = tmp_path / "class_report.html"
    write_class_report(path, records, PARTS, "Lab 12", e2e)
    html = path.read_text()
    for text in ("forward recursion", "mallory", "the grading process was killed", "gae.known_values",
                 "data:image/png;base64,", 'href="s1/report.html"', 'href="#student-s0"', 'id="student-s0"',
                 'id="search"', "aria-sort", "e2e.kl_penalty: gold_gain", "≥ 0.34", "rlhf.py is empty"):
        assert text in html, text
    assert "<script src" not in html and "http://" not in html and "https://" not in html  # nothing fetched
    stamp = path.stat().st_mtime_ns
    write_class_report(path, records, PARTS, "Lab 12", e2e)  # same records: not rendered again
    assert path.stat().st_mtime_ns == stamp


def test_pool_deadline_costs_only_that_job():
    job = {"student": "slow", "key": "k", "filename": "rlhf.py", "data": REFERENCE.read_bytes(), "only": ["gae"]}
    with LocalPool(workers=1, job_seconds=0.2) as pool:
        outcomes = list(pool.run([job, {**job, "student": "slow2"}]))
    assert [o["student"] for o in outcomes] == ["slow", "slow2"]
    for o in outcomes:
        assert o["status"] == "failed" and "took longer than 0.2 s" in o["reason"] and o["seconds"] >= 0.2
    json.dumps(outcomes)  # plain data


def test_output_folder_inside_the_submissions_is_not_a_student(tmp_path):
    (tmp_path / "ada").mkdir()
    (tmp_path / "ada" / "rlhf.py").write_text("x = 1\n")
    (tmp_path / "grades" / "ada").mkdir(parents=True)
    (tmp_path / "grades" / "ada" / "results.json").write_text("{}")
    assert [s.student for s in discover(tmp_path, skip=tmp_path / "grades")] == ["ada"]
