"""The batch's progress bar (rich): done / total, failed to grade, rate, elapsed and time left."""

from __future__ import annotations

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    ProgressColumn,
    Task,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.text import Text


class RateColumn(ProgressColumn):
    """Submissions graded per minute (over the whole batch so far)."""

    def render(self, task: Task) -> Text:
        return Text(f"{task.speed * 60:.1f}/min" if task.speed else "-/min", style="progress.data.speed")


def progress_bar(console: Console) -> Progress:
    return Progress(TextColumn("grading"), BarColumn(), MofNCompleteColumn(),
                    TextColumn("[red]{task.fields[failed]} failed"), RateColumn(),
                    TimeElapsedColumn(), TextColumn("left"), TimeRemainingColumn(),
                    console=console, speed_estimate_period=24 * 3600)
