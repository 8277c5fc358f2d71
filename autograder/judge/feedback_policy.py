"""grading.yaml's `feedback_policy`: at most `max_detailed` detailed feedbacks on hidden tests per rolling window of
`window_hours`, counted from Gradescope's /autograder/submission_metadata.json; beyond, students see their score and
the visible tests only until the window frees. The score always counts.

    decision = decide(cfg.feedback_policy, json.loads(Path(METADATA).read_text()))
    if not decision.detailed:
        outcome.limit_feedback(result, decision.notice)     # the one gate: outcome.outcome_shown

The metadata (Gradescope's documented format) holds `created_at` (this submission's time) and
`previous_submissions`, each with `submission_time`, `score` and `results` (that submission's results.json). A grade
under the policy marks its results.json (`extra_data.autograder_feedback`: "detailed" or "limited"), so a limited
submission does not use up the window; a previous submission without the mark (graded before the policy) counts as
detailed. Torch-free.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import Any

MARK = "autograder_feedback"  # results.json extra_data key: "detailed" or "limited"
METADATA = "/autograder/submission_metadata.json"


class MetadataError(Exception):
    """The metadata file is not Gradescope's format: the grade gives detailed feedback and staff see why."""


@dataclass(frozen=True)
class Decision:
    detailed: bool
    used: int                 # detailed feedbacks in the window before this submission
    allowed: int
    window_hours: float
    frees_at: datetime | None = None  # limited: when the next detailed feedback is possible

    @property
    def notice(self) -> str:
        """The sentence atop the student's results."""
        window = f"{self.window_hours:g} hours"
        if self.detailed:
            return (f"Detailed feedback on hidden tests: {self.used + 1} of {self.allowed} per {window} "
                    "(the course's feedback policy).")
        when = self.frees_at.strftime("%Y-%m-%d %H:%M %Z") if self.frees_at else "later"
        return (f"You already had {self.used} detailed feedbacks on hidden tests in the last {window} (the course "
                f"allows {self.allowed}): this submission shows its score and the visible tests only. Its score "
                f"counts as usual. The next detailed feedback is possible from {when}.")


def decide(policy: Any, metadata: dict) -> Decision:
    """The decision for the submission described by `metadata` under `policy` (config.FeedbackPolicy, max_detailed
    > 0). Raises MetadataError when the metadata is not in Gradescope's format."""
    if not isinstance(metadata, dict):
        raise MetadataError("not a JSON object")
    now = parse_time(metadata.get("created_at"), "created_at")
    previous = metadata.get("previous_submissions", [])
    if not isinstance(previous, list):
        raise MetadataError("previous_submissions is not a list")
    window = timedelta(hours=policy.window_hours)
    detailed = sorted(t for t, p in zip(_times(previous), previous) if now - window < t <= now and _was_detailed(p))
    allowed = policy.max_detailed
    if len(detailed) < allowed:
        return Decision(True, len(detailed), allowed, policy.window_hours)
    return Decision(False, len(detailed), allowed, policy.window_hours,
                    frees_at=detailed[len(detailed) - allowed] + window)


def _times(previous: list) -> list[datetime]:
    return [parse_time(p.get("submission_time") if isinstance(p, dict) else None,
                       "previous_submissions[].submission_time") for p in previous]


def _was_detailed(previous: dict) -> bool:
    """A previous submission counts unless its results.json says this policy limited it."""
    results = previous.get("results")
    extra = results.get("extra_data") if isinstance(results, dict) else None
    return not (isinstance(extra, dict) and extra.get(MARK) == "limited")


def parse_time(text: object, key: str) -> datetime:
    """Gradescope's ISO 8601 times ("2018-07-01T14:22:32.365935-07:00"), on Python 3.10 too (which reads only 3 or
    6 digits of fractions and no "Z")."""
    if not isinstance(text, str):
        raise MetadataError(f"{key} is missing or not a string")
    normal = re.sub(r"Z$", "+00:00", text.strip())
    normal = re.sub(r"\.(\d+)", lambda m: "." + (m.group(1) + "000000")[:6], normal)
    try:
        value = datetime.fromisoformat(normal)
    except ValueError:
        raise MetadataError(f"{key}: not an ISO 8601 time ({text[:40]!r})") from None
    return value if value.tzinfo else value.replace(tzinfo=timezone.utc)


def apply(result: Any, policy: Any, metadata_path: Any) -> str:
    """Apply `policy` (config.FeedbackPolicy) to a grade (outcome.GradeResult) from Gradescope's metadata file;
    returns a line for staff (stderr) when the file cannot be read, in which case feedback stays detailed."""
    import json
    from pathlib import Path

    from autograder.judge.outcome import limit_feedback
    if not policy.max_detailed:
        return ""
    try:
        decision = decide(policy, json.loads(Path(metadata_path).read_text(encoding="utf-8")))
    except (OSError, ValueError, MetadataError) as exc:  # json's errors are ValueErrors
        return f"feedback_policy not applied (detailed feedback given): {metadata_path}: {exc}"
    if decision.detailed:
        result.feedback, result.policy_notice = "detailed", decision.notice
    else:
        limit_feedback(result, decision.notice)
    return ""
