"""The toy lab's hooks."""

from __future__ import annotations

import types

import torch

from autograder import diagnosis, registry

from . import e2e_tests  # noqa: F401  (its @e2e_test registration)


def _twin(function: str, args: tuple, kwargs: dict, valid: bool, position: int) -> tuple[tuple, dict]:
    """A fresh input like a public check's: the same shapes, new values."""
    g = torch.Generator().manual_seed(1000 + position)
    fresh = tuple(torch.randn(a.shape, generator=g, dtype=a.dtype) if isinstance(a, torch.Tensor) and i == 0 else a
                  for i, a in enumerate(args))
    return fresh, dict(kwargs)


def _confirmations(function: str) -> list[tuple[tuple, dict]]:
    """Chosen inputs that confirm a hint (diagnosis): padding in some rows, none in others, two dtypes."""
    if function != "masked_mean":
        return []
    x = torch.tensor([[1.5, -2.0, 4.0], [0.25, 3.0, -1.0]])
    masks = [torch.tensor([[1.0, 1.0, 0.0], [1.0, 0.0, 0.0]]), torch.tensor([[1.0, 1.0, 1.0], [1.0, 1.0, 0.0]])]
    return [((x.to(dtype), mask.to(dtype)), {}) for mask in masks for dtype in (torch.float32, torch.float64)]


registry.register_lab(registry.Lab(
    name="toylab",
    make_parts=lambda functions: types.SimpleNamespace(**functions),
    probe_inputs=lambda: {"masked_mean": (torch.zeros(1, 2), torch.ones(1, 2)), "scale": (torch.zeros(2), 1.0)},
    diagnose=diagnosis.diagnose,
    plot=lambda test, histories, metrics: [],
    confirmation_calls=_confirmations,
    twin=_twin,
    twin_scale=lambda function, args: 0.0,
))
