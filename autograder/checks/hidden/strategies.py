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


@st.composite
def ragged_ranges(draw, ranges: tuple[tuple[float, float], ...], garbage: float = 20.0, max_b: int = 16,
                  max_t: int = 6, dtype: torch.dtype | None = None) -> Ragged:
    """Like `ragged`, with one tensor (B, T) per (lo, hi) range, e.g. log-probs in [-4, 0] next to
    advantages in [-5, 5]. A row is a list of tokens, each a tuple with one value per range, so shrinking
    deletes whole rows and tokens; the garbage at padded positions, in [-garbage, garbage] (keep exp()
    finite), comes from one drawn seed."""
    dtype = dtype or draw(st.sampled_from(DTYPES))
    seed = draw(st.integers(0, 2**31 - 1))
    token = st.tuples(*[floats(lo, hi, width=32) for lo, hi in ranges])
    rows = draw(st.lists(st.lists(token, min_size=1, max_size=max_t), min_size=1, max_size=max_b))
    lengths = torch.tensor([len(row) for row in rows])
    T = int(lengths.max()) + draw(st.integers(0, max_t - int(lengths.max())))  # columns of padding only
    mask = (torch.arange(T)[None, :] < lengths[:, None]).to(dtype)
    junk = torch.Generator().manual_seed(seed)
    tensors = []
    for i in range(len(ranges)):
        x = ((torch.rand(len(rows), T, generator=junk, dtype=torch.float64) * 2 - 1) * garbage).to(dtype)
        x[mask.bool()] = torch.tensor([tok[i] for row in rows for tok in row], dtype=dtype)
        tensors.append(x)
    return Ragged(tensors, mask)
