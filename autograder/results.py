"""results.json in Gradescope's autograder format.

Top level: score, execution_time, output, tests; each test: name, score, max_score, status,
visibility, output, tags. The text a student sees comes from `report.test_text`, the same words
as the Markdown report.
"""

from __future__ import annotations

import json
from pathlib import Path

from autograder.grade import GradeResult
from autograder.report import summary_lines, test_text

MAX_OUTPUT = 8000    # characters of one test's output
MAX_BYTES = 1 << 20  # results.json stays under 1 MB


def results_json(result: GradeResult) -> dict:
    tests = [{
        "name": f"{t.id}: {t.title}",
        "score": round(t.score, 4),
        "max_score": t.max_score,
        "status": "passed" if t.passed else "failed",
        "visibility": t.visibility,
        "output": test_text(t)[:MAX_OUTPUT],
        "tags": t.tags,
    } for t in result.tests]
    return {
        "score": round(sum(t["score"] for t in tests), 4),
        "execution_time": round(result.execution_time, 2),
        "output": "\n".join(summary_lines(result)),
        "visibility": "visible",
        "stdout_visibility": "hidden",
        "tests": tests,
    }


def write_results(result: GradeResult, path: Path) -> None:
    data = results_json(result)
    text = json.dumps(data, indent=1)
    while len(text.encode()) > MAX_BYTES:  # cut the longest outputs until it fits
        longest = max(data["tests"], key=lambda t: len(t["output"]))
        longest["output"] = longest["output"][: len(longest["output"]) // 2] + "\n[cut]"
        text = json.dumps(data, indent=1)
    path.write_text(text)
