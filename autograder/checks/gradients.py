"""The gradients a contract declares (grading.yaml `contract.F.differentiable`), compared with the reference's
on a call a check made: a detached answer fails a unit test, not only the end-to-end tests that train with it.

    expect_declared_gradients(ctx, made, tools.ask)   # after the values of `made` matched the reference's

A scalar output's gradient is compared whole; a tensor output's as a vector-Jacobian product with a seeded
cotangent of its shape (zero where the call's mask is 0, for a per-token output): what the training's
backward asks the child for (remote.RemoteFunction).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Callable

import torch

from autograder import config
from autograder.checks import Context


def declared(function: str, args: tuple) -> tuple[int, ...]:
    """The positions of `args` the contract declares `function`'s output differentiable in (floating tensors)."""
    spec = config.current().contract.get(function)
    if spec is None:
        return ()
    positions = (spec.parameters.index(p) for p in spec.differentiable)
    return tuple(i for i in positions if i < len(args) and isinstance(args[i], torch.Tensor)
                 and args[i].is_floating_point())


def cotangent(function: str, args: tuple, value: torch.Tensor) -> torch.Tensor | None:
    """A seeded cotangent of the value's shape (None for a scalar), 0 where the call's mask is 0."""
    if value.dim() == 0:
        return None
    generator = torch.Generator().manual_seed(value.numel())
    cot = torch.randn(value.shape, generator=generator, dtype=torch.float64)
    where = config.current().contract[function].mask_index
    if where is not None and where < len(args) and tuple(args[where].shape) == tuple(value.shape):
        cot = cot * args[where].double()
    return cot


def expect_declared_gradients(ctx: Context, made, ask: Callable) -> None:
    """The submission's gradients of `made` (a tools.Call the reference answers) w.r.t. every argument its contract
    declares differentiable match the reference's (computed in float64); `ask`: tools.ask. Raises CheckFailed."""
    from autograder.remote import parameter_names

    wrt = tuple(i for i in declared(made.function, made.args) if i not in made.grad)  # the rest: compared
    if not wrt or not made.valid or made.tuple_of:
        return
    args = [a.detach().double().requires_grad_(i in wrt) if isinstance(a, torch.Tensor) and a.is_floating_point()
            else a for i, a in enumerate(made.args)]
    value = getattr(ctx.ref, made.function)(*args, **made.kwargs)
    if not isinstance(value, torch.Tensor):
        return
    dtype = next(a.dtype for a in made.args if isinstance(a, torch.Tensor) and a.is_floating_point())
    cot = cotangent(made.function, made.args, value)
    cot = cot.to(dtype) if cot is not None else None    # the call's dtype: the reference's is the same, widened
    expected = torch.autograd.grad(value, [args[i] for i in wrt], cot.double() if cot is not None else None,
                                   allow_unused=True)
    answer = ask(ctx, replace(made, grad=wrt, cotangent=cot))
    names = parameter_names(made.function)
    for i, got, want in zip(wrt, answer.grads, expected):
        want = torch.zeros_like(args[i]) if want is None else want
        if got is None:
            raise answer.fail(f"no gradient reached {names[i]}: {made.function}'s output must stay differentiable "
                              f"in {names[i]} (is it detached from the graph?)",
                              expected=f"a gradient w.r.t. {names[i]}", got="none")
        answer.expect_close(ctx, got, want.detach().to(made.args[i].dtype) + 0.0,
                            f"d {made.function} / d {names[i]} differs from the reference"
                            + (" (a vector-Jacobian product with a seeded cotangent)" if cot is not None else ""))
