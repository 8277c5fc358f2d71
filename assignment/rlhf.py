"""Lab 12: the four core pieces of RLHF.

Implement the seven functions below. Each one is small (a few lines of torch), but each is
a place where real RLHF code has gone wrong. Shapes:
    B  batch size (responses),  T  response length (tokens),  N  prompts,  K  responses per prompt.

The contract, for every function (the grader tests exactly this, on inputs from all of it):
- Sizes: B, N >= 1 and T >= 1 (T = 1 and single rows are valid; rows may be long, e.g. 48 tokens).
- Dtypes: the float inputs of one call are all float32 or all float64 (`mask` too); return tensors
  in that dtype. `ranking` is int64.
- `mask` is (B, T) with 1 on generated response tokens (including <eos>) and 0 on the padding after
  them. It is always a prefix of each row, and every row has at least one generated token (there are
  no all-zero rows). A row may have no padding at all (the response used the whole budget).
- Padded positions (mask == 0) hold garbage: finite numbers that mean nothing (up to +-1000; log-probs
  there are still in [-40, 0]), never inf or NaN. They must not change any output at a generated
  position, nor any loss. Outputs at padded positions are ignored by every caller (the training
  loop zeroes them), so anything is accepted there, even inf or NaN.
- Values at generated positions: log-probs (logp, old_logp, ref_logp) in [-40, 0], so log-ratios
  such as logp - old_logp reach +-40 (ratios far outside any clip range); rewards, values,
  advantages and returns in [-10, 10]; reward-model scores in [-50, 50] (rewards of the reward-model
  losses in [-1000, 1000]).
- Gradients: the losses must be differentiable with respect to the inputs the docstring says
  require grad (the others never do). compute_gae, kl_estimate and shaped_rewards are called under
  torch.no_grad() on inputs without grad: their outputs may or may not carry a graph (both are
  accepted), and detaching inside them is allowed but never needed.
- Arguments the contract rejects (an unknown `kind`) raise ValueError.
- Pure functions: never modify an input (no in-place write such as `d = logp; d -= ref_logp`, which
  changes the caller's tensor: in run_experiments.py the rollout's old_logp), and give the same answer
  to the same input every time (no randomness, no state kept between calls). The grader checks both.

Run the public tests with `python -m pytest tests`, the self-check with `python self_check.py`,
and the experiments with `python run_experiments.py`.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F


# ============================================================ Part rm_loss: the reward model loss
def bradley_terry_loss(r_better: torch.Tensor, r_worse: torch.Tensor) -> torch.Tensor:
    """Bradley-Terry loss of a reward model on preference pairs.

    r_better, r_worse: (P,) rewards of the preferred and the rejected response of P >= 1 pairs, in
    [-1000, 1000] (ties allowed); the loss must be differentiable in both (they require grad).
    Returns a scalar: the mean over pairs of  -log sigmoid(r_better - r_worse).

    It must be numerically stable for any gap: a gap of -200 gives a loss of about 200 (not inf),
    and a gap of +200 gives about 0 (not nan). Hint: torch has a stable log-sigmoid.
    """
    # TODO: implement bradley_terry_loss (see the docstring above).
    raise NotImplementedError("bradley_terry_loss is not implemented yet")


def ranking_loss(rewards: torch.Tensor, ranking: torch.Tensor) -> torch.Tensor:
    """InstructGPT's reward-model loss on K-way rankings.

    rewards: (N, K) reward of each of the K responses to each of N prompts.
    ranking: (N, K) long, the labeler's order best first: ranking[n, 0] is the index (into
             rewards[n]) of the best response, ranking[n, K-1] the worst. Each row is a
             permutation of 0..K-1 (every response ranked once, no ties), K >= 2.
    rewards requires grad: the loss must be differentiable in it.
    Every one of the K(K-1)/2 pairs (a ranked above b) of each prompt contributes
    -log sigmoid(r_a - r_b). Returns a scalar: the mean over all pairs of all prompts.
    """
    # TODO: implement ranking_loss (see the docstring above).
    raise NotImplementedError("ranking_loss is not implemented yet")


# ============================================================ Part gae: advantages
def compute_gae(rewards: torch.Tensor, values: torch.Tensor, mask: torch.Tensor,
                gamma: float = 1.0, lam: float = 0.95) -> tuple[torch.Tensor, torch.Tensor]:
    """Generalized Advantage Estimation over each response, computed backwards in time.

    rewards, values, mask: (B, T). values[:, t] is V(s_t), the state in which token t was chosen.
    gamma, lam: floats in [0, 1] (both bounds allowed).
        delta_t = r_t + gamma * V_{t+1} - V_t      (V_{t+1} = 0 after the last generated token)
        A_t     = delta_t + gamma * lam * A_{t+1}  (A_{t+1} = 0 after the last generated token)
    Returns (advantages, returns), both (B, T), with returns = advantages + values.
    Do not whiten the advantages here (the training loop does that).
    """
    # TODO: implement compute_gae (see the docstring above).
    raise NotImplementedError("compute_gae is not implemented yet")


# ============================================================ Part ppo_clip: the clipped objective
def ppo_policy_loss(logp: torch.Tensor, old_logp: torch.Tensor, advantages: torch.Tensor,
                    mask: torch.Tensor, clip_eps: float = 0.2) -> torch.Tensor:
    """PPO's clipped surrogate policy loss (to minimise).

    logp: (B, T) log-probs of the sampled tokens under the current policy (requires grad).
    old_logp, advantages, mask: (B, T), from the rollout (no grad). 0 < clip_eps < 1.
        ratio = exp(logp - old_logp)
        per token: min(ratio * A, clip(ratio, 1 - clip_eps, 1 + clip_eps) * A)
    Returns a scalar: minus the mean of that over all mask == 1 tokens of the batch
    (one token-level mean, not a mean of per-sequence means).
    """
    # TODO: implement ppo_policy_loss (see the docstring above).
    raise NotImplementedError("ppo_policy_loss is not implemented yet")


def ppo_value_loss(values: torch.Tensor, old_values: torch.Tensor, returns: torch.Tensor,
                   mask: torch.Tensor, clip_eps: float = 0.2) -> torch.Tensor:
    """Clipped value loss (to minimise).

    values: (B, T) current critic outputs (requires grad); old_values, returns, mask: (B, T) (no grad).
    0 < clip_eps < 1.
        v_clip = old_values + clip(values - old_values, -clip_eps, clip_eps)
    Returns a scalar: 0.5 * the token-level masked mean of
        max((values - returns)^2, (v_clip - returns)^2).
    """
    # TODO: implement ppo_value_loss (see the docstring above).
    raise NotImplementedError("ppo_value_loss is not implemented yet")


# ============================================================ Part kl: the KL penalty
def kl_estimate(logp: torch.Tensor, ref_logp: torch.Tensor, kind: str = "k1") -> torch.Tensor:
    """Per-token estimate of KL(policy || reference) at tokens sampled from the policy.

    logp, ref_logp: (B, T) log-probs of the sampled tokens under the policy and the reference.
    With d = logp - ref_logp:   k1 = d,   k2 = d^2 / 2,   k3 = exp(-d) - 1 + d, exactly (no clamping:
    |d| reaches 40). Every position counts (there is no mask).
    kind is exactly "k1", "k2" or "k3" (case-sensitive: "K1" is unknown). Returns (B, T).
    An unknown `kind` raises ValueError (not NotImplementedError: the argument is wrong, not the code).
    """
    # TODO: implement kl_estimate (see the docstring above).
    raise NotImplementedError("kl_estimate is not implemented yet")


def shaped_rewards(scores: torch.Tensor, logp: torch.Tensor, ref_logp: torch.Tensor,
                   mask: torch.Tensor, beta: float, kind: str = "k1") -> torch.Tensor:
    """Per-token rewards for PPO: a KL penalty on every token, the RM score on the last one.

    scores: (B,) reward-model score of each response. logp, ref_logp, mask: (B, T), no grad (logp
    comes from the rollout: no need to detach it). beta in [0, 1]; kind as in kl_estimate.
    Returns (B, T): -beta * kl_estimate(logp, ref_logp, kind) on every generated token, plus
    scores[b] added, unchanged (no clipping, no penalty), on the last generated token of row b
    (column T-1 when the response used the whole budget without <eos>).
    """
    # TODO: implement shaped_rewards (see the docstring above).
    raise NotImplementedError("shaped_rewards is not implemented yet")
