#!/usr/bin/env bash
# One-time set-up on a fresh machine: a virtual environment in .venv with the project installed.
# Safe to run again (it only installs what is missing). Used by the README and by .ci/run.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  "$PYTHON" -m venv .venv
fi
.venv/bin/python -m pip install --quiet --upgrade pip
# torch first, pinned: the CPU build (a plain `torch` would pull a multi-GB CUDA build).
.venv/bin/python -m pip install --quiet "torch==2.13.0"
.venv/bin/python -m pip install --quiet -e ".[dask]"
