"""Lab 13's tests run from the repository root: `python -m pytest labs/lab13/tests` (add `-m slow` for training).

They import the lab's grading package as `labs.lab13.grading` (a namespace package from the root) and never
import Lab 12's checks, so neither lab's registries see the other's tests."""

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
