"""Running a grade and scoring it: discovery, lanes, checks and e2e tests run, outcomes, results, reports.

ARCHITECTURE.md: what each module of this room does."""
