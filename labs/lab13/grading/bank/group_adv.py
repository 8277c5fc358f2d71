"""Known mistakes and correct variants of group_advantages."""

from __future__ import annotations

import torch

from autograder.lab.bank import mistake, variant

from . import sources


def _grouped(rewards, group_size):
    """(N, group_size) view; ValueError when the batch is not whole groups (every entry keeps the contract's)."""
    if rewards.shape[0] % group_size != 0:
        raise ValueError("not whole groups")
    return rewards.view(-1, group_size)


@mistake("group_adv", "group_advantages", "batch_std", source=sources.TRL_BATCH_STD,
         hint="divide by each group's own std, not by the std of the whole batch")
def batch_std(rewards, group_size, normalize_std=True, eps=1e-6):
    grouped = _grouped(rewards, group_size)
    centred = (grouped - grouped.mean(1, keepdim=True)).reshape(-1)
    return centred / (rewards.std() + eps) if normalize_std else centred


@mistake("group_adv", "group_advantages", "fixed_eps", source=sources.TRL_FIXED_EPS,
         hint="add the eps argument to the std, not a fixed constant")
def fixed_eps(rewards, group_size, normalize_std=True, eps=1e-6):
    grouped = _grouped(rewards, group_size)
    centred = grouped - grouped.mean(1, keepdim=True)
    if normalize_std:
        centred = centred / (grouped.std(1, keepdim=True) + 1e-4)
    return centred.reshape(-1)


@mistake("group_adv", "group_advantages", "population_std",
         hint="use the sample std (torch.std's default, divide by group_size - 1), not the population std")
def population_std(rewards, group_size, normalize_std=True, eps=1e-6):
    grouped = _grouped(rewards, group_size)
    centred = grouped - grouped.mean(1, keepdim=True)
    if normalize_std:
        centred = centred / (grouped.std(1, keepdim=True, correction=0) + eps)
    return centred.reshape(-1)


@mistake("group_adv", "group_advantages", "no_eps",
         hint="a group whose rewards are all equal has std 0: add eps to the std, so its advantages are 0, not nan")
def no_eps(rewards, group_size, normalize_std=True, eps=1e-6):
    grouped = _grouped(rewards, group_size)
    centred = grouped - grouped.mean(1, keepdim=True)
    if normalize_std:
        centred = centred / grouped.std(1, keepdim=True)
    return centred.reshape(-1)


@mistake("group_adv", "group_advantages", "eps_inside_sqrt",
         hint="eps is added to the std, outside the square root: (r - mean) / (std + eps)")
def eps_inside_sqrt(rewards, group_size, normalize_std=True, eps=1e-6):
    grouped = _grouped(rewards, group_size)
    centred = grouped - grouped.mean(1, keepdim=True)
    if normalize_std:
        centred = centred / torch.sqrt(grouped.var(1, keepdim=True) + eps)
    return centred.reshape(-1)


@mistake("group_adv", "group_advantages", "interleaved_groups",
         hint="a group is group_size consecutive rewards (view(-1, group_size)), not every N-th one")
def interleaved_groups(rewards, group_size, normalize_std=True, eps=1e-6):
    _grouped(rewards, group_size)
    grouped = rewards.view(group_size, -1)
    centred = grouped - grouped.mean(0, keepdim=True)
    if normalize_std:
        centred = centred / (grouped.std(0, keepdim=True) + eps)
    return centred.reshape(-1)


@mistake("group_adv", "group_advantages", "leave_one_out", source=sources.OPENRLHF_RLOO,
         hint="the baseline is the mean of the whole group, the response itself included (not leave-one-out, RLOO)")
def leave_one_out(rewards, group_size, normalize_std=True, eps=1e-6):
    grouped = _grouped(rewards, group_size)
    centred = grouped - (grouped.sum(1, keepdim=True) - grouped) / (group_size - 1)
    if normalize_std:
        centred = centred / (grouped.std(1, keepdim=True) + eps)
    return centred.reshape(-1)


@mistake("group_adv", "group_advantages", "always_std",
         hint="with normalize_std=False (Dr. GRPO) do not divide by the std: the advantage is r - mean")
def always_std(rewards, group_size, normalize_std=True, eps=1e-6):
    grouped = _grouped(rewards, group_size)
    return ((grouped - grouped.mean(1, keepdim=True)) / (grouped.std(1, keepdim=True) + eps)).reshape(-1)


@mistake("group_adv", "group_advantages", "equal_group_rounding",
         hint="a group of equal rewards must get exactly 0, but in float32 their computed mean can be a rounding "
              "error off, which dividing by std + eps magnifies: give such a group 0 (or centre on its first reward)")
def equal_group_rounding(rewards, group_size, normalize_std=True, eps=1e-6):
    grouped = _grouped(rewards, group_size)
    centred = grouped - grouped.mean(1, keepdim=True)
    if normalize_std:
        centred = centred / (grouped.std(1, keepdim=True) + eps)
    return centred.reshape(-1)


# ------------------------------------------------------------------ correct variants
@variant("group_adv", "group_advantages", "loop_over_groups", source=sources.VERL_GRPO_LOOP)
def loop_over_groups(rewards, group_size, normalize_std=True, eps=1e-6):
    if rewards.shape[0] % group_size:
        raise ValueError("not whole groups")
    out = []
    for start in range(0, rewards.shape[0], group_size):
        group = rewards[start:start + group_size]
        if bool((group == group[0]).all()):  # the docstring's guard: its mean may round away from its value
            out.append(torch.zeros_like(group))
            continue
        a = group - torch.mean(group)
        out.append(a / (torch.std(group) + eps) if normalize_std else a)
    return torch.cat(out)


@variant("group_adv", "group_advantages", "bessel_by_hand")
def bessel_by_hand(rewards, group_size, normalize_std=True, eps=1e-6):
    if rewards.numel() % group_size != 0:
        raise ValueError("rewards must be whole groups")
    g = rewards.reshape(-1, group_size)
    mean = g.sum(1, keepdim=True) / group_size
    a = g - mean
    if normalize_std:
        a = a / (((a ** 2).sum(1, keepdim=True) / (group_size - 1)).sqrt() + eps)
    return torch.where(g.amax(1, keepdim=True) == g.amin(1, keepdim=True), 0.0, a).flatten()
