"""The given GRPO and DPO training code that your five functions plug into.

Both loops take your functions as arguments (never importing them by name), so any mix of
implementations can be trained, compared and graded:

    history = train_grpo(policy, parts, GRPOConfig())          # RL with the verifiable reward
    pairs = collect_pairs(policy, n_prompts=512, seed=0)       # the hidden labeler's preferences
    history = train_dpo(policy, pairs, parts.dpo_loss, parts, DPOConfig(beta=0.1))

`Parts` bundles the five contract functions; `Parts.from_module(posttrain)` takes them from a module.
The world (tinylm.py, lab_helpers.py, sft.pt) is Lab 12's, unchanged, beside this file.
"""

from __future__ import annotations

import copy
import dataclasses
import random
from dataclasses import dataclass
from types import ModuleType
from typing import Callable

import tinylm
import torch
from lab_helpers import collect_rankings, gold_score

CONTRACT = ("group_advantages", "grpo_policy_loss", "sequence_logprob", "dpo_loss", "ipo_loss")


@dataclass(frozen=True)
class Parts:
    """The five functions of the student contract (see posttrain.py for what each computes)."""

    group_advantages: Callable
    grpo_policy_loss: Callable
    sequence_logprob: Callable
    dpo_loss: Callable
    ipo_loss: Callable

    @classmethod
    def from_module(cls, module: ModuleType) -> "Parts":
        missing = [name for name in CONTRACT if not callable(getattr(module, name, None))]
        if missing:
            raise AttributeError(f"{module.__name__} does not define {', '.join(missing)}")
        return cls(**{name: getattr(module, name) for name in CONTRACT})

    def replace(self, **functions: Callable) -> "Parts":
        """A copy with some functions swapped (e.g. the reference for the parts not under test)."""
        return dataclasses.replace(self, **functions)


def probe_inputs() -> dict[str, tuple]:
    """A tiny valid input for each contract function (to find unimplemented ones before training)."""
    x, mask, p = torch.zeros(2, 2), torch.ones(2, 2), torch.zeros(1)
    return {
        "group_advantages": (torch.tensor([1.0, 0.0]), 2),
        "grpo_policy_loss": (x, x, x, torch.zeros(2), mask),
        "sequence_logprob": (x, mask),
        "dpo_loss": (p, p, p, p),
        "ipo_loss": (p, p, p, p),
    }


@torch.no_grad()
def greedy_accuracy(policy: tinylm.TinyLM, n: int = 512, seed: int = 4321) -> float:
    """Exact-answer rate of greedy decoding on n fresh problems (fixed by `seed`)."""
    return tinylm.accuracy(policy, n=n, seed=seed, greedy=True)


@torch.no_grad()
def gold_metrics(policy: tinylm.TinyLM, ref: tinylm.TinyLM, n: int = 512, seed: int = 1234) -> dict:
    """Mean gold score, malformed fraction, sampled accuracy and sequence KL(policy || ref) (k1, on the
    policy's samples) of n fresh prompts sampled at temperature 1."""
    torch.manual_seed(seed)
    prompts, answers = tinylm.make_batch(n, random.Random(seed))
    out = tinylm.sample(policy, prompts, temperature=1.0)
    gold = gold_score(out)
    kl = ((tinylm.sequence_logprobs(policy, out) - tinylm.sequence_logprobs(ref, out)) * out["mask"]).sum(1)
    responses = tinylm.decode_responses(out)
    return {"gold": gold.mean().item(), "malformed": (gold == -1).float().mean().item(),
            "accuracy": sum(tinylm.reward(r, a) for r, a in zip(responses, answers)) / n,
            "kl": kl.mean().item()}


def on_tokens(x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """x with every position where mask == 0 set to 0."""
    return torch.where(mask > 0, x, torch.zeros_like(x))


def rows_of(out: dict, rows: torch.Tensor) -> dict:
    return {"ids": out["ids"][rows], "mask": out["mask"][rows], "prompt_len": out["prompt_len"]}


# ---------------------------------------------------------------- GRPO with the verifiable reward
@dataclass
class GRPOConfig:
    iterations: int = 30
    prompts: int = 16          # prompts per iteration
    group_size: int = 8        # sampled answers per prompt (G)
    epochs: int = 2            # passes over each batch of rollouts
    minibatches: int = 2
    lr: float = 3e-4
    clip_eps: float = 0.2
    beta: float = 0.04         # k3 KL coefficient
    normalize_std: bool = True
    aggregation: str = "token_mean"
    max_grad_norm: float = 1.0
    seed: int = 0


def train_grpo(policy: tinylm.TinyLM, parts: Parts, cfg: GRPOConfig,
               on_iteration: Callable[[int, dict], None] | None = None) -> list[dict]:
    """Optimise `policy` (in place) with GRPO on the addition task's verifiable reward.

    Each iteration samples `group_size` answers to each of `prompts` fresh problems at temperature 1,
    scores them with tinylm.reward, and takes clipped policy steps against a frozen copy of `policy`.
    Returns one dict per iteration: mean reward, the share of groups whose rewards are all equal
    (advantage 0: they teach nothing), mean response length and the rollouts' sequence KL (k1).
    """
    torch.manual_seed(cfg.seed)
    rng = random.Random(cfg.seed)
    ref = copy.deepcopy(policy).eval().requires_grad_(False)
    opt = torch.optim.Adam(policy.parameters(), lr=cfg.lr)
    B, G = cfg.prompts * cfg.group_size, cfg.group_size
    history = []
    for it in range(cfg.iterations):
        prompts, answers = tinylm.make_batch(cfg.prompts, rng)
        out = tinylm.sample(policy, [p for p in prompts for _ in range(G)], temperature=1.0)
        mask = out["mask"]
        rewards = torch.tensor([tinylm.reward(r, a) for r, a in
                                zip(tinylm.decode_responses(out), [a for a in answers for _ in range(G)])])
        with torch.no_grad():
            advantages = parts.group_advantages(rewards, G, cfg.normalize_std)
            old_logp = tinylm.sequence_logprobs(policy, out)
            ref_logp = tinylm.sequence_logprobs(ref, out)
        for _ in range(cfg.epochs):
            for rows in torch.randperm(B).chunk(cfg.minibatches):
                logp = tinylm.sequence_logprobs(policy, rows_of(out, rows))
                loss = parts.grpo_policy_loss(logp, old_logp[rows], ref_logp[rows], advantages[rows], mask[rows],
                                              cfg.clip_eps, cfg.beta, cfg.aggregation)
                opt.zero_grad()
                loss.backward()
                torch.nn.utils.clip_grad_norm_(policy.parameters(), cfg.max_grad_norm)
                opt.step()
        grouped = rewards.view(-1, G)
        stats = {"reward": rewards.mean().item(),
                 "equal_groups": (grouped.max(1).values == grouped.min(1).values).float().mean().item(),
                 "length": mask.sum(1).mean().item(),
                 "kl": ((old_logp - ref_logp) * mask).sum(1).mean().item()}
        history.append(stats)
        if on_iteration is not None:
            on_iteration(it, stats)
    return history


# ---------------------------------------------------------------- DPO on the labeler's preferences
def collect_pairs(policy: tinylm.TinyLM, n_prompts: int, K: int = 4, seed: int = 0) -> dict:
    """Preference pairs from the hidden labeler: K samples per prompt, its best against its worst.

    Returns {"chosen": sample-output, "rejected": sample-output} with P = n_prompts rows each (the
    labeler's ranking is noisy: a pair may be a tie or even the wrong way round, as with people).
    """
    data = collect_rankings(policy, n_prompts, K, seed)
    best = [d["ranking"][0] for d in data]
    worst = [d["ranking"][-1] for d in data]

    def stack(picks: list[int]) -> dict:
        ids = torch.stack([d["out"]["ids"][i] for d, i in zip(data, picks)])
        mask = torch.stack([d["out"]["mask"][i] for d, i in zip(data, picks)])
        return {"ids": ids, "mask": mask, "prompt_len": data[0]["out"]["prompt_len"]}

    return {"chosen": stack(best), "rejected": stack(worst)}


@dataclass
class DPOConfig:
    steps: int = 60
    batch_size: int = 64       # pairs per step
    lr: float = 1e-3
    beta: float = 0.1
    max_grad_norm: float = 1.0
    seed: int = 0


def train_dpo(policy: tinylm.TinyLM, pairs: dict, loss_fn: Callable, parts: Parts, cfg: DPOConfig,
              on_step: Callable[[int, dict], None] | None = None) -> list[dict]:
    """Optimise `policy` (in place) on `pairs` with a preference loss (`parts.dpo_loss` or `parts.ipo_loss`).

    The reference is a frozen copy of `policy` as given; sequence log-probs come from
    `parts.sequence_logprob`. Returns one dict per step: the loss, the mean implicit reward margin
    h = (policy - ref)(chosen) - (policy - ref)(rejected) and the policy's change of chosen log-prob.
    """
    torch.manual_seed(cfg.seed)
    ref = copy.deepcopy(policy).eval().requires_grad_(False)
    opt = torch.optim.Adam(policy.parameters(), lr=cfg.lr)
    chosen, rejected = pairs["chosen"], pairs["rejected"]
    P = chosen["ids"].shape[0]
    with torch.no_grad():
        ref_c = parts.sequence_logprob(tinylm.sequence_logprobs(ref, chosen), chosen["mask"])
        ref_r = parts.sequence_logprob(tinylm.sequence_logprobs(ref, rejected), rejected["mask"])
    history = []
    for step in range(cfg.steps):
        rows = torch.randint(P, (cfg.batch_size,))
        c, r = rows_of(chosen, rows), rows_of(rejected, rows)
        pol_c = parts.sequence_logprob(tinylm.sequence_logprobs(policy, c), c["mask"])
        pol_r = parts.sequence_logprob(tinylm.sequence_logprobs(policy, r), r["mask"])
        loss = loss_fn(pol_c, pol_r, ref_c[rows], ref_r[rows], cfg.beta)
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(policy.parameters(), cfg.max_grad_norm)
        opt.step()
        with torch.no_grad():
            margin = ((pol_c - ref_c[rows]) - (pol_r - ref_r[rows])).mean().item()
            stats = {"loss": loss.item(), "margin": margin, "chosen_logp_change": (pol_c - ref_c[rows]).mean().item()}
        history.append(stats)
        if on_step is not None:
            on_step(step, stats)
    return history
