"""Benchmark of a sandboxed child's start, fresh against warm: four `sandbox.Child` of Lab 12's reference each way.

    python benchmarks/child_start_bench.py 0 1        # AUTOGRADER_WARM=0 (fresh children), then 1 (warm)
    python tests/docker_level.py -- .venv/bin/python benchmarks/child_start_bench.py 0 1    # at the Docker level

Each line: the child's kind (Popen: fresh; Forked: from the zygote), the wall time until it has imported the
submission, the judge's CPU for it, and the child's own CPU (its process tree: a fresh child's includes its torch
import; a warm child's does not, the zygote imported torch once). The whole tree's CPU, the zygote's and each
bubblewrap's included, is what a cpuacct cgroup around the command counts.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from autograder.lab import config  # noqa: E402
from autograder.sandbox import isolation, sandbox  # noqa: E402


def main() -> None:
    iso, limits = isolation.detect(), config.current().limits
    print(iso.describe())
    for warm in sys.argv[1:] or ["0", "1"]:
        os.environ["AUTOGRADER_WARM"] = warm
        for _ in range(4):
            wall, cpu = time.monotonic(), time.process_time()
            child = sandbox.Child(ROOT / "solutions" / "rlhf.py", limits, iso)
            wall, cpu = time.monotonic() - wall, time.process_time() - cpu
            own = child.cpu_seconds()
            kind = type(child.proc).__name__
            child.kill()
            print(f"AUTOGRADER_WARM={warm} {kind:6s} wall {wall:.3f} s, judge CPU {cpu:.3f} s, child CPU {own:.3f} s",
                  flush=True)
        sandbox.discard_early()


if __name__ == "__main__":
    main()
