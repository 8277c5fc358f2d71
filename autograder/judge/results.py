"""results.json in Gradescope's autograder format, built from the grade's plain results (autograder/judge/outcome.py).

Top level: score, execution_time, output (the feedback policy's sentence, if any, then the score table, from
visible outcomes only), visibility, stdout_visibility (hidden: the grader's own log is for staff), tests,
`leaderboard` when grading.yaml asks for it, and `extra_data.autograder_feedback` ("detailed" or "limited") under
grading.yaml's feedback_policy. A test's output keeps its hint in full: Gradescope shows each test alone.
Each test: name, score, max_score, status, visibility, output, tags. A test whose failing
input is released later than its outcome gets a second, 0-point entry with that input, carrying
`inputs_visibility`; what the submission printed is another 0-point entry, as visible as its least
visible input.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from autograder.judge.outcome import GradeResult, TestResult, inputs_shown, outcome_shown, summary_lines, test_text
from autograder.lab import config

MAX_OUTPUT = 8000    # characters of one test's output
MAX_BYTES = 1 << 20  # results.json stays under 1 MB


def _entry(t: TestResult, name: str, score: float, max_score: float, visibility: str, output: str) -> dict:
    return {"name": name, "score": round(score, 4), "max_score": max_score,
            "status": "passed" if t.passed else "failed", "visibility": visibility,
            "output": output[:MAX_OUTPUT], "tags": t.tags}


def test_entries(t: TestResult) -> list[dict]:
    """The Gradescope entries of one test: its outcome, and its withheld input when there is one."""
    entries = [_entry(t, f"{t.id}: {t.title}", t.score, t.max_score, t.visibility,
                      test_text(t, inputs_shown(t, t.visibility), show_outcome=outcome_shown(t, t.visibility)))]
    if t.withheld:
        entries.append(_entry(t, f"{t.id}: failing input", 0.0, 0.0, t.input_release, test_text(t)))
    return entries


def leaderboard(result: GradeResult) -> list[dict]:
    """Gradescope leaderboard entries: the e2e measurements of grading.yaml `leaderboard_columns` this grade has."""
    metrics = {(t.id, k): v for t in result.tests if outcome_shown(t, "visible") for k, v in t.finding.metrics.items()}
    return [{"name": c.name, "value": round(metrics[c.test, c.metric], 4), "order": c.order}
            for c in config.current().leaderboard_columns if (c.test, c.metric) in metrics]




def results_json(result: GradeResult, with_leaderboard: bool = False) -> dict:
    tests = [e for t in result.tests for e in test_entries(t)]
    if result.output:
        tests.append({"name": "what your code printed", "score": 0.0, "max_score": 0.0, "status": "passed",
                      "visibility": result.output_visibility, "output": result.output[-MAX_OUTPUT:], "tags": []})
    data = {
        "score": round(result.score, 4),
        "execution_time": round(result.execution_time, 2),
        "output": "\n".join(([result.policy_notice, ""] if result.policy_notice else [])
                            + summary_lines(result, student=True)),
        "visibility": "visible",
        "stdout_visibility": "hidden",
        "tests": tests,
    }
    if with_leaderboard:
        data["leaderboard"] = leaderboard(result)
    if result.feedback:  # read back by the next submission's feedback policy (autograder/judge/feedback_policy.py)
        data["extra_data"] = {"autograder_feedback": result.feedback}
    return data


def write_results(result: GradeResult, path: Path, with_leaderboard: bool = False) -> None:
    data = results_json(result, with_leaderboard)
    text = json.dumps(data, indent=1)
    while len(text.encode()) > MAX_BYTES:  # cut the longest outputs until it fits
        longest = max(data["tests"], key=lambda t: len(t["output"]))
        longest["output"] = longest["output"][: len(longest["output"]) // 2] + "\n[cut]"
        text = json.dumps(data, indent=1)
    write_atomically(path, text)


def write_atomically(path: Path, text: str) -> None:
    """Replace `path` with `text` at once (a temporary file, then os.replace): a reader, or a grade killed
    while writing, finds the old file or the new one, never half of one."""
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    temporary.write_text(text, encoding="utf-8", errors="replace")
    os.replace(temporary, path)
