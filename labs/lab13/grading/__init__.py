"""Lab 13's grading package (GRPO and DPO on TinyLM), loaded by path by the engine (issue 21's seam).

    checks/public, checks/hidden   unit and property checks (`checks.check` registers them here)
    e2e.py                         end-to-end tests (`e2e.e2e_test`), their measurements and criteria
    bank/                          known mistakes and correct variants, with their public sources
    nulls.py                       input-blind submissions that must score 0 everywhere
    lab.py                         the hooks the engine asks a lab for (registry.Lab's fields)
    world.py                       where the given world and the reference live; imports them
    calibrate.py                   the e2e tests' reference distributions and margins (data/calibration.json)
"""
