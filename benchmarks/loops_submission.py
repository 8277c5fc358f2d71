"""A correct submission written as students often write it: ranking_loss as plain Python loops over pairs.

    python benchmarks/loops_submission.py /tmp/loops/rlhf.py     # the reference, with this ranking_loss

Every answer equals the reference's (to rounding), but each call costs ~K(K-1)/2 x N small torch ops: the
grade must measure this code, not its speed (issue 19: per-pair loops once cost 0 of 20 e2e points on a
busy machine). Used by benchmarks (container_bench.py --submission, grade_all_bench.py) and tests/test_budget.py.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

LOOPS = '''

def ranking_loss(rewards, ranking):
    """Per-pair Python loops: every pair (a ranked above b) of every prompt, one at a time."""
    losses = []
    for n in range(rewards.shape[0]):
        order = ranking[n].tolist()
        for i in range(len(order)):
            for j in range(i + 1, len(order)):
                losses.append(bradley_terry_loss(rewards[n, order[i]].reshape(1), rewards[n, order[j]].reshape(1)))
    return torch.stack(losses).mean()
'''


def source() -> str:
    """The reference's rlhf.py with ranking_loss replaced by LOOPS (a later definition wins)."""
    return (ROOT / "solutions" / "rlhf.py").read_text() + LOOPS


def write(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(source())
    return path


if __name__ == "__main__":
    print(write(Path(sys.argv[1])))
