"""Submissions the benchmarks grade besides the reference.

A grade replays the reference's recorded PPO runs for a submission that answers their calls as the
reference does (autograder/replay.py), so the reference itself never trains. `trained_copy` writes a
submission that must train: the reference with its value loss scaled by 1.001, a difference the replay's
tolerance (1e-5) does not forgive and the e2e tests do (it passes them all): what a grade costs a student
whose functions differ from the reference's, and what it cost every submission before replays.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SCALED_VALUE_LOSS = '''

_value_loss = ppo_value_loss


def ppo_value_loss(*args, **kwargs):  # 1e-3 off the reference: fine for training, not replayed
    return _value_loss(*args, **kwargs) * 1.001
'''


def trained_copy(folder: Path | None = None) -> Path:
    """A file rlhf.py in `folder` (default: a new temporary folder): the reference, value loss x 1.001."""
    folder = Path(folder or tempfile.mkdtemp(prefix="lab12-trained-"))
    path = folder / "rlhf.py"
    path.write_text((ROOT / "solutions" / "rlhf.py").read_text() + SCALED_VALUE_LOSS)
    return path
