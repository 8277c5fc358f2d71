"""Hypothesis strategies for the contract's inputs: ragged masks, garbage at padding, both dtypes."""

from __future__ import annotations

from dataclasses import dataclass

import torch
from hypothesis import strategies as st

DTYPES = (torch.float32, torch.float64)


@dataclass
class Ragged:
    """n (B, T) tensors and a prefix mask; padded positions hold garbage."""

    tensors: list[torch.Tensor]
    mask: torch.Tensor

    @property
    def dtype(self) -> torch.dtype:
        return self.mask.dtype


def floats(lo: float, hi: float, width: int = 64) -> st.SearchStrategy[float]:
    """Finite floats in [lo, hi] (width=32: values a float32 tensor holds exactly)."""
    return st.floats(lo, hi, allow_nan=False, allow_infinity=False, width=width)


@st.composite
def matrix(draw, shape: tuple[int, ...], lo: float, hi: float, dtype: torch.dtype) -> torch.Tensor:
    n = 1
    for s in shape:
        n *= s
    return torch.tensor(draw(st.lists(floats(lo, hi, width=32), min_size=n, max_size=n)), dtype=dtype).reshape(shape)


@st.composite
def ragged(draw, n: int, lo: float = -5.0, hi: float = 5.0, max_b: int = 16, max_t: int = 6,
           garbage: float = 1e3, dtype: torch.dtype | None = None) -> Ragged:
    """n tensors (B, T) with values in [lo, hi] where mask == 1 and in [-garbage, garbage] elsewhere."""
    B = draw(st.integers(1, max_b))
    T = draw(st.integers(1, max_t))
    dtype = dtype or draw(st.sampled_from(DTYPES))
    lengths = torch.tensor(draw(st.lists(st.integers(1, T), min_size=B, max_size=B)))
    mask = (torch.arange(T)[None, :] < lengths[:, None]).to(dtype)
    tensors = []
    for _ in range(n):
        values = draw(matrix((B, T), lo, hi, dtype))
        junk = draw(matrix((B, T), -garbage, garbage, dtype)) if garbage else torch.zeros(B, T, dtype=dtype)
        tensors.append(torch.where(mask.bool(), values, junk))
    return Ragged(tensors, mask)
