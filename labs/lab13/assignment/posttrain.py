"""Lab 13: GRPO and DPO, post-training TinyLM on its verifiable addition task.

Implement the five functions below. Each is a few lines of torch, and each is a place where public
GRPO/DPO code has gone wrong. Shapes:
    B  responses (B = N * G for GRPO: N prompts, G sampled answers each),  T  response length (tokens),
    P  preference pairs (DPO, IPO).

The contract, for every function (the grader tests exactly this, on inputs from all of it):
- Sizes: B, P >= 1 and T >= 1 (T = 1 and single rows are valid; rows may be long, e.g. 48 tokens).
- Dtypes: the float inputs of one call are all float32 or all float64 (`mask` too); return tensors in
  that dtype.
- `mask` is (B, T) with 1 on generated response tokens (including <eos>) and 0 on the padding after
  them. It is always a prefix of each row, and every row has at least one generated token. A row may
  have no padding at all (the response used the whole budget).
- Padded positions (mask == 0) hold garbage: finite numbers that mean nothing (log-probs there are
  still in [-40, 0]), never inf or NaN. They must not change any output.
- Values: token log-probs in [-40, 0], so log-ratios reach +-40 (ratios far outside any clip range);
  rewards in [-10, 10]; advantages in [-10, 10]; sequence log-probs of DPO/IPO in [-200, 0], so
  preference margins reach +-400 (a stable loss gives ~400 beta, not inf, and ~0, not nan).
- Gradients: the losses must be differentiable with respect to the inputs their docstring says
  require grad (the others never do). group_advantages is called under torch.no_grad().
- Arguments the contract rejects (an unknown `aggregation`, a batch that is not whole groups) raise
  ValueError.
- Pure functions: never modify an input, same answer to the same input every time.

Run the public tests with `python -m pytest tests`, and the experiments with `python run_experiments.py`.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F


# ============================================================ Part group_adv: group-relative advantages
def group_advantages(rewards: torch.Tensor, group_size: int, normalize_std: bool = True,
                     eps: float = 1e-6) -> torch.Tensor:
    """GRPO's advantages: each reward relative to the other answers to the same prompt.

    rewards: (B,) the verifiable reward of each response, B = N * group_size, grouped consecutively:
    rows [g * group_size, (g + 1) * group_size) answer prompt g. group_size >= 2 (an int).
    B not a multiple of group_size raises ValueError.
        A_i = r_i - mean_g                          (normalize_std=False: Dr. GRPO)
        A_i = (r_i - mean_g) / (std_g + eps)        (normalize_std=True: GRPO)
    mean_g and std_g over the group of i; std_g is the sample std (Bessel's correction, divide by
    group_size - 1: torch.std's default). eps in [1e-8, 1e-2]. Returns (B,).
    A group whose rewards are all equal has std_g = 0 and advantages exactly 0 (it teaches nothing).
    Mind the rounding: in float32 the mean of equal rewards is often not exactly their value (about 1
    group in 5: three rewards of 5.37 have a computed mean one rounding error away), and dividing
    that error by std_g + eps = eps turns it into an advantage of about 0.3. Give such a group 0
    explicitly (where its max equals its min), or centre on its first reward before averaging
    (r_i - mean_g = (r_i - r_first) - mean(r - r_first), exact there).
    """
    # TODO: implement group_advantages (see the docstring above).
    raise NotImplementedError("group_advantages is not implemented yet")


# ============================================================ Part grpo_loss: the clipped objective with a KL
AGGREGATIONS = ("token_mean", "seq_mean_token_mean", "token_sum_norm")


def grpo_policy_loss(logp: torch.Tensor, old_logp: torch.Tensor, ref_logp: torch.Tensor,
                     advantages: torch.Tensor, mask: torch.Tensor, clip_eps: float = 0.2,
                     beta: float = 0.04, aggregation: str = "token_mean") -> torch.Tensor:
    """GRPO's loss (to minimise): PPO's clipped surrogate with a k3 KL penalty to the reference.

    logp: (B, T) log-probs of the sampled tokens under the current policy (requires grad).
    old_logp, ref_logp, mask: (B, T), from the rollout and the frozen reference (no grad).
    advantages: (B,) one advantage per response, the same for each of its tokens (no grad).
    0 < clip_eps < 1, beta in [0, 1]. Per token (A = advantages[b]):
        ratio = exp(logp - old_logp)
        kl    = exp(ref_logp - logp) - (ref_logp - logp) - 1       (k3: >= 0, exactly, no clamping)
        l     = -min(ratio * A, clip(ratio, 1 - clip_eps, 1 + clip_eps) * A) + beta * kl
    aggregation (exactly one of these; anything else raises ValueError):
        "token_mean"           sum of l over all mask == 1 tokens / their number (DAPO)
        "seq_mean_token_mean"  mean over rows of (sum of l over the row's tokens / its length) (GRPO)
        "token_sum_norm"       sum of l over all mask == 1 tokens / (B * T): a constant that does not
                               depend on the lengths, T the generation budget (Dr. GRPO)
    Returns a scalar.
    """
    # TODO: implement grpo_policy_loss (see the docstring above).
    raise NotImplementedError("grpo_policy_loss is not implemented yet")


# ============================================================ Part dpo: preference optimisation
def sequence_logprob(token_logp: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """The log-probability of each whole response: the sum of its tokens' log-probs.

    token_logp: (B, T) per-token log-probs (may require grad: the result must stay differentiable).
    mask: (B, T) as in the contract. Returns (B,): sum over t of token_logp where mask == 1
    (a sum, not a mean: log p(y | x) = sum_t log p(y_t | x, y_<t)). Padding garbage must not count.
    """
    # TODO: implement sequence_logprob (see the docstring above).
    raise NotImplementedError("sequence_logprob is not implemented yet")


def dpo_loss(policy_chosen: torch.Tensor, policy_rejected: torch.Tensor, ref_chosen: torch.Tensor,
             ref_rejected: torch.Tensor, beta: float = 0.1) -> torch.Tensor:
    """The DPO loss (Rafailov et al., 2023) on P preference pairs.

    policy_chosen, policy_rejected: (P,) sequence log-probs of the preferred and the rejected response
    under the policy (both require grad); ref_chosen, ref_rejected: (P,) the same under the frozen
    reference (no grad). beta in (0, 10].
        h = (policy_chosen - ref_chosen) - (policy_rejected - ref_rejected)
    Returns a scalar: the mean over pairs of  -log sigmoid(beta * h).
    Stable for any margin: beta * h = -400 gives about 400 (not inf), +400 about 0 (not nan).
    """
    # TODO: implement dpo_loss (see the docstring above).
    raise NotImplementedError("dpo_loss is not implemented yet")


# ============================================================ Part ipo: a preference loss with a finite target
def ipo_loss(policy_chosen: torch.Tensor, policy_rejected: torch.Tensor, ref_chosen: torch.Tensor,
             ref_rejected: torch.Tensor, beta: float = 0.1) -> torch.Tensor:
    """The IPO loss (Azar et al., 2023): regress the preference margin to 1 / (2 beta).

    Arguments as in dpo_loss (beta, IPO's tau, in (0, 10]), h as there.
    Returns a scalar: the mean over pairs of  (h - 1 / (2 * beta)) ** 2.
    Unlike DPO's, its optimum is a finite margin: pairs already far apart are pulled back.
    """
    # TODO: implement ipo_loss (see the docstring above).
    raise NotImplementedError("ipo_loss is not implemented yet")
