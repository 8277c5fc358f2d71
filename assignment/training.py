"""The given RLHF training code that your seven functions plug into.

Two stages, each taking your functions as arguments (never importing them by name), so any mix of
implementations can be trained, compared and graded:

    rm = train_reward_model(rankings, parts.ranking_loss)          # stage 1: learn the labeler
    history = train_ppo(policy, rm, parts, PPOConfig(beta=0.2))    # stage 2: optimise against it

`Parts` bundles the seven contract functions; `Parts.from_module(rlhf)` takes them from a module.
"""

from __future__ import annotations

import copy
import dataclasses
import random
from dataclasses import dataclass
from types import ModuleType
from typing import Callable, Iterator

import torch

from lab_helpers import DigitRM, ValueModel, digit_counts, gold_score, masked_whiten, sft_loss
from tinylm import TinyLM, decode_responses, make_batch, reward, sample, sequence_logprobs

@dataclass(frozen=True)
class Parts:
    """The seven functions of the student contract (see rlhf.py for what each computes)."""

    bradley_terry_loss: Callable
    ranking_loss: Callable
    compute_gae: Callable
    ppo_policy_loss: Callable
    ppo_value_loss: Callable
    kl_estimate: Callable
    shaped_rewards: Callable

    @classmethod
    def from_module(cls, module: ModuleType) -> "Parts":
        missing = [name for name in CONTRACT if not callable(getattr(module, name, None))]
        if missing:
            raise AttributeError(f"{module.__name__} does not define {', '.join(missing)}")
        return cls(**{name: getattr(module, name) for name in CONTRACT})

    def replace(self, **functions: Callable) -> "Parts":
        """A copy with some functions swapped (e.g. the reference for the parts not under test)."""
        return dataclasses.replace(self, **functions)


CONTRACT = tuple(f.name for f in dataclasses.fields(Parts))  # the seven function names, in rlhf.py's order


def probe_inputs() -> dict[str, tuple]:
    """A tiny valid input for each contract function (to find unimplemented ones before training)."""
    x, mask = torch.zeros(1, 2), torch.ones(1, 2)
    return {
        "bradley_terry_loss": (torch.zeros(1), torch.zeros(1)),
        "ranking_loss": (torch.zeros(1, 2), torch.tensor([[0, 1]])),
        "compute_gae": (x, x, mask),
        "ppo_policy_loss": (x, x, x, mask),
        "ppo_value_loss": (x, x, x, mask),
        "kl_estimate": (x, x),
        "shaped_rewards": (torch.zeros(1), x, x, mask, 0.1),
    }


# ---------------------------------------------------------------- stage 1: the reward model
def ranking_tensors(rankings: list[dict]) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """`collect_rankings` output -> counts (N, K, 10), ranking (N, K) long, gold (N, K)."""
    counts = torch.stack([digit_counts(d["out"]) for d in rankings])
    ranking = torch.tensor([d["ranking"] for d in rankings], dtype=torch.long)
    gold = torch.stack([d["gold"] for d in rankings])
    return counts, ranking, gold


def train_reward_model(rankings: list[dict], ranking_loss: Callable, steps: int = 300,
                       lr: float = 0.05, batch_size: int | None = None, seed: int = 0) -> DigitRM:
    """Fit a DigitRM to the labeler's rankings with `ranking_loss` (Adam).

    batch_size None: every step sees all N rankings (full batch). Otherwise each step sees `batch_size`
    of them, in epochs of a random order drawn from `seed` (each ranking once per epoch).
    """
    counts, ranking, _ = ranking_tensors(rankings)
    rm = DigitRM()
    opt = torch.optim.Adam(rm.parameters(), lr=lr)
    batches = _minibatches(len(rankings), batch_size, seed) if batch_size is not None else None
    for _ in range(steps):
        rows = next(batches) if batches is not None else slice(None)
        loss = ranking_loss(rm(counts[rows]), ranking[rows])
        opt.zero_grad()
        loss.backward()
        opt.step()
    return rm


def _minibatches(n: int, batch_size: int, seed: int) -> Iterator[torch.Tensor]:
    """Row indices of `batch_size` rankings at a time: epochs of a random order of range(n) from `seed`."""
    generator = torch.Generator().manual_seed(seed)
    order = torch.empty(0, dtype=torch.long)
    while True:
        if len(order) < batch_size:
            order = torch.randperm(n, generator=generator)
        rows, order = order[:batch_size], order[batch_size:]
        yield rows


@torch.no_grad()
def pairwise_accuracy(rm: DigitRM, rankings: list[dict]) -> float:
    """How often the RM orders two responses to one prompt as the gold score does (ties skipped)."""
    counts, _, gold = ranking_tensors(rankings)
    r = rm(counts)  # (N, K)
    dr = r[:, :, None] - r[:, None, :]
    dg = gold[:, :, None] - gold[:, None, :]
    decided = dg > 0
    return ((dr > 0) & decided).sum().item() / max(decided.sum().item(), 1)


# ---------------------------------------------------------------- stage 2: PPO
@dataclass
class PPOConfig:
    iterations: int = 120
    batch_size: int = 32      # rollouts per iteration
    epochs: int = 4           # passes over each batch of rollouts
    minibatches: int = 2
    lr: float = 2e-4
    clip_eps: float = 0.2
    beta: float = 0.2         # KL penalty coefficient (0 = no penalty)
    kl_kind: str = "k1"
    gamma: float = 1.0
    lam: float = 0.95
    vf_coef: float = 0.5
    ptx_coef: float = 0.0     # weight of the SFT loss mixed in (PPO-ptx); 0 = off
    max_grad_norm: float = 1.0
    seed: int = 0


@torch.no_grad()
def response_metrics(out: dict, answers: list[str], scores: torch.Tensor) -> dict:
    """Metrics of a batch of responses, computed with the given world only (never a contract function):
    mean RM score, mean gold score, malformed fraction, arithmetic accuracy, mean length in tokens."""
    gold = gold_score(out)
    responses = decode_responses(out)
    return {
        "rm_score": scores.mean().item(),
        "gold": gold.mean().item(),
        "malformed": (gold == -1).float().mean().item(),
        "accuracy": sum(reward(r, a) for r, a in zip(responses, answers)) / len(answers),
        "length": out["mask"].sum(1).mean().item(),
    }


@torch.no_grad()
def evaluate_policy(policy: TinyLM, rm: DigitRM, n: int = 512, seed: int = 1234) -> dict:
    """`response_metrics` of a policy on n fresh prompts sampled at temperature 1 (fixed by `seed`)."""
    torch.manual_seed(seed)
    prompts, answers = make_batch(n, random.Random(seed))
    out = sample(policy, prompts, temperature=1.0)
    return response_metrics(out, answers, rm(digit_counts(out)))


def on_tokens(x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """x with every position where mask == 0 set to 0 (the contract lets functions put anything there)."""
    return torch.where(mask > 0, x, torch.zeros_like(x))


def minibatch(out: dict, rows: torch.Tensor) -> dict:
    return {"ids": out["ids"][rows], "mask": out["mask"][rows], "prompt_len": out["prompt_len"]}


def train_ppo(policy: TinyLM, rm: DigitRM, parts: Parts, cfg: PPOConfig,
              on_iteration: Callable[[int, dict], None] | None = None) -> list[dict]:
    """Optimise `policy` (in place) against `rm` with PPO and a per-token KL penalty.

    The reference policy is a frozen copy of `policy` as given; the critic starts from it too.
    Returns one dict of metrics per iteration (`response_metrics` of the rollouts, plus "kl").
    """
    torch.manual_seed(cfg.seed)
    rng = random.Random(cfg.seed)
    ref = copy.deepcopy(policy).eval().requires_grad_(False)
    critic = ValueModel(policy)
    opt = torch.optim.Adam(list(policy.parameters()) + list(critic.parameters()), lr=cfg.lr, fused=True)
    params = [p for group in opt.param_groups for p in group["params"]]
    history = []
    for it in range(cfg.iterations):
        # 1. rollouts at temperature 1, scored by the reward model on the whole response
        prompts, answers = make_batch(cfg.batch_size, rng)
        out = sample(policy, prompts, temperature=1.0)
        mask = out["mask"]
        with torch.no_grad():
            scores = rm(digit_counts(out))
            old_logp = sequence_logprobs(policy, out)
            ref_logp = sequence_logprobs(ref, out)
            old_values = critic(out)
            # 2. per-token rewards with the KL penalty, then advantages
            rewards = on_tokens(parts.shaped_rewards(scores, old_logp, ref_logp, mask, cfg.beta,
                                                     cfg.kl_kind), mask)
            advantages, returns = parts.compute_gae(rewards, old_values, mask, cfg.gamma, cfg.lam)
            advantages, returns = masked_whiten(on_tokens(advantages, mask), mask), on_tokens(returns, mask)
        # 3. several epochs of clipped policy and value updates on minibatches
        for _ in range(cfg.epochs):
            for rows in torch.randperm(cfg.batch_size).chunk(cfg.minibatches):
                mb = minibatch(out, rows)
                logp = sequence_logprobs(policy, mb)
                loss = parts.ppo_policy_loss(logp, old_logp[rows], advantages[rows], mask[rows],
                                             cfg.clip_eps)
                values = critic(mb)
                loss = loss + cfg.vf_coef * parts.ppo_value_loss(
                    values, old_values[rows], returns[rows], mask[rows], cfg.clip_eps)
                if cfg.ptx_coef > 0:
                    loss = loss + cfg.ptx_coef * sft_loss(policy, len(rows), rng)
                opt.zero_grad()
                loss.backward()
                torch.nn.utils.clip_grad_norm_(params, cfg.max_grad_norm)
                opt.step()
        stats = response_metrics(out, answers, scores)
        stats["kl"] = ((old_logp - ref_logp) * mask).sum(1).mean().item()  # sequence-level KL (k1)
        history.append(stats)
        if on_iteration is not None:
            on_iteration(it, stats)
    return history
