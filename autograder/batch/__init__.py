"""Grading a whole class (`python -m autograder grade-all`): one job per submission, nothing lost.

    discover.py      the submissions of a folder or a Gradescope export (zip or unzipped); roster.py: who is enrolled
    fingerprint.py   the grader's version and each job's key (what decides a regrade)
    jobs.py          the per-submission job: the same engine as `grade`, plain data back
    pool.py          local worker processes (a crash or a hang costs one job); dask_runner.py: a cluster
    store.py         atomic writes of each student's reports and record (DIR/<student>/)
    outputs.py       the rows of the class: records, roster and manual overrides (overrides.py) together
    gradebook.py     DIR/gradebook.csv, canvas.csv; class_report.py: DIR/class_report.html
    similarity.py    --similarity: the most similar pairs (copydetect, optional); progress.py: the progress bar
    run.py           the coordinator: plan, run, write, report

Only jobs.py (in the workers) imports torch; the coordinator stays light, so a rerun with nothing
changed finishes in about a second.
"""
