"""Known mistakes and correct variants of ppo_policy_loss and ppo_value_loss (see bank/__init__.py)."""

from __future__ import annotations

import torch

from autograder.lab.bank import mistake, variant

# ------------------------------------------------------------------ ppo_policy_loss: mistakes


@mistake("ppo_clip", "ppo_policy_loss", "max_not_min",
         hint="the surrogate takes the min (the pessimistic bound) of the clipped and unclipped terms, not the max")
def max_not_min(logp, old_logp, advantages, mask, clip_eps=0.2):
    ratio = torch.exp(logp - old_logp)
    clipped = torch.clamp(ratio, 1 - clip_eps, 1 + clip_eps) * advantages
    return -(torch.maximum(ratio * advantages, clipped) * mask).sum() / mask.sum()


@mistake("ppo_clip", "ppo_policy_loss", "missing_minus",
         hint="the loss is minus the clipped objective: minimising it must increase the objective")
def missing_minus(logp, old_logp, advantages, mask, clip_eps=0.2):
    ratio = torch.exp(logp - old_logp)
    clipped = torch.clamp(ratio, 1 - clip_eps, 1 + clip_eps) * advantages
    return (torch.minimum(ratio * advantages, clipped) * mask).sum() / mask.sum()


@mistake("ppo_clip", "ppo_policy_loss", "clip_product",
         hint="clip the ratio to [1 - clip_eps, 1 + clip_eps] and then multiply by A; do not clip ratio * A")
def clip_product(logp, old_logp, advantages, mask, clip_eps=0.2):
    ratio = torch.exp(logp - old_logp)
    clipped = torch.clamp(ratio * advantages, 1 - clip_eps, 1 + clip_eps)
    return -(torch.minimum(ratio * advantages, clipped) * mask).sum() / mask.sum()


@mistake("ppo_clip", "ppo_policy_loss", "ratio_of_logprobs",
         hint="the ratio of probabilities is exp(logp - old_logp), not logp / old_logp")
def ratio_of_logprobs(logp, old_logp, advantages, mask, clip_eps=0.2):
    ratio = logp / old_logp
    clipped = torch.clamp(ratio, 1 - clip_eps, 1 + clip_eps) * advantages
    return -(torch.minimum(ratio * advantages, clipped) * mask).sum() / mask.sum()


@mistake("ppo_clip", "ppo_policy_loss", "ratio_inverted",
         hint="the ratio is new over old: exp(logp - old_logp), not exp(old_logp - logp)")
def ratio_inverted(logp, old_logp, advantages, mask, clip_eps=0.2):
    ratio = torch.exp(old_logp - logp)
    clipped = torch.clamp(ratio, 1 - clip_eps, 1 + clip_eps) * advantages
    return -(torch.minimum(ratio * advantages, clipped) * mask).sum() / mask.sum()


@mistake("ppo_clip", "ppo_policy_loss", "mean_over_padding",
         hint="divide by the number of mask == 1 tokens, not by B * T (padding must not count)")
def mean_over_padding(logp, old_logp, advantages, mask, clip_eps=0.2):
    ratio = torch.exp(logp - old_logp)
    clipped = torch.clamp(ratio, 1 - clip_eps, 1 + clip_eps) * advantages
    return -(torch.minimum(ratio * advantages, clipped) * mask).mean()


@mistake("ppo_clip", "ppo_policy_loss", "mean_of_sequence_means",
         hint="take one mean over all mask == 1 tokens of the batch, not a mean of per-sequence means")
def mean_of_sequence_means(logp, old_logp, advantages, mask, clip_eps=0.2):
    ratio = torch.exp(logp - old_logp)
    clipped = torch.clamp(ratio, 1 - clip_eps, 1 + clip_eps) * advantages
    per_token = torch.minimum(ratio * advantages, clipped) * mask
    return -(per_token.sum(1) / mask.sum(1)).mean()


@mistake("ppo_clip", "ppo_policy_loss", "sum_not_mean",
         hint="the loss is a mean over the mask == 1 tokens, not a sum")
def sum_not_mean(logp, old_logp, advantages, mask, clip_eps=0.2):
    ratio = torch.exp(logp - old_logp)
    clipped = torch.clamp(ratio, 1 - clip_eps, 1 + clip_eps) * advantages
    return -(torch.minimum(ratio * advantages, clipped) * mask).sum()


@mistake("ppo_clip", "ppo_policy_loss", "no_clipping",
         hint="the ratio is never clipped: take min(ratio * A, clip(ratio, 1 - clip_eps, 1 + clip_eps) * A)")
def no_clipping(logp, old_logp, advantages, mask, clip_eps=0.2):
    ratio = torch.exp(logp - old_logp)
    return -(ratio * advantages * mask).sum() / mask.sum()


@mistake("ppo_clip", "ppo_policy_loss", "clip_without_min",
         hint="clipping alone is not enough: take the min of the clipped and the unclipped terms")
def clip_without_min(logp, old_logp, advantages, mask, clip_eps=0.2):
    ratio = torch.exp(logp - old_logp)
    return -(torch.clamp(ratio, 1 - clip_eps, 1 + clip_eps) * advantages * mask).sum() / mask.sum()


@mistake("ppo_clip", "ppo_policy_loss", "clip_log_ratio",
         hint="clip the ratio itself to [1 - clip_eps, 1 + clip_eps], not log(ratio) to [-clip_eps, clip_eps]")
def clip_log_ratio(logp, old_logp, advantages, mask, clip_eps=0.2):
    log_ratio = logp - old_logp
    clipped = torch.exp(torch.clamp(log_ratio, -clip_eps, clip_eps)) * advantages
    return -(torch.minimum(torch.exp(log_ratio) * advantages, clipped) * mask).sum() / mask.sum()


@mistake("ppo_clip", "ppo_policy_loss", "fixed_clip_eps",
         hint="use the clip_eps argument instead of a fixed 0.2")
def fixed_clip_eps(logp, old_logp, advantages, mask, clip_eps=0.2):
    ratio = torch.exp(logp - old_logp)
    clipped = torch.clamp(ratio, 0.8, 1.2) * advantages
    return -(torch.minimum(ratio * advantages, clipped) * mask).sum() / mask.sum()


@mistake("ppo_clip", "ppo_policy_loss", "detached_logp", says="detached",
         hint="logp must stay in the autograd graph: no .detach(), .item() or torch.no_grad() on it")
def detached_logp(logp, old_logp, advantages, mask, clip_eps=0.2):
    ratio = torch.exp(logp.detach() - old_logp)
    clipped = torch.clamp(ratio, 1 - clip_eps, 1 + clip_eps) * advantages
    return -(torch.minimum(ratio * advantages, clipped) * mask).sum() / mask.sum()


# ------------------------------------------------------------------ ppo_policy_loss: correct variants


@variant("ppo_clip", "ppo_policy_loss", "where_formulation")
def where_formulation(logp, old_logp, advantages, mask, clip_eps=0.2):
    ratio = torch.exp(logp - old_logp)
    unclipped = ratio * advantages
    clipped = torch.clamp(ratio, 1 - clip_eps, 1 + clip_eps) * advantages
    objective = torch.where(unclipped < clipped, unclipped, clipped)
    keep = mask.bool()
    return -objective[keep].mean()


@variant("ppo_clip", "ppo_policy_loss", "negated_max_mask_first")
def negated_max_mask_first(logp, old_logp, advantages, mask, clip_eps=0.2):
    advantages = advantages * mask  # masked before the min: padded tokens contribute exactly 0
    ratio = torch.exp(logp - old_logp)
    a = ratio * advantages
    b = torch.clamp(ratio, 1 - clip_eps, 1 + clip_eps) * advantages
    return -(-torch.max(-a, -b)).sum() / mask.sum()


@variant("ppo_clip", "ppo_policy_loss", "negated_losses")
def negated_losses(logp, old_logp, advantages, mask, clip_eps=0.2):
    ratio = (logp - old_logp).exp()
    losses = -advantages * ratio
    losses_clipped = -advantages * ratio.clamp(1.0 - clip_eps, 1.0 + clip_eps)
    per_token = torch.max(losses, losses_clipped)
    return torch.where(mask.bool(), per_token, torch.zeros_like(per_token)).sum() / mask.sum()


@variant("ppo_clip", "ppo_policy_loss", "loops_float64")
def loops_float64(logp, old_logp, advantages, mask, clip_eps=0.2):
    total = torch.zeros((), dtype=torch.float64)
    count = 0
    B, T = logp.shape
    for b in range(B):
        for t in range(T):
            if mask[b, t] == 1:
                ratio = torch.exp(logp[b, t].double() - old_logp[b, t].double())
                a = advantages[b, t].double()
                clipped = min(max(ratio, torch.tensor(1 - clip_eps, dtype=torch.float64)),
                              torch.tensor(1 + clip_eps, dtype=torch.float64))
                total = total + torch.min(ratio * a, clipped * a)
                count += 1
    return (-total / count).to(logp.dtype)


# ------------------------------------------------------------------ ppo_value_loss: mistakes


@mistake("ppo_clip", "ppo_value_loss", "value_min_not_max",
         hint="the value loss takes the max (the pessimistic choice) of the clipped and unclipped errors, not the min")
def value_min_not_max(values, old_values, returns, mask, clip_eps=0.2):
    v_clip = old_values + torch.clamp(values - old_values, -clip_eps, clip_eps)
    best = torch.minimum((values - returns) ** 2, (v_clip - returns) ** 2)
    return 0.5 * (best * mask).sum() / mask.sum()


@mistake("ppo_clip", "ppo_value_loss", "value_missing_half",
         hint="the value loss is 0.5 * the mean of the squared errors: the factor 0.5 is missing")
def value_missing_half(values, old_values, returns, mask, clip_eps=0.2):
    v_clip = old_values + torch.clamp(values - old_values, -clip_eps, clip_eps)
    worst = torch.maximum((values - returns) ** 2, (v_clip - returns) ** 2)
    return (worst * mask).sum() / mask.sum()


@mistake("ppo_clip", "ppo_value_loss", "value_clip_around_returns",
         hint="clip the new values around old_values (the rollout's), not around the returns")
def value_clip_around_returns(values, old_values, returns, mask, clip_eps=0.2):
    v_clip = returns + torch.clamp(values - returns, -clip_eps, clip_eps)
    worst = torch.maximum((values - returns) ** 2, (v_clip - returns) ** 2)
    return 0.5 * (worst * mask).sum() / mask.sum()


@mistake("ppo_clip", "ppo_value_loss", "value_no_clipping",
         hint="the value loss also has a clipped term: max((V - R)^2, (V_clip - R)^2)")
def value_no_clipping(values, old_values, returns, mask, clip_eps=0.2):
    return 0.5 * (((values - returns) ** 2) * mask).sum() / mask.sum()


@mistake("ppo_clip", "ppo_value_loss", "value_old_in_unclipped",
         hint="the unclipped error is (values - returns)^2 with the current values, not old_values")
def value_old_in_unclipped(values, old_values, returns, mask, clip_eps=0.2):
    v_clip = old_values + torch.clamp(values - old_values, -clip_eps, clip_eps)
    worst = torch.maximum((old_values - returns) ** 2, (v_clip - returns) ** 2)
    return 0.5 * (worst * mask).sum() / mask.sum()


@mistake("ppo_clip", "ppo_value_loss", "value_mean_over_padding",
         hint="divide by the number of mask == 1 tokens, not by B * T (padding must not count)")
def value_mean_over_padding(values, old_values, returns, mask, clip_eps=0.2):
    v_clip = old_values + torch.clamp(values - old_values, -clip_eps, clip_eps)
    worst = torch.maximum((values - returns) ** 2, (v_clip - returns) ** 2)
    return 0.5 * (worst * mask).mean()


@mistake("ppo_clip", "ppo_value_loss", "value_detached", says="detached",
         hint="values must stay in the autograd graph: no .detach(), .item() or torch.no_grad() on them")
def value_detached(values, old_values, returns, mask, clip_eps=0.2):
    values = values.detach()
    v_clip = old_values + torch.clamp(values - old_values, -clip_eps, clip_eps)
    worst = torch.maximum((values - returns) ** 2, (v_clip - returns) ** 2)
    return 0.5 * (worst * mask).sum() / mask.sum()


# ------------------------------------------------------------------ ppo_value_loss: correct variants


@variant("ppo_clip", "ppo_value_loss", "clamp_between_bounds")
def clamp_between_bounds(values, old_values, returns, mask, clip_eps=0.2):
    v_clip = torch.max(torch.min(values, old_values + clip_eps), old_values - clip_eps)
    unclipped = (values - returns).pow(2)
    clipped = (v_clip - returns).pow(2)
    keep = mask.bool()
    return 0.5 * torch.where(unclipped > clipped, unclipped, clipped)[keep].mean()


@variant("ppo_clip", "ppo_value_loss", "value_loops_float64")
def value_loops_float64(values, old_values, returns, mask, clip_eps=0.2):
    terms = []
    for b in range(values.shape[0]):
        for t in range(values.shape[1]):
            if mask[b, t] > 0:
                v, old, ret = values[b, t].double(), old_values[b, t].double(), returns[b, t].double()
                v_clip = old + (v - old).clamp(-clip_eps, clip_eps)
                terms.append(torch.max((v - ret) ** 2, (v_clip - ret) ** 2))
    return (0.5 * torch.stack(terms).mean()).to(values.dtype)
