"""Known mistakes and correct variants of sequence_logprob, dpo_loss and ipo_loss."""

from __future__ import annotations

import torch
import torch.nn.functional as F

from autograder.lab.bank import mistake, variant

from . import sources


# ------------------------------------------------------------------ sequence_logprob
@mistake("dpo", "sequence_logprob", "mean_not_sum", source=sources.TRL_IPO_AVERAGE,
         hint="a response's log-prob is the sum of its tokens' log-probs, not their mean")
def mean_not_sum(token_logp, mask):
    return (token_logp * mask).sum(1) / mask.sum(1)


@mistake("dpo", "sequence_logprob", "padding_counted",
         hint="sum only where mask == 1: padded positions hold garbage log-probs")
def padding_counted(token_logp, mask):
    return token_logp.sum(1)


@variant("dpo", "sequence_logprob", "multiply_by_mask")
def multiply_by_mask(token_logp, mask):
    return (token_logp * mask).sum(-1)


# ------------------------------------------------------------------ dpo_loss
@mistake("dpo", "dpo_loss", "log_of_sigmoid",
         hint="log(sigmoid(x)) underflows to log(0) at large margins: use F.logsigmoid")
def log_of_sigmoid(policy_chosen, policy_rejected, ref_chosen, ref_rejected, beta=0.1):
    h = (policy_chosen - ref_chosen) - (policy_rejected - ref_rejected)
    return -torch.log(torch.sigmoid(beta * h)).mean()


@mistake("dpo", "dpo_loss", "chosen_rejected_swapped",
         hint="the preferred response's log-ratio comes first: h = (chosen - ref) - (rejected - ref)")
def chosen_rejected_swapped(policy_chosen, policy_rejected, ref_chosen, ref_rejected, beta=0.1):
    h = (policy_rejected - ref_rejected) - (policy_chosen - ref_chosen)
    return -F.logsigmoid(beta * h).mean()


@mistake("dpo", "dpo_loss", "beta_outside",
         hint="beta scales the margin inside the sigmoid: -log sigmoid(beta * h), not -beta * log sigmoid(h)")
def beta_outside(policy_chosen, policy_rejected, ref_chosen, ref_rejected, beta=0.1):
    h = (policy_chosen - ref_chosen) - (policy_rejected - ref_rejected)
    return -(beta * F.logsigmoid(h)).mean()


@mistake("dpo", "dpo_loss", "reference_ignored",
         hint="subtract the reference's log-probs: the margin is between log-ratios to the reference")
def reference_ignored(policy_chosen, policy_rejected, ref_chosen, ref_rejected, beta=0.1):
    return -F.logsigmoid(beta * (policy_chosen - policy_rejected)).mean()


@mistake("dpo", "dpo_loss", "hinge", source=sources.TRL_HINGE,
         hint="this is the hinge (SLiC) loss; DPO's is -log sigmoid(beta * h)")
def hinge(policy_chosen, policy_rejected, ref_chosen, ref_rejected, beta=0.1):
    h = (policy_chosen - ref_chosen) - (policy_rejected - ref_rejected)
    return torch.relu(1 - beta * h).mean()


@mistake("dpo", "dpo_loss", "sum_over_pairs", hint="the loss is the mean over pairs, not the sum")
def sum_over_pairs(policy_chosen, policy_rejected, ref_chosen, ref_rejected, beta=0.1):
    h = (policy_chosen - ref_chosen) - (policy_rejected - ref_rejected)
    return -F.logsigmoid(beta * h).sum()


@variant("dpo", "dpo_loss", "softplus")
def softplus(policy_chosen, policy_rejected, ref_chosen, ref_rejected, beta=0.1):
    logits = (policy_chosen - policy_rejected) - (ref_chosen - ref_rejected)
    return F.softplus(-beta * logits).mean()


@variant("dpo", "dpo_loss", "cdpo_no_smoothing", source=sources.OPENRLHF_DPO)
def cdpo_no_smoothing(policy_chosen, policy_rejected, ref_chosen, ref_rejected, beta=0.1):
    label_smoothing = 0.0
    logits = (policy_chosen - policy_rejected) - (ref_chosen - ref_rejected)
    losses = (-F.logsigmoid(beta * logits) * (1 - label_smoothing)
              - F.logsigmoid(-beta * logits) * label_smoothing)
    return losses.mean()


@variant("dpo", "dpo_loss", "logaddexp")
def logaddexp(policy_chosen, policy_rejected, ref_chosen, ref_rejected, beta=0.1):
    z = beta * ((policy_chosen - ref_chosen) - (policy_rejected - ref_rejected))
    return torch.logaddexp(torch.zeros_like(z), -z).mean()


# ------------------------------------------------------------------ ipo_loss
@mistake("ipo", "ipo_loss", "target_one_over_beta",
         hint="IPO's target margin is 1 / (2 * beta), not 1 / beta")
def target_one_over_beta(policy_chosen, policy_rejected, ref_chosen, ref_rejected, beta=0.1):
    h = (policy_chosen - ref_chosen) - (policy_rejected - ref_rejected)
    return ((h - 1 / beta) ** 2).mean()


@mistake("ipo", "ipo_loss", "beta_scales_margin",
         hint="IPO regresses the margin h itself to 1 / (2 beta): (h - 1 / (2 beta))^2, not (beta * h - 1/2)^2")
def beta_scales_margin(policy_chosen, policy_rejected, ref_chosen, ref_rejected, beta=0.1):
    h = (policy_chosen - ref_chosen) - (policy_rejected - ref_rejected)
    return ((beta * h - 0.5) ** 2).mean()


@mistake("ipo", "ipo_loss", "absolute_error",
         hint="IPO's loss is the squared distance to the target margin, not the absolute one")
def absolute_error(policy_chosen, policy_rejected, ref_chosen, ref_rejected, beta=0.1):
    h = (policy_chosen - ref_chosen) - (policy_rejected - ref_rejected)
    return (h - 1 / (2 * beta)).abs().mean()


@variant("ipo", "ipo_loss", "openrlhf_form", source=sources.OPENRLHF_DPO)
def openrlhf_form(policy_chosen, policy_rejected, ref_chosen, ref_rejected, beta=0.1):
    logits = (policy_chosen - policy_rejected) - (ref_chosen - ref_rejected)
    return ((logits - 1 / (2 * beta)) ** 2).mean()
