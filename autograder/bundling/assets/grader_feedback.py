"""`nbgrader generate_feedback` with the grader's report: each student's report.html (written by
`python -m autograder grade-all submitted --out grades`, run in the course folder) becomes the last
cell of their feedback page, plots and hints included.

nbgrader_config.py, next to this file, runs it after nbgrader's GetGrades:
    c.GenerateFeedback.preprocessors = [GetGrades, GraderReport, CSSHTMLHeaderPreprocessor]
    c.GraderReport.folder = "<course>/grades"      # grade-all's --out: <student>/report.html
The report is the students' view (what they may see now); the page never holds the grades folder's path.
A student without one gets a cell saying so, and nbgrader logs a warning (with the path: the log is
staff's). Plain nbconvert and nbformat: no grader code runs here.
"""

from __future__ import annotations

import re
from pathlib import Path

from nbconvert.preprocessors import Preprocessor
from nbformat.v4 import new_code_cell, new_markdown_cell, new_output
from traitlets import Bool, Unicode

STYLE = re.compile(r"<style>.*?</style>", re.S)
BODY = re.compile(r'<main class="grade-report">.*</main>', re.S)


class GraderReport(Preprocessor):
    enabled = Bool(True).tag(config=True)  # nbconvert's preprocessors are off unless enabled
    folder = Unicode("grades", help="grade-all's --out folder, holding <student>/report.html").tag(config=True)

    def preprocess(self, nb, resources):
        student = resources["nbgrader"]["student"]
        path = Path(self.folder) / student / "report.html"
        nb.cells.append(new_markdown_cell("## The grader's report\n\nAll tests of the lab, as the grader ran them on "
                                          "this notebook (the test cells above are its public tests)."))
        page = path.read_text(encoding="utf-8") if path.is_file() else ""
        body = BODY.search(page)
        if body is None:
            self.log.warning("no grader report for %s at %s: run grade-all first", student, path)
            nb.cells.append(new_markdown_cell(f"*No grader report was found for this notebook ({path.name}).*"))
            return nb, resources
        style = STYLE.search(page)
        html = (style.group(0) if style else "") + body.group(0)
        # the cell names the report, never its path: the grades folder is the staff's (often an absolute path)
        cell = new_code_cell("# the grader's report on this notebook", metadata={"nbgrader": {"locked": True}})
        cell.outputs = [new_output("display_data", data={"text/html": html})]
        nb.cells.append(cell)
        return nb, resources
