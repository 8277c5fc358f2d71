"""Hypothesis strategies for a lab's tensor inputs, drawn from the whole valid domain a contract declares:
row lengths from 1 to 48 with T = 1 and single rows, ragged and full rows, values up to the declared
bounds (the bounds themselves drawn often), garbage at padded positions, float32 and float64."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import torch
from hypothesis import strategies as st

DTYPES = (torch.float32, torch.float64)
GARBAGE = 1e3            # |inputs| at padded positions (the contract's bound), log-probs excepted
LOGPROB_MIN = -40.0      # log-probs lie in [LOGPROB_MIN, 0] everywhere, padded positions included
LONG_T = 24              # a "long row" has at least this many tokens


@dataclass
class Ragged:
    """n (B, T) tensors and a prefix mask; padded positions hold garbage."""

    tensors: list[torch.Tensor]
    mask: torch.Tensor

    @property
    def dtype(self) -> torch.dtype:
        return self.mask.dtype


def floats(lo: float, hi: float, width: Literal[16, 32, 64] = 64) -> st.SearchStrategy[float]:
    """Finite floats in [lo, hi] (width=32: values a float32 tensor holds exactly)."""
    return st.floats(lo, hi, allow_nan=False, allow_infinity=False, width=width)


def bounded(lo: float, hi: float) -> st.SearchStrategy[float]:
    """Floats in [lo, hi], exact in float32, with the bounds themselves (and 0 when inside) a quarter of the time."""
    edges = sorted({x for x in (lo, hi, 0.0) if lo <= x <= hi}, key=abs)
    inside = floats(lo, hi, width=32)
    return st.one_of(inside, inside, inside, st.sampled_from(edges))


ROW_SHAPES = (  # (min tokens, max tokens, max rows); shrinking goes to the first
    (1, 6, 16),
    (1, 1, 8),          # T = 1
    (LONG_T, 48, 3),    # long rows
)


@st.composite
def ragged_ranges(draw, ranges: tuple, garbage: float | tuple = GARBAGE, dtype: torch.dtype | None = None,
                  shapes: tuple = ROW_SHAPES) -> Ragged:
    """One tensor (B, T) per entry of `ranges` (a (lo, hi) pair, see `bounded`, or a float strategy), e.g.
    log-probs in [-40, 0] next to advantages in [-10, 10]. A row is a list of tokens, each a tuple with one
    value per range, so shrinking deletes whole rows and tokens. Padded positions hold garbage in
    [-g, g] (`garbage` per tensor or one g for all), from one drawn seed."""
    dtype = dtype or draw(st.sampled_from(DTYPES))
    seed = draw(st.integers(0, 2**31 - 1))
    low, high, max_b = draw(st.sampled_from(shapes))
    token = st.tuples(*[r if isinstance(r, st.SearchStrategy) else bounded(*r) for r in ranges])
    rows = draw(st.lists(st.lists(token, min_size=low, max_size=high), min_size=1, max_size=max_b))
    lengths = torch.tensor([len(row) for row in rows])
    longest = int(lengths.max())
    T = longest + draw(st.integers(0, max(0, high - longest)))  # columns of padding only
    mask = (torch.arange(T)[None, :] < lengths[:, None]).to(dtype)
    junk = torch.Generator().manual_seed(seed)
    garbages = garbage if isinstance(garbage, tuple) else (garbage,) * len(ranges)
    tensors = []
    for i, g in enumerate(garbages):
        x = ((torch.rand(len(rows), T, generator=junk, dtype=torch.float64) * 2 - 1) * g).to(dtype)
        x[mask.bool()] = torch.tensor([tok[i] for row in rows for tok in row], dtype=dtype)
        tensors.append(x)
    return Ragged(tensors, mask)


# log(p / q) of two log-probs: near 0 (near-equal log-probs), or anywhere their range allows
LOG_RATIOS = st.one_of(floats(-0.75, 0.75, width=32), bounded(LOGPROB_MIN, -LOGPROB_MIN),
                       floats(-2.0 ** -10, 2.0 ** -10, width=32))  # near-equal: |d| <= 1e-3


def logprob_pair(where: torch.Tensor, log_ratio: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """(a, b), both log-probs in [LOGPROB_MIN, 0], with a - b = log_ratio (|log_ratio| <= -LOGPROB_MIN):
    the higher of the two sits |where| (clamped to [0, 1]) of the way down the room it has left.
    Garbage `where` and `log_ratio` (padded positions) still give log-probs in that range."""
    lr = log_ratio.double().clamp(LOGPROB_MIN, -LOGPROB_MIN)
    top = -where.double().abs().clamp(max=1) * (-LOGPROB_MIN - lr.abs())
    a, b = torch.where(lr >= 0, top, top + lr), torch.where(lr >= 0, top - lr, top)
    return a.to(log_ratio.dtype), b.to(log_ratio.dtype)
