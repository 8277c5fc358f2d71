"""Known mistakes and correct variants of kl_estimate and shaped_rewards (part kl)."""

from __future__ import annotations

import torch

from autograder.lab.bank import mistake, variant

# ------------------------------------------------------------------ kl_estimate: mistakes


@mistake("kl", "kl_estimate", "reversed_log_ratio", fails="kl.estimate_matches_reference",
         hint="your log-ratio looks reversed: d = logp - ref_logp (policy minus reference)")
def reversed_log_ratio(logp, ref_logp, kind="k1"):
    d = ref_logp - logp
    if kind == "k1":
        return d
    if kind == "k2":
        return d ** 2 / 2
    if kind == "k3":
        return torch.expm1(-d) + d
    raise ValueError(f"unknown KL estimator {kind!r}")


@mistake("kl", "kl_estimate", "k2_without_half", fails="kl.estimators_known_values",
         hint="k2 is d^2 / 2: the factor 1/2 is missing")
def k2_without_half(logp, ref_logp, kind="k1"):
    d = logp - ref_logp
    if kind == "k1":
        return d
    if kind == "k2":
        return d ** 2
    if kind == "k3":
        return torch.expm1(-d) + d
    raise ValueError(f"unknown KL estimator {kind!r}")


@mistake("kl", "kl_estimate", "k3_exp_d", fails="kl.unbiased_and_nonnegative",
         hint="k3 uses the ratio ref/policy = exp(-d): k3 = exp(-d) - 1 + d, not exp(d) - 1 - d")
def k3_exp_d(logp, ref_logp, kind="k1"):
    d = logp - ref_logp
    if kind == "k1":
        return d
    if kind == "k2":
        return d ** 2 / 2
    if kind == "k3":
        return torch.exp(d) - 1 - d
    raise ValueError(f"unknown KL estimator {kind!r}")


@mistake("kl", "kl_estimate", "k3_minus_d", fails="kl.unbiased_and_nonnegative",
         hint="with r = exp(-d), k3 = r - 1 - log r = exp(-d) - 1 + d: the sign of d looks wrong")
def k3_minus_d(logp, ref_logp, kind="k1"):
    d = logp - ref_logp
    if kind == "k1":
        return d
    if kind == "k2":
        return d ** 2 / 2
    if kind == "k3":
        return torch.exp(-d) - 1 - d
    raise ValueError(f"unknown KL estimator {kind!r}")


@mistake("kl", "kl_estimate", "k1_abs", fails="kl.unbiased_and_nonnegative",
         hint="k1 is d itself: one token's estimate may be negative, only its average is >= 0")
def k1_abs(logp, ref_logp, kind="k1"):
    d = logp - ref_logp
    if kind == "k1":
        return d.abs()
    if kind == "k2":
        return d ** 2 / 2
    if kind == "k3":
        return torch.expm1(-d) + d
    raise ValueError(f"unknown KL estimator {kind!r}")


@mistake("kl", "kl_estimate", "kind_ignored", fails="kl.estimate_matches_reference",
         hint="the estimator does not depend on `kind`: k1, k2 and k3 are different formulas")
def kind_ignored(logp, ref_logp, kind="k1"):
    return logp - ref_logp


@mistake("kl", "kl_estimate", "unknown_kind_accepted", fails="kl.estimators_known_values",
         hint="an unknown `kind` must raise ValueError, not fall back to an estimator")
def unknown_kind_accepted(logp, ref_logp, kind="k1"):
    d = logp - ref_logp
    if kind == "k2":
        return d ** 2 / 2
    if kind == "k3":
        return torch.expm1(-d) + d
    return d


# ------------------------------------------------------------------ kl_estimate: correct variants


@variant("kl", "kl_estimate", "ratio_form_float64")
def ratio_form_float64(logp, ref_logp, kind="k1"):
    log_ratio = (ref_logp.double() - logp.double())  # log r, r = ref / policy
    estimators = {"k1": lambda: -log_ratio, "k2": lambda: log_ratio ** 2 / 2,
                  "k3": lambda: log_ratio.exp() - 1 - log_ratio}
    if kind not in estimators:
        raise ValueError(f"kind must be one of {sorted(estimators)}, got {kind!r}")
    return estimators[kind]().to(logp.dtype)


@variant("kl", "kl_estimate", "exp_minus_one_form")
def exp_minus_one_form(logp, ref_logp, kind="k1"):
    d = logp - ref_logp
    if kind == "k3":
        return torch.exp(-d) - 1 + d
    if kind == "k2":
        return 0.5 * d * d
    if kind == "k1":
        return d.clone()
    raise ValueError("unknown kind")


# ------------------------------------------------------------------ shaped_rewards: mistakes


@mistake("kl", "shaped_rewards", "score_on_first_token", fails="kl.shaped_known_values",
         hint="the score belongs on the LAST generated token of each row, not the first")
def score_on_first_token(scores, logp, ref_logp, mask, beta, kind="k1"):
    rewards = -beta * kl_estimate(logp, ref_logp, kind) * mask  # noqa: F821
    rewards[:, 0] += scores
    return rewards


@mistake("kl", "shaped_rewards", "score_on_last_column", fails="kl.shaped_known_values",
         hint="the score goes on each row's last GENERATED token (mask == 1), not always on column T-1")
def score_on_last_column(scores, logp, ref_logp, mask, beta, kind="k1"):
    rewards = -beta * kl_estimate(logp, ref_logp, kind) * mask  # noqa: F821
    rewards[:, -1] += scores
    return rewards


@mistake("kl", "shaped_rewards", "score_one_past_the_end", fails="kl.shaped_matches_reference",
         hint="the score lands one column after the last generated token (on padding): the last token "
              "is at index mask.sum(1) - 1")
def score_one_past_the_end(scores, logp, ref_logp, mask, beta, kind="k1"):
    rewards = -beta * kl_estimate(logp, ref_logp, kind) * mask  # noqa: F821
    last = mask.sum(1).long().clamp(max=mask.shape[1] - 1)
    rewards[torch.arange(rewards.shape[0]), last] += scores
    return rewards


@mistake("kl", "shaped_rewards", "score_one_early", fails="kl.shaped_matches_reference",
         hint="the score lands one token before the last generated token (the <eos> token counts)")
def score_one_early(scores, logp, ref_logp, mask, beta, kind="k1"):
    rewards = -beta * kl_estimate(logp, ref_logp, kind) * mask  # noqa: F821
    last = (mask.sum(1).long() - 2).clamp(min=0)
    rewards[torch.arange(rewards.shape[0]), last] += scores
    return rewards


@mistake("kl", "shaped_rewards", "score_replaces_penalty", fails="kl.shaped_matches_reference",
         hint="the last token's reward should be its KL penalty PLUS the score: add the score, do not overwrite")
def score_replaces_penalty(scores, logp, ref_logp, mask, beta, kind="k1"):
    rewards = -beta * kl_estimate(logp, ref_logp, kind) * mask  # noqa: F821
    last = (mask.sum(1).long() - 1).clamp(min=0)
    rewards[torch.arange(rewards.shape[0]), last] = scores
    return rewards


@mistake("kl", "shaped_rewards", "penalty_without_beta", fails="kl.shaped_matches_reference",
         hint="the KL penalty is -beta * kl_estimate(...): beta seems missing")
def penalty_without_beta(scores, logp, ref_logp, mask, beta, kind="k1"):
    rewards = -kl_estimate(logp, ref_logp, kind) * mask  # noqa: F821
    last = (mask.sum(1).long() - 1).clamp(min=0)
    rewards[torch.arange(rewards.shape[0]), last] += scores
    return rewards


@mistake("kl", "shaped_rewards", "penalty_plus_beta", fails="kl.shaped_known_values",
         hint="the KL penalty has the wrong sign: add -beta * kl_estimate(logp, ref_logp, kind), "
              "with d = logp - ref_logp")
def penalty_plus_beta(scores, logp, ref_logp, mask, beta, kind="k1"):
    rewards = beta * kl_estimate(logp, ref_logp, kind) * mask  # noqa: F821
    last = (mask.sum(1).long() - 1).clamp(min=0)
    rewards[torch.arange(rewards.shape[0]), last] += scores
    return rewards


@mistake("kl", "shaped_rewards", "kind_not_passed", fails="kl.shaped_matches_reference",
         hint="the penalty is always k1: pass `kind` on to kl_estimate (and make kl_estimate use it)")
def kind_not_passed(scores, logp, ref_logp, mask, beta, kind="k1"):
    rewards = -beta * kl_estimate(logp, ref_logp) * mask  # noqa: F821
    last = (mask.sum(1).long() - 1).clamp(min=0)
    rewards[torch.arange(rewards.shape[0]), last] += scores
    return rewards


@mistake("kl", "shaped_rewards", "penalty_summed_on_last_token", fails="kl.shaped_matches_reference",
         hint="the KL penalty goes on EVERY generated token, not summed onto the last one")
def penalty_summed_on_last_token(scores, logp, ref_logp, mask, beta, kind="k1"):
    penalty = -beta * (kl_estimate(logp, ref_logp, kind) * mask).sum(1)  # noqa: F821
    rewards = torch.zeros_like(logp)
    last = (mask.sum(1).long() - 1).clamp(min=0)
    rewards[torch.arange(rewards.shape[0]), last] = scores + penalty
    return rewards


@mistake("kl", "shaped_rewards", "penalty_mean_with_padding", fails="kl.shaped_known_values",
         hint="the KL penalty is per token, and padded positions must not enter it (mask them out)")
def penalty_mean_with_padding(scores, logp, ref_logp, mask, beta, kind="k1"):
    per_row = kl_estimate(logp, ref_logp, kind).mean(1, keepdim=True)  # noqa: F821
    rewards = -beta * per_row * mask
    last = (mask.sum(1).long() - 1).clamp(min=0)
    rewards[torch.arange(rewards.shape[0]), last] += scores
    return rewards


@mistake("kl", "shaped_rewards", "penalty_of_abs_d", fails="kl.shaped_matches_reference",
         hint="the KL penalty is -beta * kl_estimate(logp, ref_logp, kind) as it is: k1 = d is negative where the "
              "policy is less likely than the reference, do not take its absolute value")
def penalty_of_abs_d(scores, logp, ref_logp, mask, beta, kind="k1"):
    rewards = -beta * kl_estimate(logp, ref_logp, kind).abs() * mask  # noqa: F821
    last = (mask.sum(1).long() - 1).clamp(min=0)
    rewards[torch.arange(rewards.shape[0]), last] += scores
    return rewards


# ------------------------------------------------------------------ shaped_rewards: correct variants


@variant("kl", "shaped_rewards", "row_loop_float64")
def row_loop_float64(scores, logp, ref_logp, mask, beta, kind="k1"):
    kl = kl_estimate(logp.double(), ref_logp.double(), kind)  # noqa: F821
    rows = []
    for b in range(mask.shape[0]):
        n = int(mask[b].sum().item())
        row = torch.zeros(mask.shape[1], dtype=torch.float64)
        row[:n] = -beta * kl[b, :n]
        row[n - 1] = row[n - 1] + scores[b].double()
        rows.append(row)
    return torch.stack(rows).to(logp.dtype)


@variant("kl", "shaped_rewards", "where_and_argmin")
def where_and_argmin(scores, logp, ref_logp, mask, beta, kind="k1"):
    on = mask.bool()
    penalty = torch.where(on, -beta * kl_estimate(logp, ref_logp, kind), torch.zeros_like(logp))  # noqa: F821
    last = mask.argmin(1) - 1  # first padding column - 1; a full row gives -1, i.e. column T-1
    bonus = torch.zeros_like(logp).scatter(1, (last % mask.shape[1])[:, None], scores[:, None])
    return penalty + bonus


@variant("kl", "shaped_rewards", "onehot_of_cumsum")
def onehot_of_cumsum(scores, logp, ref_logp, mask, beta, kind="k1"):
    length = mask.sum(1, keepdim=True)
    is_last = (mask.cumsum(1) == length) & (mask > 0)
    return -beta * mask * kl_estimate(logp, ref_logp, kind) + is_last.to(logp.dtype) * scores[:, None]  # noqa: F821
