"""Public checks of kl_estimate and shaped_rewards: hand-computed examples, no reference needed."""

from __future__ import annotations

import math

import torch

from autograder.checks import Context, check
from autograder.checks.tools import call, expect_value_error, public

KL_NAMES = ("logp", "ref_logp")
SHAPED_NAMES = ("scores", "logp", "ref_logp", "mask", "beta", "kind")
E = math.e


@check("kl.estimators_known_values",
       "kl_estimate's k1, k2, k3 on hand-computed log-probs; an unknown kind ('k4', 'K1') raises ValueError",
       functions=("kl_estimate",))
@public
def estimators_known_values(ctx: Context) -> None:
    logp = torch.tensor([[-1.0, -2.0, -0.5], [-3.0, -1.0, -2.0]])
    ref_logp = torch.tensor([[-1.0, -1.0, -1.5], [-1.0, -2.0, -2.0]])
    # d = logp - ref_logp = [[0, -1, 1], [-2, 1, 0]]
    expected = {
        "k1": [[0.0, -1.0, 1.0], [-2.0, 1.0, 0.0]],
        "k2": [[0.0, 0.5, 0.5], [2.0, 0.5, 0.0]],                              # d^2 / 2
        "k3": [[0.0, E - 2, 1 / E], [E ** 2 - 3, 1 / E, 0.0]],                 # exp(-d) - 1 + d
    }
    formulas = {"k1": "d", "k2": "d^2 / 2", "k3": "exp(-d) - 1 + d"}
    for dtype in (torch.float32, torch.float64):
        for kind, values in expected.items():
            answer = call(ctx, "kl_estimate", logp.to(dtype), ref_logp.to(dtype), kind=kind, names=KL_NAMES,
                          shape=(2, 3))
            answer.expect_close(ctx, answer.value, torch.tensor(values, dtype=dtype),
                                f"kind={kind!r} should give {formulas[kind]} with d = logp - ref_logp")
    answer = call(ctx, "kl_estimate", logp, ref_logp, names=KL_NAMES, shape=(2, 3))
    answer.expect_close(ctx, answer.value, torch.tensor(expected["k1"]), "the default kind should be 'k1'")
    for unknown in ("k4", "K1"):  # kind is case-sensitive
        expect_unknown_kind_rejected(ctx, "kl_estimate", (logp, ref_logp), {"kind": unknown}, KL_NAMES)


def expect_unknown_kind_rejected(ctx: Context, function: str, args: tuple, kwargs: dict,
                                 names: tuple[str, ...]) -> None:
    """Fail unless the call, with a kind the contract rejects, raises ValueError, and answers with kind 'k1'."""
    kind = kwargs.get("kind", args[-1])
    neighbour = (args, {**kwargs, "kind": "k1"}) if "kind" in kwargs else (args[:-1] + ("k1",), kwargs)
    expect_value_error(ctx, function, args, kwargs, names, f"{function} should raise ValueError for an unknown "
                       f"kind {kind!r} (kind is one of 'k1', 'k2', 'k3', case-sensitive)", neighbour=neighbour)


@check("kl.shaped_known_values",
       "shaped_rewards on a hand-computed ragged batch: score on the last generated token, KL penalty on all",
       functions=("shaped_rewards",))
@public
def shaped_known_values(ctx: Context) -> None:
    # Row 0 ends with <eos> at column 1, row 1 used the whole budget (no <eos>), row 2 is one token long.
    # Padded positions hold garbage on purpose.
    mask = torch.tensor([[1.0, 1.0, 0.0, 0.0], [1.0, 1.0, 1.0, 1.0], [1.0, 0.0, 0.0, 0.0]])
    logp = torch.tensor([[-1.0, -2.0, 9.0, 9.0], [-0.5, -1.0, -1.5, -2.0], [-3.0, 9.0, 9.0, 9.0]])
    ref_logp = torch.tensor([[-1.5, -1.0, 9.0, -9.0], [-0.5, -2.0, -1.0, -1.0], [-2.0, 7.0, 7.0, 7.0]])
    scores = torch.tensor([1.0, -2.0, 0.5])
    # d = logp - ref_logp on generated tokens: [[0.5, -1], [0, 1, -0.5, -1], [-1]]
    cases = [
        (scores, 0.0, "k1", [[0.0, 1.0], [0.0, 0.0, 0.0, -2.0], [0.5]],
         "with beta = 0 the rewards should be 0 except the score on the last generated token "
         "(column T-1 when the row has no padding)"),
        (torch.zeros(3), 0.5, "k1", [[-0.25, 0.5], [0.0, -0.5, 0.25, 0.5], [0.5]],
         "with scores = 0 the rewards should be -beta * kl_estimate(logp, ref_logp, kind) on every generated token"),
        (scores, 0.1, "k2", [[-0.0125, -0.05 + 1.0], [0.0, -0.05, -0.0125, -0.05 - 2.0], [-0.05 + 0.5]],
         "the rewards should be -beta * k2 on every generated token plus the score on the last one"),
        (scores, 1.0, "k3", [[-(math.exp(-0.5) - 0.5), -(E - 2) + 1.0],
                             [0.0, -(1 / E), -(math.exp(0.5) - 1.5), -(E - 2) - 2.0], [-(E - 2) + 0.5]],
         "the rewards should be -beta * k3 on every generated token plus the score on the last one"),
    ]
    for i, (s, beta, kind, rows, message) in enumerate(cases):
        dtype = torch.float64 if i % 2 else torch.float32
        expected = torch.zeros(3, 4, dtype=dtype)
        for b, row in enumerate(rows):
            expected[b, :len(row)] = torch.tensor(row, dtype=dtype)
        answer = call(ctx, "shaped_rewards", s.to(dtype), logp.to(dtype), ref_logp.to(dtype), mask.to(dtype),
                      beta, kind, names=SHAPED_NAMES, shape=(3, 4))
        answer.expect_close(ctx, answer.value, expected, message, mask)
