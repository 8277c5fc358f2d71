"""A contract function's declared domain (grading.yaml `contract.F.domain`) and seeded draws from it.

    domain:  {x: tensor B T, mask: mask B T, factor: float 0.5..4, steps: int 1..8, center: bool,
              mode: choice mean sum}

`tensor DIMS` is a float tensor of those dimensions (letters are sizes drawn per input, 1 to 4, or in the range a
`size L LO..HI` parameter declares, which is that size; numbers are fixed; `N*G` is their product)
(its gradient is compared where the contract declares it `differentiable`), standard normal, or uniform in LO..HI
when declared `tensor DIMS in LO..HI`; `mask DIMS` holds 0 and 1 in the function's float dtype, with its first
column 1 (no row is all padding); a `prefix-mask DIMS` holds each row's 1s first (a length of 1 to the last size,
then 0s); `float LO..HI` and `int LO..HI` are drawn
uniformly; `bool` and `choice A B ...` take each value. A declared domain gives a lab its differential check's
inputs (`draw`), its fresh twins (`twin`) and its probe inputs without code (docs/labs.md). The declarations
are read by autograder/lab/domain_spec.py.
"""

from __future__ import annotations

import random

import torch

from autograder.checks.base import Call
from autograder.checks.chosen import prefix_mask
from autograder.lab import config
from autograder.lab.domain_spec import Parameter, dim_size, factors_of_dim


def parameters(function: str) -> list[Parameter]:
    """The declared domain of a contract function, in the contract's parameter order."""
    spec = config.current().contract[function]
    return [Parameter.parse(name, spec.domain[name]) for name in spec.parameters]


def draw(function: str, seed: int, dtype: torch.dtype = torch.float64) -> Call:
    """A seeded input of `function` from its declared domain, as a Call asking for each `tensor`'s gradient
    (of a scalar answer)."""
    params = parameters(function)
    args = draw_arguments(params, f"{function}:{seed}", dtype)
    spec = config.current().contract[function]  # a scalar's gradients here; a tensor's: the derived gradient test
    grad = tuple(i for i, p in enumerate(params) if p.name in spec.differentiable) if spec.returns == "scalar" else ()
    for i in grad:
        args[i].requires_grad_(True)
    return Call(function, args, grad=grad, names=tuple(p.name for p in params),
                shape=spec.shapes(args))


def draw_arguments(params: list[Parameter], seed: str, dtype: torch.dtype = torch.float64) -> tuple:
    """Positional arguments drawn from `params` (one value per parameter), seeded by the string `seed`."""
    rng = random.Random(seed)
    g = torch.Generator().manual_seed(rng.randrange(2**31))
    sizes = {p.dims[0]: rng.randint(int(p.low), int(p.high)) for p in params if p.kind == "size"}
    return tuple(_value(p, rng, g, sizes, dtype) for p in params)


def call_sizes(params: list[Parameter], arguments: dict) -> dict[str, int]:
    """The size letters' values in a call (argument name -> value): a `size` parameter's value, a plain dimension's
    length, then a product's one unknown letter."""
    sizes = {p.dims[0]: int(arguments[p.name]) for p in params if p.kind == "size"}
    dims = [(d, n) for p in params if p.kind in ("tensor", "mask") for d, n in zip(p.dims, arguments[p.name].shape)]
    for d, n in sorted(dims, key=lambda dn: "*" in dn[0]):  # plain dimensions first
        unknown = [f for f in factors_of_dim(d) if not f.isdigit() and f not in sizes]
        if len(unknown) == 1:
            known = dim_size("*".join(f for f in factors_of_dim(d) if f != unknown[0]) or "1", sizes)
            sizes[unknown[0]] = n // known
    return sizes


def twin(function: str, args: tuple, kwargs: dict, valid: bool, position: int) -> tuple[tuple, dict]:
    """A fresh input like a shown one: the same shapes, dtype, masks and settings, new tensor values (Lab.twin)."""
    g = torch.Generator().manual_seed(1000 + position)
    fresh = tuple(_fresh(p, a, g) if isinstance(a, torch.Tensor) else a for p, a in zip(parameters(function), args))
    return fresh, dict(kwargs)


def probe_inputs() -> dict[str, tuple]:
    """A small valid input per contract function (Lab.probe_inputs)."""
    return {name: draw(name, 0).args for name in config.current().contract}


def _value(p: Parameter, rng: random.Random, g: torch.Generator, sizes: dict[str, int],
           dtype: torch.dtype) -> object:
    if p.kind in ("tensor", "mask"):
        for letter in (f for d in p.dims for f in factors_of_dim(d) if not f.isdigit()):
            sizes.setdefault(letter, rng.randint(1, 4))
        shape = tuple(dim_size(d, sizes) for d in p.dims)
        return _mask(shape, g, dtype, p.prefix) if p.kind == "mask" else _tensor(p, shape, g, dtype)
    if p.kind == "size":
        return sizes[p.dims[0]]
    if p.kind == "float":
        return round(rng.uniform(p.low, p.high), 3)
    if p.kind == "int":
        return rng.randint(int(p.low), int(p.high))
    if p.kind == "bool":
        return rng.random() < 0.5
    return rng.choice(p.choice_values())


def _tensor(p: Parameter, shape: tuple[int, ...], g: torch.Generator, dtype: torch.dtype) -> torch.Tensor:
    """Standard normal entries, or uniform in the declared range (`tensor DIMS in LO..HI`)."""
    return uniform(p, shape, g, dtype) if p.ranged else torch.randn(shape, generator=g, dtype=dtype)


def uniform(p: Parameter, shape: tuple[int, ...], g: torch.Generator, dtype: torch.dtype) -> torch.Tensor:
    """Entries uniform in a ranged tensor's declared LO..HI (drawn in float64, returned in `dtype`)."""
    return (p.low + (p.high - p.low) * torch.rand(shape, generator=g, dtype=torch.float64)).to(dtype)


def prefix_masks(lengths: list[int], shape: tuple[int, ...], dtype: torch.dtype) -> torch.Tensor:
    """A mask of `shape` whose rows (every index but the last) hold `lengths` 1s, then 0s."""
    return prefix_mask(lengths, shape[-1], dtype).reshape(shape) if shape else torch.ones((), dtype=dtype)


def _mask(shape: tuple[int, ...], g: torch.Generator, dtype: torch.dtype, prefix: bool = False) -> torch.Tensor:
    if prefix and shape:  # each row: 1 for its first `length` columns (1 to all of them), then 0
        return prefix_masks(torch.randint(1, shape[-1] + 1, shape[:-1], generator=g).reshape(-1).tolist(), shape,
                            dtype)
    mask = (torch.rand(shape, generator=g) < 0.7).to(dtype)
    if mask.dim():
        mask[..., 0] = 1.0
    return mask


def _fresh(p: Parameter, shown: torch.Tensor, g: torch.Generator) -> torch.Tensor:
    if p.kind == "mask":  # the shown mask: a twin has the shown example's layout, so it tells what the example tells
        return shown.clone()
    return _tensor(p, tuple(shown.shape), g, shown.dtype).requires_grad_(shown.requires_grad)
