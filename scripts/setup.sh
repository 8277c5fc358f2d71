#!/usr/bin/env bash
# One-time set-up on a fresh machine: a virtual environment in .venv with the project installed.
# Safe to run again (it only installs what is missing). Used by the README and by .ci/run.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}
# The sandbox's isolation (docs/isolation.md): bubblewrap, when we may install it. Without it grading
# still works, with weaker isolation that every report names.
if ! command -v bwrap >/dev/null 2>&1 && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  DEBIAN_FRONTEND=noninteractive apt-get update -qq >/dev/null
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq bubblewrap >/dev/null
fi
if [ ! -x .venv/bin/python ]; then
  "$PYTHON" -m venv .venv
fi
.venv/bin/python -m pip install --quiet --upgrade pip
# torch first, pinned: the CPU build (a plain `torch` would pull a multi-GB CUDA build).
.venv/bin/python -m pip install --quiet "torch==2.13.0"
.venv/bin/python -m pip install --quiet -e ".[dask]"
