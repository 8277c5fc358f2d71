"""Lab 13's grading package (GRPO and DPO on TinyLM), loaded by the engine by path as `lab13` (docs/labs.md).

    lab.py                         its hooks (registry.Lab): parts, probes, diagnosis, plots, fresh twins
    checks/hidden                  hidden unit and property checks (the engine's @check; the public ones are
                                   derived from grading.yaml's worked examples)
    e2e_tests.py                   end-to-end tests (the engine's @e2e_test), their measurements and criteria
    bank/                          known mistakes and correct variants (@mistake, @variant), with their sources
    nulls.py                       input-blind submissions that must score 0 everywhere (NULLS, null_source)
    plots.py                       the report's plots of the e2e runs
    data/calibration_runs.jsonl    the reference's calibration runs (50 seeds; `calibrate --raw` resumes from it)
"""
