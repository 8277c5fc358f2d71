"""The batch's progress bar (rich): done / total, failed to grade, rate, time elapsed and time left.

    grading ━━━━━━━━━━━━━━━━━━━━ 2/10  0 failed  6.0/min  0:00:20 elapsed  about 0:01:20 left

The rate is the submissions finished since the batch started divided by the time since then (rich's own
speed divides by the time between the first and the last finished job: two jobs finishing together on
two workers after 20 s read 400/min). The time left is what is left at that rate; "-" until a first
submission is finished, "done" at the end.
"""

from __future__ import annotations

import datetime

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, ProgressColumn, Task, TextColumn
from rich.text import Text


def rate_per_minute(task: Task) -> float | None:
    """Submissions finished per minute since the task started, or None before the first one."""
    elapsed = task.elapsed
    if not task.completed or not elapsed:
        return None
    return 60 * task.completed / elapsed


class RateColumn(ProgressColumn):
    def render(self, task: Task) -> Text:
        rate = rate_per_minute(task)
        return Text(f"{rate:.1f}/min" if rate is not None else "-/min", style="progress.data.speed")


class ElapsedColumn(ProgressColumn):
    def render(self, task: Task) -> Text:
        return Text(f"{_clock(task.finished_time if task.finished else task.elapsed)} elapsed",
                    style="progress.elapsed")


class TimeLeftColumn(ProgressColumn):
    def render(self, task: Task) -> Text:
        if task.finished:
            return Text("done", style="progress.remaining")
        rate = rate_per_minute(task)
        if rate is None or task.total is None:
            return Text("left: -", style="progress.remaining")
        return Text(f"about {_clock(60 * (task.total - task.completed) / rate)} left", style="progress.remaining")


def _clock(seconds: float | None) -> str:
    return str(datetime.timedelta(seconds=int(seconds or 0)))


def progress_bar(console: Console, **options) -> Progress:
    return Progress(TextColumn("grading"), BarColumn(), MofNCompleteColumn(),
                    TextColumn("[red]{task.fields[failed]} failed"), RateColumn(), ElapsedColumn(), TimeLeftColumn(),
                    console=console, **options)
