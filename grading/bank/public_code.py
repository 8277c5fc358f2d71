"""Mistakes found in public RLHF code: bugs fixed upstream, and design choices of other libraries that
break this lab's contract (clamps, clips, other aggregations, extra terms). Each cites its source; each
changes the output on some valid input (solutions/rlhf.py), so each must lose points in its own part.
The bodies are written here from the contract, not copied; like every entry, each is self-contained
(bank/__init__.py: `torch`, `F` and the contract functions only).
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

from autograder.lab.bank import mistake

VERL = "volcengine/verl, verl/trainer/ppo/core_algos.py"
OPENRLHF = "OpenRLHF/OpenRLHF"
TRL = "huggingface/trl"


# ------------------------------------------------------------------ rm_loss


@mistake("rm_loss", "bradley_terry_loss", "bt_center_rewards",
         hint="the loss is only the mean of -log sigmoid(r_better - r_worse): no extra term that pulls the "
              "rewards towards 0",
         source=f"{TRL}, trl/trainer/reward_trainer.py: center_rewards_coefficient * mean((r_chosen + r_rejected)^2)"
                " added to the loss")
def bt_center_rewards(r_better, r_worse):
    return -F.logsigmoid(r_better - r_worse).mean() + 0.01 * ((r_better + r_worse) ** 2).mean()


@mistake("rm_loss", "bradley_terry_loss", "bt_label_smoothing",
         hint="no label smoothing: the loss is -log sigmoid(gap), not a mix with -log sigmoid(-gap)",
         source=f"{TRL}, trl/trainer/dpo_trainer.py sigmoid loss with label_smoothing (conservative DPO)")
def bt_label_smoothing(r_better, r_worse):
    gap = r_better - r_worse
    return (-0.9 * F.logsigmoid(gap) - 0.1 * F.logsigmoid(-gap)).mean()


@mistake("rm_loss", "ranking_loss", "ranking_listwise",
         hint="the InstructGPT loss averages -log sigmoid over every ranked pair; a listwise (Plackett-Luce) "
              "softmax over the lower-ranked responses is another loss",
         source="AlibabaResearch/DAMO-ConvAI, PRO/ (Preference Ranking Optimization): a listwise softmax loss "
                "over rankings")
def ranking_listwise(rewards, ranking):
    ordered = rewards.gather(1, ranking)
    K = ordered.shape[1]
    terms = [-(ordered[:, k] - torch.logsumexp(ordered[:, k:], dim=1)) for k in range(K - 1)]
    return torch.stack(terms, 1).mean()


# ------------------------------------------------------------------ gae


@mistake("gae", "compute_gae", "padding_rewards_leak",
         hint="rewards at padded positions (mask == 0) leak into the advantages: mask the rewards as well as the "
              "values before the backward recursion",
         source=f"{OPENRLHF}, openrlhf/trainer/ppo_utils/experience_maker.py get_advantages_and_returns: "
                "`values = action_mask * values; rewards = action_mask * rewards`, the second line left out")
def padding_rewards_leak(rewards, values, mask, gamma=1.0, lam=0.95):
    values = values * mask
    T = rewards.shape[1]
    advantages = torch.zeros_like(rewards)
    last = torch.zeros_like(rewards[:, 0])
    for t in reversed(range(T)):
        next_value = values[:, t + 1] if t + 1 < T else torch.zeros_like(last)
        delta = rewards[:, t] + gamma * next_value - values[:, t]
        last = delta + gamma * lam * last
        advantages[:, t] = last
    return advantages * mask, (advantages + values) * mask


@mistake("gae", "compute_gae", "truncation_bootstrap", fails="gae.matches_reference",
         hint="a row without padding (the response used the whole budget) ends there too: V = 0 after its last "
              "token, do not bootstrap the last token from V_{T-1}",
         source="vwxyzjn/cleanrl, cleanrl/ppo.py GAE: `if t == args.num_steps - 1: nextnonterminal = 1.0 - "
                "next_done; nextvalues = next_value`: a rollout cut by the step budget bootstraps from its last value")
def truncation_bootstrap(rewards, values, mask, gamma=1.0, lam=0.95):
    T = rewards.shape[1]
    advantages = torch.zeros_like(rewards)
    next_value = values[:, -1] * mask[:, -1]  # rows that used the whole budget: "truncated", bootstrapped
    next_adv = torch.zeros_like(rewards[:, 0])
    for t in reversed(range(T)):
        m = mask[:, t]
        delta = rewards[:, t] + gamma * next_value - values[:, t]
        adv = delta + gamma * lam * next_adv
        advantages[:, t] = adv * m
        next_value = values[:, t] * m
        next_adv = adv * m
    return advantages, advantages + values


# ------------------------------------------------------------------ ppo_clip


@mistake("ppo_clip", "ppo_policy_loss", "log_ratio_clamped", fails="ppo_clip.policy_matches_reference",
         hint="do not clamp logp - old_logp before exp(): the ratio must be exact even far from 1",
         source=f"{VERL} compute_policy_loss: torch.clamp(log_prob - old_log_prob, min=-20.0, max=20.0)")
def log_ratio_clamped(logp, old_logp, advantages, mask, clip_eps=0.2):
    ratio = torch.exp(torch.clamp(logp - old_logp, -20.0, 20.0))
    surrogate = torch.minimum(ratio * advantages, torch.clamp(ratio, 1 - clip_eps, 1 + clip_eps) * advantages)
    return -(surrogate * mask).sum() / mask.sum()


@mistake("ppo_clip", "ppo_policy_loss", "dual_clip", fails="ppo_clip.policy_matches_reference",
         hint="no dual clip: for A < 0 the objective is min(ratio * A, clip(ratio) * A), not bounded below by 3 A",
         source=f"{VERL} compute_policy_loss: dual-clip PPO with clip_ratio_c = 3.0 for negative advantages")
def dual_clip(logp, old_logp, advantages, mask, clip_eps=0.2):
    ratio = torch.exp(logp - old_logp)
    surrogate = torch.minimum(ratio * advantages, torch.clamp(ratio, 1 - clip_eps, 1 + clip_eps) * advantages)
    surrogate = torch.where(advantages < 0, torch.maximum(surrogate, 3.0 * advantages), surrogate)
    return -(surrogate * mask).sum() / mask.sum()


@mistake("ppo_clip", "ppo_policy_loss", "clip_higher",
         hint="clip the ratio symmetrically to [1 - clip_eps, 1 + clip_eps]",
         source="DAPO (arXiv 2503.14476) clip-higher, verl clip_ratio_high = 0.28 with clip_ratio_low = 0.2")
def clip_higher(logp, old_logp, advantages, mask, clip_eps=0.2):
    ratio = torch.exp(logp - old_logp)
    surrogate = torch.minimum(ratio * advantages, torch.clamp(ratio, 1 - clip_eps, 1 + clip_eps + 0.08) * advantages)
    return -(surrogate * mask).sum() / mask.sum()


@mistake("ppo_clip", "ppo_policy_loss", "advantages_whitened_in_loss",
         hint="use the advantages as given: the training loop already whitens them, not the loss",
         source="vwxyzjn/cleanrl, cleanrl/ppo.py: `if args.norm_adv:` advantages normalised per minibatch")
def advantages_whitened_in_loss(logp, old_logp, advantages, mask, clip_eps=0.2):
    keep = mask.bool()
    mean, std = advantages[keep].mean(), advantages[keep].std() if keep.sum() > 1 else torch.ones(())
    advantages = (advantages - mean) / (std + 1e-8)
    ratio = torch.exp(logp - old_logp)
    surrogate = torch.minimum(ratio * advantages, torch.clamp(ratio, 1 - clip_eps, 1 + clip_eps) * advantages)
    return -(surrogate * mask).sum() / mask.sum()


@mistake("ppo_clip", "ppo_policy_loss", "seq_mean_token_sum",
         hint="take one mean over all mask == 1 tokens, not the mean over rows of each row's sum",
         source=f"{VERL} agg_loss with loss_agg_mode='seq-mean-token-sum'")
def seq_mean_token_sum(logp, old_logp, advantages, mask, clip_eps=0.2):
    ratio = torch.exp(logp - old_logp)
    surrogate = torch.minimum(ratio * advantages, torch.clamp(ratio, 1 - clip_eps, 1 + clip_eps) * advantages)
    return -(surrogate * mask).sum(1).mean()


@mistake("ppo_clip", "ppo_value_loss", "value_mean_of_sequence_means",
         hint="take one mean over all mask == 1 tokens of the batch, not a mean of per-sequence means",
         source=f"{OPENRLHF}, openrlhf/models/loss.py ValueLoss: masked_mean(loss, action_mask, dim=-1).mean()")
def value_mean_of_sequence_means(values, old_values, returns, mask, clip_eps=0.2):
    v_clip = old_values + torch.clamp(values - old_values, -clip_eps, clip_eps)
    worst = torch.maximum((values - returns) ** 2, (v_clip - returns) ** 2)
    return 0.5 * ((worst * mask).sum(1) / mask.sum(1)).mean()


@mistake("ppo_clip", "ppo_value_loss", "value_fixed_clip_eps", fails="ppo_clip.value_matches_reference",
         hint="clip the values with the clip_eps argument, not a separate fixed range of 0.2",
         source=f"{TRL}, trl/trainer/ppo_config.py: a separate cliprange_value (default 0.2) for the value loss")
def value_fixed_clip_eps(values, old_values, returns, mask, clip_eps=0.2):
    v_clip = old_values + torch.clamp(values - old_values, -0.2, 0.2)
    worst = torch.maximum((values - returns) ** 2, (v_clip - returns) ** 2)
    return 0.5 * (worst * mask).sum() / mask.sum()


# ------------------------------------------------------------------ kl


@mistake("kl", "kl_estimate", "k3_clamped", fails="kl.estimate_matches_reference",
         hint="do not clamp k3: exp(-d) - 1 + d grows without bound for large |d|",
         source=f"{VERL} kl_penalty 'low_var_kl': torch.clamp(kld, min=-10, max=10)")
def k3_clamped(logp, ref_logp, kind="k1"):
    d = logp - ref_logp
    if kind == "k1":
        return d
    if kind == "k2":
        return d ** 2 / 2
    if kind == "k3":
        return torch.clamp(torch.expm1(-d) + d, -10, 10)
    raise ValueError(f"unknown KL estimator {kind!r}")


@mistake("kl", "kl_estimate", "log_ratio_clamped_20", fails="kl.estimate_matches_reference",
         hint="do not clamp the log-ratio d = logp - ref_logp: the estimators must be exact for large |d| too",
         source=f"{VERL} kl_penalty 'low_var_kl': torch.clamp(ref_logprob - logprob, min=-20, max=20) before exp")
def log_ratio_clamped_20(logp, ref_logp, kind="k1"):
    d = torch.clamp(logp - ref_logp, -20, 20)
    if kind == "k1":
        return d
    if kind == "k2":
        return d ** 2 / 2
    if kind == "k3":
        return torch.expm1(-d) + d
    raise ValueError(f"unknown KL estimator {kind!r}")


@mistake("kl", "kl_estimate", "unknown_kind_not_implemented", fails="kl.estimators_known_values",
         hint="an unknown `kind` must raise ValueError (the contract's error for a bad argument), "
              "not NotImplementedError",
         source=f"{VERL} kl_penalty (and {TRL}'s kl_estimator): `raise NotImplementedError` for an unknown kind")
def unknown_kind_not_implemented(logp, ref_logp, kind="k1"):
    d = logp - ref_logp
    if kind == "k1":
        return d
    if kind == "k2":
        return d ** 2 / 2
    if kind == "k3":
        return torch.expm1(-d) + d
    raise NotImplementedError


@mistake("kl", "kl_estimate", "verl_kind_names", fails="kl.estimate_matches_reference",
         hint="kind is exactly 'k1', 'k2' or 'k3': other libraries' names ('kl', 'abs', 'mse', 'low_var_kl') "
              "are unknown here and raise ValueError",
         source=f"{VERL} kl_penalty: kl_penalty in ('kl', 'k1'), 'abs', ('mse', 'k2'), ('low_var_kl', 'k3')")
def verl_kind_names(logp, ref_logp, kind="k1"):
    d = logp - ref_logp
    if kind in ("k1", "kl"):
        return d
    if kind == "abs":
        return d.abs()
    if kind in ("k2", "mse"):
        return d ** 2 / 2
    if kind in ("k3", "low_var_kl"):
        return torch.expm1(-d) + d
    raise ValueError(f"unknown KL estimator {kind!r}")


@mistake("kl", "shaped_rewards", "scores_clipped", fails="kl.shaped_matches_reference",
         hint="add the score as it is: do not clip it to a range",
         source="microsoft/DeepSpeedExamples, applications/DeepSpeed-Chat/dschat/rlhf/ppo_trainer.py "
                "compute_rewards: torch.clamp(reward_score, -clip_reward_value, clip_reward_value), 5 by default")
def scores_clipped(scores, logp, ref_logp, mask, beta, kind="k1"):
    rewards = -beta * kl_estimate(logp, ref_logp, kind) * mask  # noqa: F821 (the reference's)
    last = mask.sum(1).long() - 1
    rewards[torch.arange(rewards.shape[0]), last] += torch.clamp(scores, -5.0, 5.0)
    return rewards


@mistake("kl", "shaped_rewards", "score_penalized_without_eos",
         hint="a response without <eos> (a full row) still gets its score, unchanged, on column T-1",
         source=f"{TRL}, trl/trainer/ppo_trainer.py: missing_eos_penalty subtracted from the score of "
                "responses without an EOS token")
def score_penalized_without_eos(scores, logp, ref_logp, mask, beta, kind="k1"):
    full = mask.sum(1) == mask.shape[1]
    rewards = -beta * kl_estimate(logp, ref_logp, kind) * mask  # noqa: F821 (the reference's)
    last = mask.sum(1).long() - 1
    rewards[torch.arange(rewards.shape[0]), last] += torch.where(full, scores - 1.0, scores)
    return rewards
