"""Is a submission's answer to a recorded call the reference's, within grading.yaml's replay tolerances?

Per-token values are compared where the call's mask is 1 only (the training reads no other position); a
gradient is compared everywhere, and must be exactly 0 where the reference's is exactly 0 (Adam turns any
other value, however small, into a full step of the parameters only that position reaches).
"""

from __future__ import annotations

from typing import Any

import torch

from autograder.lab import config


def answer_matches(call: dict, value: Any, grads: Any, rtol: float, atol: float) -> bool:
    """The answer (value, grads) to the recorded `call` is the reference's within the tolerances."""
    where = config.current().contract[call["fn"]].mask_index
    mask = call["args"][where].bool() if where is not None else None
    return close(value, call["value"], mask, rtol, atol) and close(grads, call["grads"], None, rtol, atol, zeros=True)


def close(got: Any, expected: Any, mask: torch.Tensor | None, rtol: float, atol: float, zeros: bool = False) -> bool:
    """Within the tolerances (where `mask` is 1, for a value of the mask's shape); `zeros`: exactly 0 where
    `expected` is exactly 0."""
    if isinstance(expected, (list, tuple)):
        return isinstance(got, (list, tuple)) and len(got) == len(expected) \
            and all(close(g, e, mask, rtol, atol, zeros) for g, e in zip(got, expected))
    g, e = got.double(), expected.double()
    if mask is not None and mask.shape == e.shape:
        g, e = torch.where(mask, g, 0.0), torch.where(mask, e, 0.0)
    if zeros and bool((g[e == 0] != 0).any()):
        return False
    return bool(torch.isfinite(g).all()) and torch.allclose(g, e, rtol=rtol, atol=atol)
