"""Lab 12 (RLHF on a tiny transformer): the grader's side of the lab, loaded by the engine as the package `lab12`.

    lab.py          its hooks (registry.Lab): imported for full grades, never by the student bundle
    checks/public/  reference-free checks (shipped with the self-check); checks/hidden/: the rest, never shipped
    e2e_tests.py    the end-to-end tests; baseline.py, replays.py, plots.py: what they use
    bank/           known mistakes and correct variants; nulls.py: the null submissions
    data/           the shipped data files (`python -m autograder refresh`, `calibrate`)
    commands/       the lab's own commands (build-sft)
"""
