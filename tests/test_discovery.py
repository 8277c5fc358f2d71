"""The file rule (autograder/judge/discovery.py): which file of a folder is graded, the same for `grade`,
`grade-all`, Gradescope's run_autograder and the self-check; decided by parsing, never by importing,
within bounds; and a one-sentence refusal instead of a guess."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import pytest

from autograder.batch.discover import discover
from autograder.judge.discovery import (
    MAX_FILE_BYTES,
    MAX_INSPECTED,
    AmbiguousSubmission,
    Contract,
    Listing,
    SubmissionNotFound,
    choose,
    find_submission,
    top_level_names,
    unwritten,
)
from autograder.lab import config
from autograder.lab.paths import ASSIGNMENT, REFERENCE, STARTER

CONTRACT = Contract.of(config.load())
SOLVED = REFERENCE.read_text()


def write(folder: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text)
    return folder


def notebook(*cells: str) -> str:
    return json.dumps({"cells": [{"cell_type": "code", "source": c, "metadata": {}, "outputs": []} for c in cells],
                       "metadata": {}, "nbformat": 4, "nbformat_minor": 5})


# (files in the folder, the one graded, or None with a piece of the refusal)
LAYOUTS = {
    "rlhf.py wins": ({"rlhf.py": "x = 1\n", "solution.py": SOLVED}, "rlhf.py", ""),
    "then rlhf.ipynb": ({"rlhf.ipynb": notebook("x = 1"), "solution.py": SOLVED}, "rlhf.ipynb", ""),
    "rlhf.py, however deep, before rlhf.ipynb": ({"rlhf.ipynb": notebook("x = 1"), "lab12/rlhf.py": SOLVED},
                                                 "lab12/rlhf.py", ""),
    "the one defining file, beside the world": (
        {"solution.py": SOLVED, "lab_helpers.py": (ASSIGNMENT / "lab_helpers.py").read_text(),
         "tinylm.py": (ASSIGNMENT / "tinylm.py").read_text()}, "solution.py", ""),
    "a notebook defining them (magics and all)": (
        {"lab12.ipynb": notebook("%matplotlib inline\n!pip list", "def compute_gae(r, v, m):\n    return r"),
         "notes.py": "print('scratch')\n"}, "lab12.ipynb", ""),
    "a syntax error counts by its def lines": ({"broken.py": "def compute_gae(:\n    pass\n", "README.md": "hi"},
                                               "broken.py", ""),
    "nested, the shallowest rlhf.py": ({"lab12/rlhf.py": SOLVED, "lab12/old/rlhf.py": "x = 1\n"}, "lab12/rlhf.py",
                                       ""),
    "two files, neither defines a function": ({"a_old.py": "x = 1\n", "z_final.py": "y = 2\n"}, None,
                                              "no file that defines a contract function (it holds: a_old.py, "
                                              "z_final.py): it needs rlhf.py, or one .py or .ipynb file defining "
                                              "bradley_terry_loss, ranking_loss, compute_gae"),
    "two files defining them": ({"a_old.py": STARTER.read_text(), "z_final.py": SOLVED}, None,
                                "holds no rlhf.py, and 2 files define contract functions (a_old.py: 7 of 7, "
                                "z_final.py: 7 of 7): rename the one to grade to rlhf.py"),
    "two rlhf.py at the same depth": ({"a/rlhf.py": SOLVED, "b/rlhf.py": SOLVED}, None,
                                      "2 files named rlhf.py at the same depth (a/rlhf.py, b/rlhf.py)"),
    "only clutter": ({".ipynb_checkpoints/rlhf-checkpoint.ipynb": notebook("def compute_gae(): pass"),
                      "__MACOSX/._rlhf.py": "x", "notes.txt": "todo"}, None, "it holds: notes.txt"),
}


@pytest.mark.parametrize("files, graded, refusal", LAYOUTS.values(), ids=LAYOUTS.keys())
def test_grade_and_grade_all_choose_the_same_file(tmp_path, files, graded, refusal):
    folder = write(tmp_path / "class" / "ada", files)
    (entry,) = discover(tmp_path / "class", contract=CONTRACT)
    if graded is None:
        with pytest.raises(SubmissionNotFound) as refused:
            find_submission(folder, CONTRACT)
        assert refusal in str(refused.value) and str(refused.value).startswith(str(folder))
        assert entry.member == "" and refusal in entry.problem and entry.problem.startswith("the submission")
        assert entry.ambiguous == isinstance(refused.value, AmbiguousSubmission)
        return
    found = find_submission(folder, CONTRACT)
    assert found.name == str(folder / graded)
    assert entry.member == f"ada/{graded}" and not entry.problem
    with zipfile.ZipFile(tmp_path / "class.zip", "w") as z:  # the same folder zipped: the same choice
        for name, text in files.items():
            z.writestr(f"class/ada/{name}", text)
        z.writestr("class/bob/rlhf.py", "x = 1\n")
    zipped = {s.student: s for s in discover(tmp_path / "class.zip", contract=CONTRACT)}
    assert zipped["ada"].member == f"class/ada/{graded}"


def test_deciding_never_imports_the_files(tmp_path):
    marker = tmp_path / "imported"
    trap = f"open({str(marker)!r}, 'w').close()\nimport os\nos._exit(3)\n"
    folder = write(tmp_path / "up", {"solution.py": trap + SOLVED, "helper.py": trap})
    assert find_submission(folder, CONTRACT).name.endswith("solution.py")
    assert not marker.exists()


def test_what_counts_as_defining(tmp_path):
    source = ("import torch\nfrom rlhf import kl_estimate\ndef compute_gae(r):\n    def ranking_loss(): pass\n"
              "shaped_rewards = None\nppo_value_loss: object = None\nclass ppo_policy_loss: pass\n"
              "if True:\n    def bradley_terry_loss(): pass\n")
    assert top_level_names(source) & set(CONTRACT.functions) == {"compute_gae", "shaped_rewards", "ppo_value_loss"}
    deep = "x = " + "(" * 5000 + ")" * 5000 + "\ndef compute_gae(): pass\n"  # too deep for the parser
    assert "compute_gae" in top_level_names(deep)


def test_inspection_is_bounded(tmp_path):
    read: list[str] = []

    def reader(name: str) -> bytes:
        read.append(name)
        return SOLVED.encode()
    huge = Listing({"big.py": MAX_FILE_BYTES + 1}, reader)
    with pytest.raises(SubmissionNotFound, match=r"big.py \(too large to inspect\)"):
        choose(huge, CONTRACT)
    assert read == []  # a file over the bound is never read
    many = Listing({f"f{i:03d}.py": 10 for i in range(MAX_INSPECTED + 5)}, lambda name: b"x = 1\n")
    with pytest.raises(SubmissionNotFound, match="5 more .py/.ipynb files were not inspected"):
        choose(many, CONTRACT)


def test_links_are_refused_not_followed(tmp_path):
    folder = write(tmp_path / "up", {"solution.py": SOLVED})
    (folder / "rlhf.py").symlink_to(REFERENCE)
    with pytest.raises(SubmissionNotFound, match="rlhf.py is a symbolic link to"):
        find_submission(folder, CONTRACT)


def test_the_self_check_refuses_with_the_same_sentence(tmp_path):
    from autograder.judge.grade import GraderError, grade
    folder = write(tmp_path / "up", {"a_old.py": SOLVED, "z_final.py": SOLVED})
    with pytest.raises(GraderError, match="rename the one to grade to rlhf.py"):
        grade(folder, mode="self_check")


def test_unwritten_is_the_blank_starters_shape_read_without_running_it(tmp_path):
    """Every contract function defined once, each only raising NotImplementedError (docstring allowed): the
    grade plans one lane for it (autograder/judge/grade.py); anything else, or a file that does not parse, is not."""
    functions = CONTRACT.functions
    assert unwritten(STARTER, functions)
    assert not unwritten(REFERENCE, functions)
    starter = STARTER.read_text()
    cases = {
        "one written": starter.replace(f'raise NotImplementedError("{functions[0]} is not implemented yet")',
                                       "return 0", 1),
        "one missing": starter.replace(f"def {functions[0]}(", "def renamed(", 1),
        "defined twice": starter + f"\n\ndef {functions[0]}(*args):\n    raise NotImplementedError\n",
        "another exception": starter.replace("raise NotImplementedError(", "raise ValueError(", 1),
        "no parse": starter + "\ndef (:\n",
    }
    for name, source in cases.items():
        path = tmp_path / f"{name.replace(' ', '_')}.py"
        path.write_text(source)
        assert not unwritten(path, functions), name
    bare = tmp_path / "bare.py"
    bare.write_text("".join(f"def {f}(*args):\n    \"\"\"doc\"\"\"\n    raise NotImplementedError\n\n"
                            for f in functions))
    assert unwritten(bare, functions)
