"""The results of a grade as plain data: what each test found, its score, the totals, and who may see what.

    finding = Finding(message="advantages differ from the reference", inputs="rewards=...", got="...")
    result = scored(spec, title, tags, finding)   # the one place points and visibility are applied
    grade = GradeResult("upload/lab.py", [result, ...], partial=False, execution_time=12.3)

Torch-free (it imports only textsafe and config): reports, results.json and the batch coordinator read it
without importing torch. Visibility follows grading.yaml: a test's outcome (the grader's message, the kind
and shape of what was compared, the hint, metrics) has `visibility`; its failing input and everything computed
from it or produced by the submission on it (expected and got values, the submission's own text and line)
has `inputs_visibility`, never earlier (`input_release`). `inputs_shown` is the one gate every channel asks.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any

from autograder.lab.config import VISIBILITIES, least_visible
from autograder.sandbox.textsafe import clean

MAX_TEXT = 4000  # characters of any one field shown to a student


@dataclass
class Finding:
    """What one test found; an empty `message` means it passed.

    Shown with the outcome: message, kind, compared, hint, details, plots, metrics (the grader's own words:
    textsafe WORDS at most). Shown with the input: inputs, expected, got, submission_text.
    """

    message: str = ""            # the grader's own sentence (never text the submission produced)
    kind: str = ""               # why: a submission failure kind ("import", "not_implemented", ...), "grader"
    inputs: str = ""             # the (shrunk) failing input, formatted
    expected: str = ""           # the expected value (computed from the input)
    got: str = ""                # the submission's answer
    compared: str = ""           # kind and shape of expected and got ("expected a float32 tensor of shape (3,), ...")
    submission_text: str = ""    # what the submission's code said: its exception's line and message, its exit code...
    hint: str = ""               # a known mistake the answer certainly matches
    details: str = ""            # further lines of the outcome (e2e metrics)
    plots: list[tuple[str, bytes]] = field(default_factory=list)  # (title, PNG)
    metrics: dict[str, float] = field(default_factory=dict)        # e2e measurements (leaderboard)
    private_inputs: bool = False  # the input is not the test's shown one (drawn afresh, or an earlier test's)
    child_saw: str = "visible"   # the latest release of any input the child had received when it answered in this
    #                              test (remote.RemoteSubmission.heard): its text may carry any of them

    @classmethod
    def failed_call(cls, message: str, kind: str, detail: str, private_inputs: bool = False) -> "Finding":
        """A submission that gave no answer: `message` is the grader's sentence, `detail` the submission's text.

        An import error's text is shown with the outcome: importing runs no test input, so it holds none (unless
        the child was restarted after calls: then `private_inputs`, and it is shown like any other).
        """
        if kind == "import" and not private_inputs:
            return cls(message=f"{message}: {clean(detail, MAX_TEXT)}" if detail else message, kind=kind)
        if kind == "not_implemented":
            message = f"{message}: it is not implemented yet"
        return cls(message=message, kind=kind, submission_text=detail, private_inputs=private_inputs)

    @property
    def input_text(self) -> bool:
        """It holds something shown only with the input."""
        return bool(self.inputs or self.expected or self.got or self.submission_text)


@dataclass
class TestResult:
    __test__ = False  # not a pytest class
    id: str
    title: str
    tags: list[str]              # first: the part (or "e2e", then the parts it trains with)
    max_score: float
    score: float
    visibility: str
    inputs_visibility: str
    finding: Finding = field(default_factory=Finding)
    seconds: float = 0.0
    private_inputs_visibility: str = "hidden"  # grading.yaml's default_inputs_visibility (see input_release)
    limited: bool = False  # the feedback policy withholds its detailed outcome from students now (limit_feedback)

    @property
    def passed(self) -> bool:
        return not self.finding.message

    @property
    def message(self) -> str:
        return self.finding.message

    @property
    def diagnosis(self) -> str:
        return self.finding.hint

    @property
    def details(self) -> str:
        return self.finding.details

    @property
    def plots(self) -> list[tuple[str, bytes]]:
        return self.finding.plots

    @property
    def input_release(self) -> str:
        """When students see its failing input and what was computed or produced on it: `inputs_visibility`; for a
        finding on an input other than the test's shown one (`private_inputs`), the stricter of that and
        grading.yaml's default_inputs_visibility; and never before the release of every input the child had
        received when it answered (`Finding.child_saw`: the child's text can carry any earlier input, not only this
        test's)."""
        release = least_visible(self.inputs_visibility, self.finding.child_saw)
        if self.finding.private_inputs:
            return least_visible(release, self.private_inputs_visibility)
        return release

    @property
    def withheld(self) -> bool:
        """Its failing input (or what goes with it; or, limited, its detailed outcome) waits for a later visibility
        than its outcome."""
        return bool(self.finding.input_text or (self.limited and not self.passed)) \
            and not inputs_shown(self, self.visibility)


def outcome_shown(t: TestResult, release: str | None) -> bool:
    """May a view released at `release` (None: staff) show t's detailed outcome: message, hint, details, plots,
    metrics? Not to students while grading.yaml's feedback_policy limits this grade (t.limited): they see the
    test's name, score and status. (Which tests a view lists at all: GradeResult.shown.)"""
    return release is None or not t.limited


def inputs_shown(t: TestResult, release: str | None) -> bool:
    """THE gate of every channel: may a view released at `release` (a visibility; None: staff, who see all) show
    t's failing input, its expected and got values and the submission's own text?

    results.json asks it for a test's entry (released at the test's `visibility`), the student reports for what
    is released now ("visible"); what fails it goes into results.json's 0-point "failing input" entry."""
    if not outcome_shown(t, release):
        return False
    return release is None or VISIBILITIES.index(t.input_release) >= VISIBILITIES.index(release)


def scored(spec: Any, title: str, tags: list[str], finding: Finding) -> TestResult:
    """A finding with the points and visibilities of its grading.yaml entry (a config.TestSpec)."""
    return TestResult(spec.id, title, tags, spec.points, 0.0 if finding.message else spec.points,
                      spec.visibility, spec.inputs_visibility, finding,
                      private_inputs_visibility=spec.private_inputs_visibility)


@dataclass
class GradeResult:
    submission: str              # the name shown for the submission
    tests: list[TestResult]
    partial: bool                # --only was given
    execution_time: float
    output: str = ""             # what the submission printed (capped): shown like the least visible input
    isolation: str = ""          # how the child was isolated (staff only)
    status: str = "graded"       # graded | not_importable | not_implemented | empty
    status_detail: str = ""      # the import error with its line, or what is missing
    notice: str = ""             # the grader's own sentence atop every report (the self-check: shown inputs only)
    feedback: str = ""           # under grading.yaml's feedback_policy: "detailed" or "limited"; "" without it
    policy_notice: str = ""      # the feedback policy's sentence atop the student's results

    @property
    def score(self) -> float:
        return sum(t.score for t in self.tests)

    @property
    def max_score(self) -> float:
        return sum(t.max_score for t in self.tests)

    @property
    def output_visibility(self) -> str:
        """Printed output may echo any input it saw: as visible as the least visible input of the grade (a test
        whose finding is marked `private_inputs`, passed or not, sent inputs released at `input_release`)."""
        return least_visible("visible", *(t.input_release for t in self.tests))

    def shown(self, student: bool) -> list[TestResult]:
        """The tests a view shows: a student sees right away only tests whose outcome is visible."""
        return [t for t in self.tests if not student or t.visibility == "visible"]


def limit_feedback(result: GradeResult, notice: str) -> None:
    """The feedback policy's verdict "limited": students see only the score and status of each hidden test (inputs
    not visible) whose outcome is visible now; the score is unchanged, and staff see everything."""
    for t in result.tests:
        t.limited = t.visibility == "visible" and t.inputs_visibility != "visible"
    result.feedback, result.policy_notice = "limited", notice


WITHHELD = "details withheld: the course's feedback policy (see the top of your results)"


def grade_status(findings: list[Finding]) -> tuple[str, str]:
    """(status, detail) of a whole grade from its findings."""
    kinds = [f.kind for f in findings]
    for f in findings:
        if f.kind == "import":
            return "not_importable", f.message
    if kinds and all(k in ("not_implemented", "missing") for k in kinds):
        return "not_implemented", "no contract function is implemented yet (each raises NotImplementedError)"
    return "graded", ""


# ---------------------------------------------------------------- the words
def part_table(tests: list[TestResult], release: str | None = None) -> list[dict]:
    """One row per part (and one for the end-to-end tests): points, maximum, tests passed, first problem (as a view
    released at `release` may show it: outcome_shown)."""
    rows: OrderedDict[str, dict] = OrderedDict()
    for t in tests:
        row = rows.setdefault(t.tags[0], {"part": t.tags[0], "score": 0.0, "max": 0.0, "passed": 0, "tests": 0,
                                          "first_failure": ""})
        row["score"] += t.score
        row["max"] += t.max_score
        row["tests"] += 1
        row["passed"] += t.passed
        if not t.passed and not row["first_failure"]:
            row["first_failure"] = clean(t.message, MAX_TEXT) if outcome_shown(t, release) else WITHHELD
    return list(rows.values())


def summary_lines(result: GradeResult, student: bool = False) -> list[str]:
    """The score table as text lines; `student`: built only from what students may see right away."""
    tests = result.shown(student)
    lines = [f"{'part':<10} {'points':>13}  tests   first problem"]
    for row in part_table(tests, "visible" if student else None):
        lines.append(f"{row['part']:<10} {row['score']:>6.1f} / {row['max']:<5g} {row['passed']:>2}/{row['tests']:<3}  "
                     f"{row['first_failure']}")
    lines.append(f"{'total':<10} {sum(t.score for t in tests):>6.1f} / {sum(t.max_score for t in tests):<5g}")
    if result.partial:
        lines.append("(partial grade: only some tests were selected with --only)")
    if student and len(tests) < len(result.tests):
        lines.append(f"({len(result.tests) - len(tests)} more tests are shown when their results are released)")
    return lines


def hint_groups(tests: list[TestResult], release: str | None = None) -> list[tuple[str, list[str]]]:
    """Each distinct hint of the failed `tests` once, with the ids of the tests it explains (one mistake often fails
    several tests of its function), in the order of their first test; those a view released at `release` shows."""
    groups: OrderedDict[str, list[str]] = OrderedDict()
    for t in tests:
        if not t.passed and t.finding.hint and outcome_shown(t, release):
            groups.setdefault(t.finding.hint, []).append(t.id)
    return list(groups.items())


def test_text(t: TestResult, show_inputs: bool = True, hint_ref: str = "", show_outcome: bool = True) -> str:
    """What a reader sees about one test; `show_inputs` (outcome.inputs_shown): the failing input, expected and got
    values and the submission's own text, else only what goes with the outcome (the kind and shape compared).
    `hint_ref`: a short reference to the hint shown once elsewhere (the reports' Hints section) instead of it.
    `show_outcome` (outcome.outcome_shown): else only whether it passed."""
    f = t.finding
    if not show_outcome:
        return "Passed." if t.passed else f"Failed ({WITHHELD})."
    if t.passed:
        return "Passed." + (f"\n{clean(f.details, MAX_TEXT)}" if f.details else "")
    lines = [f"Failed: {clean(f.message, MAX_TEXT)}"]
    if f.compared:
        lines.append(f"Compared: {clean(f.compared, MAX_TEXT)}")
    if show_inputs:
        if f.inputs:
            lines += ["Smallest failing input:", clean(f.inputs, MAX_TEXT)]
        if f.submission_text:
            lines += [f"From your code: {clean(f.submission_text, MAX_TEXT)}"]
        if f.expected:
            lines.append(f"Expected: {clean(f.expected, MAX_TEXT)}")
        if f.got:
            lines.append(f"Got:      {clean(f.got, MAX_TEXT)}")
    if f.hint:
        lines.append(f"Hint: {hint_ref or clean(f.hint, MAX_TEXT)}")
    if f.details:
        lines.append(clean(f.details, MAX_TEXT))
    if not show_inputs and f.input_text:
        lines.append("(the failing input, the expected and got values and your code's own message are shown when "
                     "the inputs are released)")
    return "\n".join(lines)
