"""Notebook submissions: autograder/sandbox/notebook.py keeps the definitions, and grades match the .py's."""

from __future__ import annotations

import dataclasses
import json
import re
import sys
from pathlib import Path

import pytest

from autograder.bundling.outline import read_outline
from autograder.judge.discovery import find_submission
from autograder.judge.grade import grade
from autograder.lab import config
from autograder.lab.paths import REFERENCE, ROOT, STARTER
from autograder.sandbox.notebook import definitions, notebook_to_source, strip_ipython


def write_notebook(path: Path, cells: list[tuple[str, str]]) -> Path:
    notebook = {"cells": [{"cell_type": kind, "metadata": {}, "source": source.splitlines(keepends=True),
                           **({"outputs": [], "execution_count": None} if kind == "code" else {})}
                          for kind, source in cells],
                "metadata": {}, "nbformat": 4, "nbformat_minor": 4}
    path.write_text(json.dumps(notebook))
    return path


def notebook_of(module_source: str, path: Path) -> Path:
    """A notebook as a student writes one: magics, shell lines, markdown, one cell per function, calls."""
    lab = read_outline(module_source)
    cells = [("markdown", "# My RLHF lab"), ("code", "%matplotlib inline\n!pip install torch\n" + lab.preamble)]
    for part in lab.parts:
        cells.append(("markdown", f"## {part.title}"))
        cells += [("code", fn.source) for fn in part.functions]
    cells += [("code", "%%time\nprint(compute_gae)"),
              ("code", "x = torch.zeros(2, 3)\nprint(kl_estimate(x, x))\nfor i in range(3):\n    print(i)")]
    return write_notebook(path, cells)


def test_ipython_lines_and_cell_magics_are_dropped():
    assert strip_ipython("%%time\nx = 1\n") == ""
    assert strip_ipython("%load_ext autoreload\n!ls\nx = 1") == "\n\nx = 1"


def test_only_definitions_are_kept():
    cell = ("import torch\nN = 3\nmodel = load()\n\n@decorate\ndef f(x):\n    return x\n\nf(1)\n"
            "class C:\n    pass\nprint(N)\n")
    kept = definitions(cell)
    assert "import torch" in kept and "N = 3" in kept and "@decorate\ndef f(x):" in kept and "class C:" in kept
    assert "load()" not in kept and "f(1)" not in kept and "print" not in kept


def test_a_cell_with_a_syntax_error_is_kept_as_it_is():
    assert definitions("def f(:\n    pass") == "def f(:\n    pass"


def test_future_imports_come_first(tmp_path):
    path = write_notebook(tmp_path / "n.ipynb", [("code", "import torch"),
                                                 ("code", "from __future__ import annotations\ndef f(): pass")])
    source = notebook_to_source(path)
    compile(source, "rlhf.py", "exec")  # a misplaced __future__ import would be a SyntaxError
    assert source.index("from __future__") < source.index("import torch")


def test_not_a_notebook_is_found_and_not_importable(tmp_path):
    """A file that is no notebook is the submission's failure to import (0 points), not the grader's."""
    bad = tmp_path / "rlhf.ipynb"
    bad.write_text("{not json")
    found = find_submission(bad)
    assert found.problem.startswith("rlhf.ipynb could not be imported: not a readable notebook (Expecting")
    (tmp_path / "list.ipynb").write_text('{"cells": 5}')
    assert "not a Jupyter notebook" in find_submission(tmp_path / "list.ipynb").problem


BOMBS = {  # what made `grade` exit 1 with a traceback when the judge parsed notebooks itself
    "a cell of 200,000 terms": lambda: json.dumps({"cells": [
        {"cell_type": "code", "source": "x = (" + "1+" * 200_000 + "1)"}]}),
    "JSON nested 5,000 deep": lambda: '{"cells": [], "metadata": ' + "[" * 5000 + "]" * 5000 + "}",
    "a chain of a million minus signs": lambda: json.dumps({"cells": [
        {"cell_type": "code", "source": "import torch"}, {"cell_type": "code", "source": "x = " + "-" * 10**6 + "1"}]}),
}


@pytest.mark.parametrize("bomb", list(BOMBS))
def test_a_notebook_bomb_is_not_importable_and_the_grade_completes(tmp_path, bomb):
    path = tmp_path / "rlhf.ipynb"
    path.write_text(BOMBS[bomb]())
    result = grade(path, only={"gae"}, mode="self_check")  # no RecursionError: converted in a subprocess
    assert result.status == "not_importable" and result.score == 0 and result.tests
    reason = "its JSON is nested too deeply" if "JSON" in bomb else "is nested too deeply or too large to parse"
    assert all(t.message.startswith("rlhf.ipynb could not be imported: ") and reason in t.message
               for t in result.tests), result.tests[0].message


def test_grade_exits_0_for_a_notebook_bomb(tmp_path):
    import subprocess
    path = tmp_path / "rlhf.ipynb"
    path.write_text(BOMBS["JSON nested 5,000 deep"]())
    done = subprocess.run([sys.executable, "-m", "autograder", "grade", str(path), "--out", str(tmp_path / "out"),
                           "--only", "gae", "--self-check"], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert json.loads((tmp_path / "out" / "results.json").read_text())["score"] == 0
    assert "Traceback" not in done.stderr


def test_the_bounded_conversion_gives_the_same_source(tmp_path):
    from autograder.sandbox.notebook import bounded_source
    path = notebook_of(REFERENCE.read_text(), tmp_path / "rlhf.ipynb")
    assert bounded_source(path) == notebook_to_source(path)


def test_a_folder_holding_only_a_notebook_is_found(tmp_path):
    notebook = notebook_of(REFERENCE.read_text(), tmp_path / "lab.ipynb")
    found = find_submission(tmp_path)
    assert found.path.name == "rlhf.py" and "def compute_gae" in found.path.read_text()
    assert found.name == str(notebook), "reports name the notebook, not the temporary rlhf.py"


def scores(result) -> dict[str, float]:
    return {t.id: t.score for t in result.tests}


@pytest.mark.slow
@pytest.mark.parametrize("module", [REFERENCE, STARTER], ids=["reference", "starter"])
def test_a_notebook_grades_exactly_like_the_py(module, tmp_path):
    """Same functions, same scores, test by test (unit and property tests; e2e runs the same functions)."""
    only = {"rm_loss", "gae", "ppo_clip", "kl"}
    cfg = config.load()
    cfg = dataclasses.replace(cfg, hypothesis={**cfg.hypothesis, "max_examples": 5})  # same inputs for both, fewer
    from_py = grade(module, only=only, cfg=cfg)
    from_notebook = grade(notebook_of(module.read_text(), tmp_path / "rlhf.ipynb"), only=only, cfg=cfg)
    assert from_py.tests, "no test ran"
    assert scores(from_notebook) == scores(from_py)
    def messages(result):  # line numbers refer to each file, the rest must be the same
        return [re.sub(r" at (code cell \d+, )?line \d+", "", t.message) for t in result.tests]
    assert messages(from_notebook) == messages(from_py)


@pytest.mark.slow
def test_run_experiments_trains_with_a_notebook(tmp_path):
    """The nbgrader edition has only the notebook: run_experiments.py takes its functions as the grader does."""
    import subprocess
    import sys

    from autograder.lab.paths import ASSIGNMENT
    notebook = notebook_of(REFERENCE.read_text(), tmp_path / "rlhf.ipynb")
    done = subprocess.run([sys.executable, str(ASSIGNMENT / "run_experiments.py"), "--solution", str(notebook),
                           "--iterations", "2", "--runs", "kl", "--out", str(tmp_path / "plots")],
                          cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "held-out pairwise accuracy" in done.stdout and (tmp_path / "plots" / "gold.png").is_file()
    assert "2/2" in done.stderr, "the progress bar counts the PPO iterations"


def test_imports_of_the_grading_engine_are_dropped():
    """The nbgrader edition's test cells import the engine; the sandboxed child has none."""
    kept = definitions("import torch\nfrom autograder.judge.notebook_checks import visible_test\nimport autograder\n"
                       "from autograderx import y\ndef f(): pass")
    assert "import torch" in kept and "def f()" in kept and "from autograderx import y" in kept
    assert "visible_test" not in kept and "import autograder\n" not in kept + "\n"


def test_kernel_source_skips_cells_that_do_not_parse():
    from autograder.judge.notebook_checks import kernel_source
    source = kernel_source(["def f(:\n", "def f():\n    return 1", "visible_test('gae.known_values')"])
    compile(source, "rlhf.py", "exec")
    assert "return 1" in source and "visible_test" not in source


@pytest.mark.slow
def test_a_test_cell_fails_with_the_graders_message(monkeypatch, capsys):
    """visible_test grades what the kernel ran (here: the reference's cells with a GAE that ignores lam)."""
    from autograder.judge import notebook_checks
    lab = read_outline(REFERENCE.read_text())
    cells = [lab.preamble] + [fn.source.replace("gamma * lam * next_adv", "gamma * next_adv")
                              for part in lab.parts for fn in part.functions]
    monkeypatch.setattr(notebook_checks, "kernel_cells", lambda: cells)
    with pytest.raises(AssertionError, match="gae.known_values failed: "):
        notebook_checks.visible_test("gae.known_values")
    printed = capsys.readouterr().out
    assert printed.startswith("[FAIL] gae.known_values (0/4)") and "Smallest failing input" in printed


# ---------------------------------------------------------------- errors in the notebook's terms (issue 22)
def test_every_converted_line_maps_back_to_its_cell_and_line(tmp_path):
    """The line map (the grader's data, from the bounded conversion) points each kept line at its source line."""
    from autograder.sandbox.notebook import bounded_convert, code_cells
    path = notebook_of(REFERENCE.read_text(), tmp_path / "rlhf.ipynb")
    converted = bounded_convert(path)
    cells = [strip_ipython(c).splitlines() for c in code_cells(json.loads(path.read_text()))]
    lines = converted.source.splitlines()
    assert len(converted.cells) == len(lines)
    mapped = [(i, where) for i, where in enumerate(converted.cells) if where]
    assert len(mapped) > 100
    for i, (cell, line) in mapped:
        assert lines[i] == cells[cell - 1][line - 1], (i, cell, line)
    assert all(where is None for text, where in zip(lines, converted.cells) if text.startswith("# --- notebook"))


def broken_notebook(tmp_path: Path, cell_source: str) -> tuple[Path, int]:
    """The reference as a notebook whose compute_gae cell holds `cell_source`; returns (path, that cell's number
    among the code cells)."""
    path = notebook_of(REFERENCE.read_text(), tmp_path / "rlhf.ipynb")
    notebook = json.loads(path.read_text())
    code = [c for c in notebook["cells"] if c["cell_type"] == "code"]
    number = next(i for i, c in enumerate(code, start=1) if "def compute_gae(" in "".join(c["source"]))
    code[number - 1]["source"] = cell_source.splitlines(keepends=True)
    path.write_text(json.dumps(notebook))
    return path, number


NOTEBOOK_ERRORS = {  # cell source -> what the student is told (after "rlhf.ipynb could not be imported: ")
    "syntax": ("import torch\n\ndef compute_gae(rewards, values, mask, gamma, lam)\n    return 1\n",
               "raised SyntaxError: code cell {cell}, line 3: expected ':'"),
    "indentation": ("def compute_gae(rewards, values, mask, gamma, lam):\nreturn 1\n",
                    "raised IndentationError: code cell {cell}, line 2: expected an indented block"),
    "import": ("import torch\nimport no_such_module_lab12\n",
               "raised ModuleNotFoundError: code cell {cell}, line 2: No module named 'no_such_module_lab12'"),
}


@pytest.mark.parametrize("error", list(NOTEBOOK_ERRORS))
def test_import_errors_name_the_cell_and_the_line_in_it(tmp_path, error):
    source, told = NOTEBOOK_ERRORS[error]
    path, cell = broken_notebook(tmp_path, source)
    told = told.format(cell=cell)
    result = grade(path, only={"gae"}, mode="self_check")
    assert result.status == "not_importable"
    for t in result.tests:
        assert t.message.startswith(f"rlhf.ipynb could not be imported: {told}"), t.message
        assert "rlhf.py" not in t.message, "the student has no rlhf.py"


def test_a_py_syntax_error_gives_its_line_once(tmp_path):
    path = tmp_path / "rlhf.py"
    path.write_text(REFERENCE.read_text().replace("def compute_gae(", "def compute_gae((", 1))
    line = 1 + path.read_text().splitlines().index(next(t for t in path.read_text().splitlines()
                                                         if t.startswith("def compute_gae((")))
    message = grade(path, only={"gae"}, mode="self_check").tests[0].message
    assert f"raised SyntaxError: line {line}: " in message and "(rlhf.py, line" not in message, message


def test_grade_all_jobs_and_their_reports_use_the_notebooks_terms(tmp_path):
    """grade-all grades each submission through run_job: its reports (and so the nbgrader feedback, which shows
    report.html) tell the cell and line."""
    from autograder.batch.jobs import run_job
    path, cell = broken_notebook(tmp_path, NOTEBOOK_ERRORS["syntax"][0])
    outcome = run_job({"student": "bob", "filename": "rlhf.ipynb", "data": path.read_bytes(), "only": ["gae"],
                       "key": "k", "lanes": 1})
    assert outcome["status"] == "not_importable", outcome["reason"]
    assert NOTEBOOK_ERRORS["syntax"][1].format(cell=cell) in outcome["reason"]
    for name in ("results.json", "report.md", "report.html"):
        assert f"code cell {cell}, line 3: expected" in outcome["files"][name], name
        assert not [p for p in ("autograder-notebook-", "autograder-batch-") if p in outcome["files"][name]]


def test_a_runtime_error_in_a_function_names_its_cell(tmp_path):
    source = ("import torch\n\ndef compute_gae(rewards, values, mask, gamma, lam):\n"
              "    raise ValueError('my own error')\n")
    path, cell = broken_notebook(tmp_path, source)
    result = grade(path, only={"gae"}, mode="self_check")
    failed = [t for t in result.tests if not t.passed]
    assert failed and all(t.finding.submission_text == f"code cell {cell}, line 4: my own error" for t in failed), \
        [t.finding.submission_text for t in failed]


def test_a_missing_function_is_named_with_the_notebook(tmp_path):
    """"does not define" names the file the student wrote (the notebook), never the converted module."""
    path, _ = broken_notebook(tmp_path, "import torch\n\ndef scale(x):\n    return x\n")
    result = grade(path, only={"gae"}, mode="self_check")
    messages = [t.message for t in result.tests]
    assert messages and all(m.startswith(f"{path.name} does not define compute_gae") for m in messages), messages


def test_the_grade_command_converts_a_notebook_once_and_starts_its_child_early(tmp_path):
    """`grade` finds the submission once (early.start_for, before torch): a notebook is converted once, its child's
    interpreter starts with the probe's, and the grade reports the notebook by its name."""
    import subprocess
    notebook = notebook_of(REFERENCE.read_text(), tmp_path / "rlhf.ipynb")
    script = (
        "import atexit, runpy, sys\n"
        "from autograder.sandbox import notebook, sandbox\n"
        "converted, started = [], []\n"
        "convert, start_early = notebook.bounded_convert, sandbox.start_early\n"
        "notebook.bounded_convert = lambda path: converted.append(path) or convert(path)\n"
        "sandbox.start_early = lambda *a, **k: started.append(k.get('program', 'worker.py')) or start_early(*a, **k)\n"
        "sys.argv = ['autograder', *sys.argv[1:]]\n"
        "atexit.register(lambda: print(len(converted), sorted(set(started))))\n"  # the command ends the process
        "runpy.run_module('autograder', run_name='__main__')\n")  # (the grade's own start: a no-op for each)
    out = tmp_path / "out"
    done = subprocess.run([sys.executable, "-c", script, "grade", str(notebook), "--out", str(out), "--only", "gae",
                           "--quiet"], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.splitlines()[-1] == "1 ['probe.py', 'worker.py']", done.stdout
    results = json.loads((out / "results.json").read_text())
    assert results["score"] == sum(t["max_score"] for t in results["tests"]) > 0
