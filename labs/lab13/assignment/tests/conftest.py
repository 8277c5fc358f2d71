"""Make the lab folder (your posttrain.py) importable from these tests."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
