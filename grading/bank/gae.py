"""Known mistakes and correct variants of compute_gae (see bank/__init__.py)."""

from __future__ import annotations

import torch

from autograder.lab.bank import mistake, variant

# ------------------------------------------------------------------ mistakes


@mistake("gae", "compute_gae", "forward_recursion", fails="gae.matches_reference",
         hint="the recursion must run backwards in time (t = T-1 down to 0): A_t needs A_{t+1}")
def forward_recursion(rewards, values, mask, gamma=1.0, lam=0.95):
    T = rewards.shape[1]
    advantages = torch.zeros_like(rewards)
    prev_adv = torch.zeros_like(rewards[:, 0])
    for t in range(T):
        m = mask[:, t]
        next_value = values[:, t + 1] * mask[:, t + 1] if t + 1 < T else torch.zeros_like(m)
        delta = rewards[:, t] + gamma * next_value - values[:, t]
        prev_adv = (delta + gamma * lam * prev_adv) * m
        advantages[:, t] = prev_adv
    return advantages, advantages + values


@mistake("gae", "compute_gae", "loop_runs_forwards",
         hint="the loop must run backwards in time (for t in reversed(range(T))): A_t needs A_{t+1}, "
              "which a forward loop has not computed yet")
def loop_runs_forwards(rewards, values, mask, gamma=1.0, lam=0.95):
    T = rewards.shape[1]
    advantages = torch.zeros_like(rewards)
    next_value = torch.zeros_like(rewards[:, 0])
    next_adv = torch.zeros_like(rewards[:, 0])
    for t in range(T):
        m = mask[:, t]
        delta = rewards[:, t] + gamma * next_value - values[:, t]
        adv = delta + gamma * lam * next_adv
        advantages[:, t] = adv * m
        next_value = values[:, t] * m
        next_adv = adv * m
    return advantages, advantages + values


@mistake("gae", "compute_gae", "no_mask", fails="gae.padding_ignored",
         hint="after the last generated token V_{t+1} = 0: bootstrapping from the values at padded positions "
              "(mask == 0) leaks garbage into the advantages")
def no_mask(rewards, values, mask, gamma=1.0, lam=0.95):
    T = rewards.shape[1]
    advantages = torch.zeros_like(rewards)
    next_adv = torch.zeros_like(rewards[:, 0])
    for t in reversed(range(T)):
        next_value = values[:, t + 1] if t + 1 < T else torch.zeros_like(values[:, t])
        delta = rewards[:, t] + gamma * next_value - values[:, t]
        next_adv = delta + gamma * lam * next_adv
        advantages[:, t] = next_adv
    return advantages * mask, (advantages + values) * mask


@mistake("gae", "compute_gae", "mask_off_by_one", fails="gae.padding_ignored",
         hint="whether V_{t+1} counts depends on mask[:, t+1] (is token t+1 generated?), not on mask[:, t]")
def mask_off_by_one(rewards, values, mask, gamma=1.0, lam=0.95):
    T = rewards.shape[1]
    advantages = torch.zeros_like(rewards)
    next_adv = torch.zeros_like(rewards[:, 0])
    for t in reversed(range(T)):
        m = mask[:, t]
        next_value = values[:, t + 1] * m if t + 1 < T else torch.zeros_like(m)
        delta = rewards[:, t] + gamma * next_value - values[:, t]
        next_adv = (delta + gamma * lam * next_adv) * m
        advantages[:, t] = next_adv
    return advantages, advantages + values


@mistake("gae", "compute_gae", "whitened_inside", fails="gae.matches_reference",
         hint="do not whiten (normalise) the advantages inside compute_gae: the training loop does that")
def whitened_inside(rewards, values, mask, gamma=1.0, lam=0.95):
    T = rewards.shape[1]
    advantages = torch.zeros_like(rewards)
    next_value = torch.zeros_like(rewards[:, 0])
    next_adv = torch.zeros_like(rewards[:, 0])
    for t in reversed(range(T)):
        m = mask[:, t]
        delta = rewards[:, t] + gamma * next_value - values[:, t]
        next_adv = (delta + gamma * lam * next_adv) * m
        advantages[:, t] = next_adv
        next_value = values[:, t] * m
    returns = advantages + values
    keep = mask.bool()
    mean, std = advantages[keep].mean(), advantages[keep].std(unbiased=False)
    return (advantages - mean) / (std + 1e-8) * mask, returns


@mistake("gae", "compute_gae", "gamma_lam_swapped", fails="gae.lambda_zero_td_error",
         hint="the TD error discounts V_{t+1} with gamma, not lam: delta_t = r_t + gamma V_{t+1} - V_t")
def gamma_lam_swapped(rewards, values, mask, gamma=1.0, lam=0.95):
    T = rewards.shape[1]
    advantages = torch.zeros_like(rewards)
    next_value = torch.zeros_like(rewards[:, 0])
    next_adv = torch.zeros_like(rewards[:, 0])
    for t in reversed(range(T)):
        m = mask[:, t]
        delta = rewards[:, t] + lam * next_value - values[:, t]
        next_adv = (delta + lam * gamma * next_adv) * m
        advantages[:, t] = next_adv
        next_value = values[:, t] * m
    return advantages, advantages + values


@mistake("gae", "compute_gae", "no_gamma_in_delta", fails="gae.lambda_zero_td_error",
         hint="the TD error discounts the next value: delta_t = r_t + gamma * V_{t+1} - V_t")
def no_gamma_in_delta(rewards, values, mask, gamma=1.0, lam=0.95):
    T = rewards.shape[1]
    advantages = torch.zeros_like(rewards)
    next_value = torch.zeros_like(rewards[:, 0])
    next_adv = torch.zeros_like(rewards[:, 0])
    for t in reversed(range(T)):
        m = mask[:, t]
        delta = rewards[:, t] + next_value - values[:, t]
        next_adv = (delta + gamma * lam * next_adv) * m
        advantages[:, t] = next_adv
        next_value = values[:, t] * m
    return advantages, advantages + values


@mistake("gae", "compute_gae", "no_gamma_lam_in_recursion", fails="gae.lambda_one_reward_to_go",
         hint="the next advantage is discounted by gamma * lam: A_t = delta_t + gamma * lam * A_{t+1}")
def no_gamma_lam_in_recursion(rewards, values, mask, gamma=1.0, lam=0.95):
    T = rewards.shape[1]
    advantages = torch.zeros_like(rewards)
    next_value = torch.zeros_like(rewards[:, 0])
    next_adv = torch.zeros_like(rewards[:, 0])
    for t in reversed(range(T)):
        m = mask[:, t]
        delta = rewards[:, t] + gamma * next_value - values[:, t]
        next_adv = (delta + next_adv) * m
        advantages[:, t] = next_adv
        next_value = values[:, t] * m
    return advantages, advantages + values


@mistake("gae", "compute_gae", "lam_only_in_recursion",
         hint="the next advantage is discounted by gamma * lam, not by lam alone")
def lam_only_in_recursion(rewards, values, mask, gamma=1.0, lam=0.95):
    T = rewards.shape[1]
    advantages = torch.zeros_like(rewards)
    next_value = torch.zeros_like(rewards[:, 0])
    next_adv = torch.zeros_like(rewards[:, 0])
    for t in reversed(range(T)):
        m = mask[:, t]
        delta = rewards[:, t] + gamma * next_value - values[:, t]
        next_adv = (delta + lam * next_adv) * m
        advantages[:, t] = next_adv
        next_value = values[:, t] * m
    return advantages, advantages + values


@mistake("gae", "compute_gae", "returns_reward_to_go", fails="gae.returns_are_advantages_plus_values",
         hint="the returns the critic learns are advantages + values, not the discounted reward-to-go")
def returns_reward_to_go(rewards, values, mask, gamma=1.0, lam=0.95):
    T = rewards.shape[1]
    advantages = torch.zeros_like(rewards)
    returns = torch.zeros_like(rewards)
    next_value = torch.zeros_like(rewards[:, 0])
    next_adv = torch.zeros_like(rewards[:, 0])
    next_return = torch.zeros_like(rewards[:, 0])
    for t in reversed(range(T)):
        m = mask[:, t]
        delta = rewards[:, t] + gamma * next_value - values[:, t]
        next_adv = (delta + gamma * lam * next_adv) * m
        next_return = (rewards[:, t] + gamma * next_return) * m
        advantages[:, t], returns[:, t] = next_adv, next_return
        next_value = values[:, t] * m
    return advantages, returns


@mistake("gae", "compute_gae", "outputs_swapped", fails="gae.returns_are_advantages_plus_values",
         hint="return (advantages, returns) in this order")
def outputs_swapped(rewards, values, mask, gamma=1.0, lam=0.95):
    T = rewards.shape[1]
    advantages = torch.zeros_like(rewards)
    next_value = torch.zeros_like(rewards[:, 0])
    next_adv = torch.zeros_like(rewards[:, 0])
    for t in reversed(range(T)):
        m = mask[:, t]
        delta = rewards[:, t] + gamma * next_value - values[:, t]
        next_adv = (delta + gamma * lam * next_adv) * m
        advantages[:, t] = next_adv
        next_value = values[:, t] * m
    return advantages + values, advantages


@mistake("gae", "compute_gae", "next_value_wraps_around", fails="gae.lambda_zero_td_error",
         hint="V_{t+1} after the last column is 0: torch.roll wraps V_0 around into the last position")
def next_value_wraps_around(rewards, values, mask, gamma=1.0, lam=0.95):
    next_values = torch.roll(values * mask, shifts=-1, dims=1)
    deltas = (rewards + gamma * next_values - values) * mask
    advantages = torch.zeros_like(rewards)
    next_adv = torch.zeros_like(rewards[:, 0])
    for t in reversed(range(rewards.shape[1])):
        next_adv = (deltas[:, t] + gamma * lam * next_adv) * mask[:, t]
        advantages[:, t] = next_adv
    return advantages, advantages + values


@mistake("gae", "compute_gae", "next_value_off_by_one",
         hint="delta_t bootstraps from the value of the next state, V_{t+1}, not from V_t or V_{t+2}")
def next_value_off_by_one(rewards, values, mask, gamma=1.0, lam=0.95):
    T = rewards.shape[1]
    advantages = torch.zeros_like(rewards)
    next_adv = torch.zeros_like(rewards[:, 0])
    for t in reversed(range(T)):
        m = mask[:, t]
        next_value = values[:, t + 2] * mask[:, t + 2] if t + 2 < T else torch.zeros_like(m)
        delta = rewards[:, t] + gamma * next_value - values[:, t]
        next_adv = (delta + gamma * lam * next_adv) * m
        advantages[:, t] = next_adv
    return advantages, advantages + values


# ------------------------------------------------------------------ correct variants


@variant("gae", "compute_gae", "element_loops_float64")
def element_loops_float64(rewards, values, mask, gamma=1.0, lam=0.95):
    B, T = rewards.shape
    r, v, m = rewards.double(), values.double(), mask.double()
    advantages = torch.zeros(B, T, dtype=torch.float64)
    for b in range(B):
        length = int(m[b].sum().item())
        running = 0.0
        for t in reversed(range(length)):
            next_value = v[b, t + 1].item() if t + 1 < length else 0.0
            delta = r[b, t].item() + gamma * next_value - v[b, t].item()
            running = delta + gamma * lam * running
            advantages[b, t] = running
    advantages = advantages.to(rewards.dtype)
    return advantages, advantages + values


@variant("gae", "compute_gae", "discount_matrix")
def discount_matrix(rewards, values, mask, gamma=1.0, lam=0.95):
    T = rewards.shape[1]
    r = torch.where(mask.bool(), rewards, torch.zeros_like(rewards))
    v = torch.where(mask.bool(), values, torch.zeros_like(values))
    next_v = torch.cat([v[:, 1:], torch.zeros_like(v[:, :1])], dim=1)
    deltas = (r + gamma * next_v - v) * mask
    steps = torch.arange(T)
    power = (steps[None, :] - steps[:, None]).clamp(min=0).to(rewards.dtype)  # [t, k] = k - t
    weights = torch.where(steps[None, :] >= steps[:, None], (gamma * lam) ** power, torch.zeros_like(power))
    advantages = deltas @ weights.T
    return advantages, advantages + values


@variant("gae", "compute_gae", "flip_and_scan")
def flip_and_scan(rewards, values, mask, gamma=1.0, lam=0.95):
    keep = mask.bool()
    r = torch.where(keep, rewards, torch.zeros_like(rewards)).flip(1)
    v = torch.where(keep, values, torch.zeros_like(values)).flip(1)
    previous_v = torch.cat([torch.zeros_like(v[:, :1]), v[:, :-1]], dim=1)  # reversed time: V_{t+1}
    deltas = r + gamma * previous_v - v
    out = []
    running = torch.zeros_like(r[:, 0])
    for i in range(r.shape[1]):
        running = deltas[:, i] + gamma * lam * running
        out.append(running)
    advantages = torch.where(keep, torch.stack(out, dim=1).flip(1), torch.zeros_like(rewards))
    return advantages, advantages + values
