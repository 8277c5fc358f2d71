"""Public checks of grpo_policy_loss: one hand-computed example, under each aggregation."""

from __future__ import annotations

import math

import torch

from autograder.checks import Context, check
from autograder.checks.tools import call, public

from .common import GRPO_NAMES, expect_grad


def example() -> tuple:
    """(logp, old_logp, ref_logp, advantages, mask): row 0 has 3 generated tokens, row 1 has 2 (garbage after)."""
    ratio = torch.tensor([[1.5, 0.5, 1.0], [1.0, 1.1, 1.0]], dtype=torch.float64)
    old_logp = torch.tensor([[-1.0, -1.0, -2.0], [-0.5, -1.0, -30.0]], dtype=torch.float64)
    logp = old_logp + ratio.log()
    logp[1, 2] = -3.0
    ref_logp = logp.clone()
    ref_logp[0, 2] = -2.0 + math.log(2.0)   # ref_logp - logp = log 2 there, 0 at the other generated tokens
    ref_logp[1, 2] = -0.5
    advantages = torch.tensor([2.0, -1.0], dtype=torch.float64)
    mask = torch.tensor([[1.0, 1.0, 1.0], [1.0, 1.0, 0.0]], dtype=torch.float64)
    return logp, old_logp, ref_logp, advantages, mask


# clip_eps = 0.2, beta = 0.1. Per token -min(ratio * A, clip(ratio, 0.8, 1.2) * A) + beta * k3:
#   row 0 (A = 2): -min(3.0, 2.4) = -2.4 (clipped), -min(1.0, 1.6) = -1.0, -2.0 + 0.1 * (2 - log 2 - 1) = -1.969315
#   row 1 (A = -1): -min(-1.0, -1.0) = 1.0, -min(-1.1, -1.1) = 1.1
# sum -3.269315 over 5 tokens; row sums -5.369315 (3 tokens) and 2.1 (2 tokens); B * T = 6.
# d l / d logp = -ratio * A where the unclipped term is the min (0 where clipped), + beta * (1 - exp(ref - logp)).
EXPECTED = {
    "token_mean": (-3.2693147 / 5, [[0.0, -1.0 / 5, -2.1 / 5], [1.0 / 5, 1.1 / 5, 0.0]]),
    "seq_mean_token_mean": ((-5.3693147 / 3 + 2.1 / 2) / 2, [[0.0, -1.0 / 6, -2.1 / 6], [1.0 / 4, 1.1 / 4, 0.0]]),
    "token_sum_norm": (-3.2693147 / 6, [[0.0, -1.0 / 6, -2.1 / 6], [1.0 / 6, 1.1 / 6, 0.0]]),
}
SAYS = {"token_mean": "one mean over all mask == 1 tokens of the batch",
        "seq_mean_token_mean": "the mean over rows of each row's token mean",
        "token_sum_norm": "the sum over mask == 1 tokens divided by B * T (a constant, T the budget)"}


@check("grpo_loss.known_values", "grpo_policy_loss and its gradient on a hand-computed example, each aggregation",
       functions=("grpo_policy_loss",))
@public
def known_values(ctx: Context) -> None:
    for aggregation, (loss, grad) in EXPECTED.items():
        answer = call(ctx, "grpo_policy_loss", *example(), clip_eps=0.2, beta=0.1, aggregation=aggregation,
                      grad=(0,), names=GRPO_NAMES, shape=())
        answer.expect_close(ctx, answer.value, torch.tensor(loss, dtype=torch.float64),
                            f"the loss with aggregation={aggregation!r} differs from the hand-computed one "
                            f"({SAYS[aggregation]})")
        expect_grad(ctx, answer, 0, torch.tensor(grad, dtype=torch.float64), "logp",
                    f"d loss / d logp with aggregation={aggregation!r} differs from the hand-computed one "
                    "(0 where the ratio is clipped; the k3 term adds beta * (1 - exp(ref_logp - logp)))")
