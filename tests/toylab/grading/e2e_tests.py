"""The toy lab's end-to-end test: gradient descent with the submission's functions reaches the target (the
trained weights judged by the world's own error, never by the submission's loss: a loss of 0 learns nothing)."""

from __future__ import annotations

from typing import Mapping

from autograder.judge.e2e import Criterion, e2e_test
from autograder.lab.config import Config
from autograder.lab.paths import use_world

use_world()
import toyworld  # noqa: E402


@e2e_test("fit", "gradient descent with your functions fits the target",
          "gradient descent on a masked squared error to a scaled target, through masked_mean and scale",
          [Criterion("final_loss", "max_loss", "<=", "the loss did not go down to the target")],
          ("steps", "lr", "max_loss"))
def fit(cfg: Config, spec: Mapping, parts, memo: dict) -> tuple[dict, str, dict]:
    losses, w = toyworld.fit(parts.masked_mean, parts.scale, spec["seed"], spec["steps"], spec["lr"])
    final = toyworld.error(w, spec["seed"])  # judged with the world's own arithmetic, not the submission's loss
    return {"final_loss": final}, f"loss {losses[0]:.3f} -> {losses[-1]:.4f} (judged: {final:.4f})", {}
