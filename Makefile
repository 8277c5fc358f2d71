# Test tiers (CONTRIBUTING.md says which to run for which change). Each runs alone; CI (.ci/run) runs them all.
PY ?= .venv/bin/python
PYTEST = $(PY) -m pytest -q
BUNDLES = tests/test_release_bundle.py tests/test_release_gradescope.py tests/test_release_nbgrader.py \
          tests/test_grade_all_nbgrader.py tests/test_docker_level.py tests/test_lab13_release.py
BROWSER = tests/test_report_browser.py tests/test_grade_all_browser.py tests/test_inert_outputs.py \
          tests/test_inert_outputs_browser.py tests/test_inert_outputs_office.py
SANDBOX = tests/test_sandbox.py tests/test_sandbox_adversarial.py tests/test_sandbox_channels.py tests/test_sandbox_warm.py tests/test_wire_fuzz.py

.PHONY: setup lint test test-engine test-slow test-bundles test-browser test-docker validate refresh-check ci

setup:            ## the venv with the project and its dev tools
	bash scripts/setup.sh && $(PY) -m pip install --quiet -e ".[dev]"

lint:             ## ruff and mypy
	$(PY) -m ruff check . && $(PY) -m mypy

test:             ## the fast suite (the README's test command): engine and Lab 12, no training runs
	$(PYTEST)

test-engine:      ## the engine against the toy lab only (tests/toylab), through the commands
	$(PYTEST) tests/test_toylab.py tests/test_architecture.py -m "slow or not slow"

test-slow:        ## training runs, bundle builds, the adversarial suite, every bank entry (CI's slow step)
	$(PYTEST) -m slow

test-bundles:     ## the release bundles built and run (Gradescope layout, real nbgrader, a fresh venv)
	$(PYTEST) -m "slow or not slow" $(BUNDLES)

test-browser:     ## report layouts in a real headless browser (chromium); the hostile class in chromium and LibreOffice
	$(PYTEST) -m "slow or not slow" $(BROWSER)

test-docker:      ## the sandbox and its attacks at the Docker level (root without namespaces)
	env -u AUTOGRADER_SANDBOX AUTOGRADER_EXPECT_LEVEL="no bubblewrap + own uid + Landlock + seccomp" \
	  $(PY) tests/docker_level.py -- $(PY) -m pytest -q -p no:cacheprovider -m "slow or not slow" $(SANDBOX)

validate:         ## each lab's grader against its bank, nulls and variants, checks and e2e, every mutant of its reference
	$(PY) -m autograder validate --e2e --mutation && $(PY) -m autograder --lab labs/lab13 validate --e2e --mutation \
	  && $(PY) -m autograder --lab tests/toylab validate --mutation

refresh-check:    ## every shipped data file of each lab matches what it is computed from
	$(PY) -m autograder refresh --check && $(PY) -m autograder --lab labs/lab13 refresh --check

ci:               ## what CI runs
	bash .ci/run
