"""Public checks of bradley_terry_loss and ranking_loss: hand-computed examples, no reference needed."""

from __future__ import annotations

import math

import torch

from autograder.checks import Context, check
from autograder.checks.tools import Answer, call, fmt, public

BT_NAMES = ("r_better", "r_worse")
RANKING_NAMES = ("rewards", "ranking")
DTYPES = (torch.float32, torch.float64)


def pair_loss(gap: float) -> float:
    """-log sigmoid(gap) = log(1 + exp(-gap)), by hand."""
    return math.log1p(math.exp(-gap)) if gap > -30 else -gap + math.log1p(math.exp(gap))


def mean_pair_loss(gaps: list[float], dtype: torch.dtype) -> torch.Tensor:
    return torch.tensor(sum(pair_loss(g) for g in gaps) / len(gaps), dtype=dtype)


def bt(ctx: Context, r_better: torch.Tensor, r_worse: torch.Tensor, grad: tuple[int, ...] = ()) -> Answer:
    return call(ctx, "bradley_terry_loss", r_better, r_worse, grad=grad, names=BT_NAMES, shape=())


def expect_grads(answer: Answer, names: tuple[str, ...]) -> list[torch.Tensor]:
    """The requested gradients, failing when one is missing (the input was detached) or not finite."""
    for g, name in zip(answer.grads, names):
        if g is None:
            raise answer.fail(f"no gradient reached {name}: the loss must stay differentiable in its inputs "
                              "(was an input detached, or the loss rebuilt with torch.tensor / .item()?)",
                              expected=f"a gradient w.r.t. {name}", got="none")
        if not torch.isfinite(g).all():
            raise answer.fail(f"the gradient with respect to {name} is not finite: a step of the loss overflows "
                              "(torch.where differentiates both of its branches)", got=fmt(g))
    return answer.grads


@check("rm_loss.bt_known_values", "bradley_terry_loss on hand-computed pairs (equal scores give log 2)",
       functions=("bradley_terry_loss",))
@public
def bt_known_values(ctx: Context) -> None:
    for dtype in DTYPES:
        scores = torch.tensor([0.0, 3.0, -2.5], dtype=dtype)
        answer = bt(ctx, scores, scores.clone())
        answer.expect_close(ctx, answer.value, torch.tensor(math.log(2), dtype=dtype),
                            "equal rewards should give a loss of log 2 = 0.6931")
        # gaps r_better - r_worse = [1, -1, 3, 0]
        r_better = torch.tensor([1.0, 0.0, 2.0, 0.5], dtype=dtype)
        answer = bt(ctx, r_better, torch.tensor([0.0, 1.0, -1.0, 0.5], dtype=dtype))
        answer.expect_close(ctx, answer.value, mean_pair_loss([1.0, -1.0, 3.0, 0.0], dtype),
                            "the loss should be the mean over pairs of -log sigmoid(r_better - r_worse)")


@check("rm_loss.bt_stable", "bradley_terry_loss is finite, right and differentiable for gaps of +-200",
       functions=("bradley_terry_loss",))
@public
def bt_stable(ctx: Context) -> None:
    for dtype in DTYPES:
        for gap, loss, slope in ((200.0, 0.0, 0.0), (-200.0, 200.0, -1.0)):
            # d loss / d r_better = -sigmoid(-gap) = slope,  d loss / d r_worse = -slope
            r_better, r_worse = torch.tensor([gap / 2], dtype=dtype), torch.tensor([-gap / 2], dtype=dtype)
            answer = bt(ctx, r_better, r_worse, grad=(0, 1))
            answer.expect_close(ctx, answer.value, torch.tensor(loss, dtype=dtype),
                                f"a gap r_better - r_worse of {gap:+g} should give a loss of about {loss:g} "
                                "(use a numerically stable log-sigmoid)")
            g_better, g_worse = expect_grads(answer, BT_NAMES)
            answer.expect_close(ctx, torch.cat([g_better, g_worse]), torch.tensor([slope, -slope], dtype=dtype),
                                f"wrong gradient at a gap of {gap:+g}: d loss/d r_better should be "
                                f"-sigmoid(-gap) = {slope:g} (shown: the gradients of r_better and r_worse)")


@check("rm_loss.ranking_known_values", "ranking_loss on hand-computed rankings (K = 2 and K = 3)",
       functions=("ranking_loss",))
@public
def ranking_known_values(ctx: Context) -> None:
    answer = call(ctx, "ranking_loss", torch.tensor([[0.0, 1.0]]), torch.tensor([[1, 0]]),
                  names=RANKING_NAMES, shape=())
    answer.expect_close(ctx, answer.value, mean_pair_loss([1.0], torch.float32),
                        "with K = 2 the ranking loss is -log sigmoid(r_best - r_worst)")
    # row 0: order (best first) 2, 0, 1 -> rewards 2, 0.5, -1: pair gaps 1.5, 3, 1.5
    # row 1: order 1, 2, 0 -> rewards 3, 0, 1: pair gaps 3, 2, -1
    for dtype in DTYPES:
        rewards = torch.tensor([[0.5, -1.0, 2.0], [1.0, 3.0, 0.0]], dtype=dtype)
        ranking = torch.tensor([[2, 0, 1], [1, 2, 0]])
        answer = call(ctx, "ranking_loss", rewards, ranking, names=RANKING_NAMES, shape=())
        answer.expect_close(ctx, answer.value, mean_pair_loss([1.5, 3.0, 1.5, 3.0, 2.0, -1.0], dtype),
                            "the loss should be the mean of -log sigmoid(r_a - r_b) over all K(K-1)/2 pairs "
                            "(a ranked above b; ranking lists response indices best first) of every prompt")
