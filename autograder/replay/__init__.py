"""Shipped reference trainings: a grade skips an e2e training whose calls the submission answers as the reference.

An e2e run calls the functions under test hundreds of times; everything else in it (sampling, the forward and
backward passes, the evaluation) is the judge's own deterministic code. The reference's runs are recorded
once, in a grade of the reference (record.py): every call's inputs, the answer (value and gradients), where
the training passed an earlier answer on (flow.py) and the run's outcome, in the lab's grading/data/replays.bin
(shipped.py; `python -m autograder refresh` rewrites it).

A lab's e2e test routes each replayable training through `outcome(key, parts, train, rtol, atol)`; its facts
(how its training transforms answers it passes on) are registry.Replays. Before training a run, a grade sends
the submission the recorded calls in order, back to back (in batches: flow.waves, remote.answers), with its own
answers passed on where the training passes them on (docs/validity.md: why a submission that tells a replay from
its training by its timing gains nothing, and so why a replay is not paced as a training). When every answer lies
within grading.yaml's `calibration.replay_rtol` / `replay_atol` of the reference's (compare.py), the run's outcome
is the recorded one. Answers equal bit for bit would take that very training; answers this close differ from it
as rounding does, and the calibration shows that the reference passes every criterion on each of its
seeds with 3 std to spare. At the first answer that differs, or raises, the run trains as it always did:
the answers given so far cost a fraction of a second. A stale or missing file only costs time.

AUTOGRADER_REPLAY=0 in the judge's environment trains every run (benchmarks, and A/B checks of this package).
"""

from __future__ import annotations

from .record import write_reference
from .runs import note, outcome
from .shipped import DATA_FILE, is_current

__all__ = ["DATA_FILE", "is_current", "note", "outcome", "write_reference"]
