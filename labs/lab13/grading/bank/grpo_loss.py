"""Known mistakes and correct variants of grpo_policy_loss."""

from __future__ import annotations

import torch

from autograder.lab.bank import mistake, variant

from . import sources


def _agg(per_token, mask, aggregation):
    if aggregation == "token_mean":
        return per_token.sum() / mask.sum()
    if aggregation == "seq_mean_token_mean":
        return (per_token.sum(1) / mask.sum(1)).mean()
    if aggregation == "token_sum_norm":
        return per_token.sum() / mask.numel()
    raise ValueError(aggregation)


@mistake("grpo_loss", "grpo_policy_loss", "k3_reversed",
         hint="k3 is exp(ref_logp - logp) - (ref_logp - logp) - 1: the reference over the policy, not the other way")
def k3_reversed(logp, old_logp, ref_logp, advantages, mask, clip_eps=0.2, beta=0.04, aggregation="token_mean"):
    ratio = torch.exp(logp - old_logp)
    a = advantages[:, None]
    surrogate = torch.minimum(ratio * a, torch.clamp(ratio, 1 - clip_eps, 1 + clip_eps) * a)
    d = logp - ref_logp
    return _agg((-surrogate + beta * (torch.exp(d) - d - 1)) * mask, mask, aggregation)


@mistake("grpo_loss", "grpo_policy_loss", "k1_not_k3",
         hint="the KL term is the k3 estimate exp(ref_logp - logp) - (ref_logp - logp) - 1, not logp - ref_logp (k1)")
def k1_not_k3(logp, old_logp, ref_logp, advantages, mask, clip_eps=0.2, beta=0.04, aggregation="token_mean"):
    ratio = torch.exp(logp - old_logp)
    a = advantages[:, None]
    surrogate = torch.minimum(ratio * a, torch.clamp(ratio, 1 - clip_eps, 1 + clip_eps) * a)
    return _agg((-surrogate + beta * (logp - ref_logp)) * mask, mask, aggregation)


@mistake("grpo_loss", "grpo_policy_loss", "k3_clamped", source=sources.VERL_K3_CLAMP,
         hint="the k3 term is exact here: do not clamp ref_logp - logp or the estimate")
def k3_clamped(logp, old_logp, ref_logp, advantages, mask, clip_eps=0.2, beta=0.04, aggregation="token_mean"):
    ratio = torch.exp(logp - old_logp)
    a = advantages[:, None]
    surrogate = torch.minimum(ratio * a, torch.clamp(ratio, 1 - clip_eps, 1 + clip_eps) * a)
    d = torch.clamp(ref_logp - logp, -20, 20)
    kl = torch.clamp(torch.exp(d) - d - 1, -10, 10)
    return _agg((-surrogate + beta * kl) * mask, mask, aggregation)


@mistake("grpo_loss", "grpo_policy_loss", "log_ratio_clamped", source=sources.VERL_LOG_RATIO_CLAMP,
         hint="the ratio is exp(logp - old_logp) exactly: do not clamp the log-ratio (it reaches +-40 here)")
def log_ratio_clamped(logp, old_logp, ref_logp, advantages, mask, clip_eps=0.2, beta=0.04, aggregation="token_mean"):
    ratio = torch.exp(torch.clamp(logp - old_logp, -20.0, 20.0))
    a = advantages[:, None]
    surrogate = torch.minimum(ratio * a, torch.clamp(ratio, 1 - clip_eps, 1 + clip_eps) * a)
    d = ref_logp - logp
    return _agg((-surrogate + beta * (torch.exp(d) - d - 1)) * mask, mask, aggregation)


@mistake("grpo_loss", "grpo_policy_loss", "always_seq_mean", source=sources.TRL_GRPO_SEQ_MEAN,
         hint="the loss ignores `aggregation`: each one divides differently (token mean, mean of row means, / (B * T))")
def always_seq_mean(logp, old_logp, ref_logp, advantages, mask, clip_eps=0.2, beta=0.04, aggregation="token_mean"):
    ratio = torch.exp(logp - old_logp)
    a = advantages[:, None]
    surrogate = torch.minimum(ratio * a, torch.clamp(ratio, 1 - clip_eps, 1 + clip_eps) * a)
    d = ref_logp - logp
    return _agg((-surrogate + beta * (torch.exp(d) - d - 1)) * mask, mask, "seq_mean_token_mean")


@mistake("grpo_loss", "grpo_policy_loss", "sum_norm_by_rows", source=sources.VERL_SEQ_MEAN_TOKEN_SUM,
         hint="token_sum_norm divides the token sum by B * T (a constant), not by B alone (a mean of row sums)")
def sum_norm_by_rows(logp, old_logp, ref_logp, advantages, mask, clip_eps=0.2, beta=0.04, aggregation="token_mean"):
    ratio = torch.exp(logp - old_logp)
    a = advantages[:, None]
    surrogate = torch.minimum(ratio * a, torch.clamp(ratio, 1 - clip_eps, 1 + clip_eps) * a)
    d = ref_logp - logp
    per_token = (-surrogate + beta * (torch.exp(d) - d - 1)) * mask
    if aggregation == "token_sum_norm":
        return per_token.sum(1).mean()
    return _agg(per_token, mask, aggregation)


@mistake("grpo_loss", "grpo_policy_loss", "sum_norm_by_budget_only", source=sources.VERL_SUM_NORM_T,
         hint="token_sum_norm divides by B * T: the number of rows times the budget, not T alone")
def sum_norm_by_budget_only(logp, old_logp, ref_logp, advantages, mask, clip_eps=0.2, beta=0.04,
                            aggregation="token_mean"):
    ratio = torch.exp(logp - old_logp)
    a = advantages[:, None]
    surrogate = torch.minimum(ratio * a, torch.clamp(ratio, 1 - clip_eps, 1 + clip_eps) * a)
    d = ref_logp - logp
    per_token = (-surrogate + beta * (torch.exp(d) - d - 1)) * mask
    if aggregation == "token_sum_norm":
        return per_token.sum() / mask.shape[-1]
    return _agg(per_token, mask, aggregation)


@mistake("grpo_loss", "grpo_policy_loss", "sum_norm_by_tokens", source=sources.DR_GRPO_PAPER,
         hint="token_sum_norm divides by a constant, B * T, not by the number of generated tokens (that depends on "
              "the lengths: the bias Dr. GRPO removes)")
def sum_norm_by_tokens(logp, old_logp, ref_logp, advantages, mask, clip_eps=0.2, beta=0.04, aggregation="token_mean"):
    ratio = torch.exp(logp - old_logp)
    a = advantages[:, None]
    surrogate = torch.minimum(ratio * a, torch.clamp(ratio, 1 - clip_eps, 1 + clip_eps) * a)
    d = ref_logp - logp
    per_token = (-surrogate + beta * (torch.exp(d) - d - 1)) * mask
    if aggregation == "token_sum_norm":
        return per_token.sum() / mask.sum()
    return _agg(per_token, mask, aggregation)


@mistake("grpo_loss", "grpo_policy_loss", "sum_norm_by_longest",
         hint="token_sum_norm divides by B * T, T the generation budget (the mask's width), not B times the longest "
              "row in the batch (that depends on the lengths)")
def sum_norm_by_longest(logp, old_logp, ref_logp, advantages, mask, clip_eps=0.2, beta=0.04, aggregation="token_mean"):
    ratio = torch.exp(logp - old_logp)
    a = advantages[:, None]
    surrogate = torch.minimum(ratio * a, torch.clamp(ratio, 1 - clip_eps, 1 + clip_eps) * a)
    d = ref_logp - logp
    per_token = (-surrogate + beta * (torch.exp(d) - d - 1)) * mask
    if aggregation == "token_sum_norm":
        return per_token.sum() / (mask.shape[0] * mask.sum(1).max())
    return _agg(per_token, mask, aggregation)


@mistake("grpo_loss", "grpo_policy_loss", "kl_unmasked",
         hint="mask the KL term too: padded positions hold garbage log-probs and must not count")
def kl_unmasked(logp, old_logp, ref_logp, advantages, mask, clip_eps=0.2, beta=0.04, aggregation="token_mean"):
    ratio = torch.exp(logp - old_logp)
    a = advantages[:, None]
    surrogate = torch.minimum(ratio * a, torch.clamp(ratio, 1 - clip_eps, 1 + clip_eps) * a)
    d = ref_logp - logp
    return _agg(-surrogate * mask + beta * (torch.exp(d) - d - 1), mask, aggregation)


@mistake("grpo_loss", "grpo_policy_loss", "kl_subtracted",
         hint="the KL is a penalty: add beta * kl to the loss you minimise, do not subtract it")
def kl_subtracted(logp, old_logp, ref_logp, advantages, mask, clip_eps=0.2, beta=0.04, aggregation="token_mean"):
    ratio = torch.exp(logp - old_logp)
    a = advantages[:, None]
    surrogate = torch.minimum(ratio * a, torch.clamp(ratio, 1 - clip_eps, 1 + clip_eps) * a)
    d = ref_logp - logp
    return _agg((-surrogate - beta * (torch.exp(d) - d - 1)) * mask, mask, aggregation)


@mistake("grpo_loss", "grpo_policy_loss", "max_not_min",
         hint="the surrogate takes the min (the pessimistic bound) of the clipped and unclipped terms, not the max")
def max_not_min(logp, old_logp, ref_logp, advantages, mask, clip_eps=0.2, beta=0.04, aggregation="token_mean"):
    ratio = torch.exp(logp - old_logp)
    a = advantages[:, None]
    surrogate = torch.maximum(ratio * a, torch.clamp(ratio, 1 - clip_eps, 1 + clip_eps) * a)
    d = ref_logp - logp
    return _agg((-surrogate + beta * (torch.exp(d) - d - 1)) * mask, mask, aggregation)


@mistake("grpo_loss", "grpo_policy_loss", "no_clipping",
         hint="the ratio is never clipped: take min(ratio * A, clip(ratio, 1 - clip_eps, 1 + clip_eps) * A)")
def no_clipping(logp, old_logp, ref_logp, advantages, mask, clip_eps=0.2, beta=0.04, aggregation="token_mean"):
    ratio = torch.exp(logp - old_logp)
    d = ref_logp - logp
    return _agg((-ratio * advantages[:, None] + beta * (torch.exp(d) - d - 1)) * mask, mask, aggregation)


# ------------------------------------------------------------------ correct variants
@variant("grpo_loss", "grpo_policy_loss", "max_of_negated", source=sources.VERL_LOG_RATIO_CLAMP)
def max_of_negated(logp, old_logp, ref_logp, advantages, mask, clip_eps=0.2, beta=0.04, aggregation="token_mean"):
    # verl's form: max(-A * ratio, -A * clip(ratio)) (= -min(...)), without its clamps
    ratio = torch.exp(logp - old_logp)
    a = advantages.unsqueeze(-1)
    pg = torch.maximum(-a * ratio, -a * torch.clamp(ratio, 1 - clip_eps, 1 + clip_eps))
    kl = torch.exp(ref_logp - logp) - (ref_logp - logp) - 1
    loss = (pg + beta * kl) * mask
    if aggregation == "token_mean":
        return loss.sum() / mask.sum()
    if aggregation == "seq_mean_token_mean":
        return (loss.sum(-1) / mask.sum(-1)).mean()
    if aggregation == "token_sum_norm":
        return loss.sum() / (mask.shape[0] * mask.shape[1])
    raise ValueError(f"unknown aggregation {aggregation}")


@variant("grpo_loss", "grpo_policy_loss", "where_masked", source=sources.TRL_GRPO_SEQ_MEAN)
def where_masked(logp, old_logp, ref_logp, advantages, mask, clip_eps=0.2, beta=0.04, aggregation="token_mean"):
    if aggregation not in ("token_mean", "seq_mean_token_mean", "token_sum_norm"):
        raise ValueError(aggregation)
    keep = mask > 0
    coef_1 = torch.exp(logp - old_logp)
    coef_2 = torch.clamp(coef_1, 1 - clip_eps, 1 + clip_eps)
    a = advantages[:, None]
    per_token = -torch.min(coef_1 * a, coef_2 * a)
    if beta != 0.0:
        per_token = per_token + beta * (torch.exp(ref_logp - logp) - (ref_logp - logp) - 1)
    per_token = torch.where(keep, per_token, torch.zeros_like(per_token))
    if aggregation == "seq_mean_token_mean":
        return (per_token.sum(-1) / mask.sum(-1)).mean()
    if aggregation == "token_mean":
        return per_token.sum() / mask.sum()
    return per_token.sum() / (per_token.size(0) * per_token.size(1))
