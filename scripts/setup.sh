#!/usr/bin/env bash
# One-time set-up on a fresh machine: a virtual environment in .venv with the project installed.
# Safe to run again (it only installs what is missing). Used by the README and by .ci/run.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}
TORCH=2.13.0
CPU_INDEX=https://download.pytorch.org/whl/cpu
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
# torch first, pinned. On Linux, plain PyPI's torch wheel is the CUDA build (it pulls several GB of
# nvidia-* packages), so PyTorch's CPU index is preferred (about 200 MB). When that index does not
# answer within 5 s (a machine that reaches only PyPI or a local mirror), torch comes from the default
# index, i.e. whatever pip is configured with: a CPU build only if that index or --find-links has one.
if [ "$(.venv/bin/python -c 'import importlib.metadata as m; print(m.version("torch").split("+")[0])' 2>/dev/null)" != "$TORCH" ]; then
  if .venv/bin/python -c "import urllib.request; urllib.request.urlopen('$CPU_INDEX/torch/', timeout=5)" 2>/dev/null; then
    .venv/bin/python -m pip install --quiet --index-url "$CPU_INDEX" "torch==$TORCH"
  else
    echo "setup.sh: $CPU_INDEX cannot be reached; installing torch==$TORCH from the default index" >&2
    .venv/bin/python -m pip install --quiet "torch==$TORCH"
  fi
fi
.venv/bin/python -m pip install --quiet -e ".[dask]"
