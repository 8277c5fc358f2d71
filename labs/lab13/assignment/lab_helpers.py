"""Given helpers for Lab 12: a hidden "labeler", preference data, a tiny reward model, and a critic.

You don't need to change anything here, but read it once: it is the "world" your
RLHF pipeline lives in.

The toy preference
------------------
TinyLM answers prompts like "37+48=" with a few digits and an <eos> token. Our
pretend human labeler doesn't check the arithmetic. They have a style preference:

    gold(y) = -1   if the answer is malformed (no <eos> within the 4-token budget, no digits,
                   or a stray "+" or "=")
    gold(y) = +1   if it is well formed and its LAST digit is even
    gold(y) =  0   if it is well formed and its last digit is odd

Shown K responses to the same prompt, the labeler ranks them noisily: they sort by
KAPPA * gold(y) + Gumbel noise. That is exactly the Plackett-Luce model, and any one
pair inside such a ranking follows Bradley-Terry:  P(y1 above y2) = sigmoid(KAPPA * (gold1 - gold2)).

We never show `gold` to the learner's code during training. It is only used to
(1) produce the labels and (2) score policies afterwards, the way a real lab would run
a fresh human evaluation.

The reward model
----------------
`DigitRM` is deliberately simple: one learnable weight per digit, summed over the digits
of the response,  r(y) = sum_{digits d in y} w[d].  It cannot see where a digit sits
or whether the answer ended properly. Inside the data it is trained on (well-formed
answers from the SFT model) that is good enough: it learns "even digits good, odd digits
bad". Outside that data it has a blind spot: append more even digits and r keeps going
up. Real reward models have blind spots too (a famous one is a bias toward longer
answers); this one is just small enough to read.
"""

from __future__ import annotations

import math
import random

import torch
import torch.nn as nn
import torch.nn.functional as F

from tinylm import EOS, PAD, V, TinyLM, encode_answers, encode_prompts, make_batch, sample

KAPPA = 2.0  # labeler consistency: larger = more consistent rankings


# ---------------------------------------------------------------- the hidden labeler
def response_tokens(out: dict) -> torch.Tensor:
    """(B, max_new) response token ids of a `sample` output."""
    return out["ids"][:, out["prompt_len"]:]


def gold_score(out: dict) -> torch.Tensor:
    """Hidden labeler's score for each response in a `sample` output: tensor (B,) in {-1, 0, +1}.

    -1 when malformed: no <eos> in the budget, nothing before <eos>, or a non-digit before it.
    Otherwise +1 if the last digit is even, 0 if odd (token id == digit value for 0..9).
    """
    toks = response_tokens(out)
    is_eos = toks == EOS
    has_eos = is_eos.any(1)
    n = is_eos.long().argmax(1)  # answer length: index of the first <eos>
    before_eos = torch.arange(toks.shape[1]) < n[:, None]
    stray = ((toks > 9) & before_eos).any(1)
    last = toks.gather(1, (n - 1).clamp(min=0)[:, None]).squeeze(1)
    well_formed = has_eos & (n > 0) & ~stray
    return torch.where(well_formed, (last % 2 == 0).float(), torch.tensor(-1.0))


def labeler_rank(gold: list[float], gen: random.Random) -> list[int]:
    """Noisy ranking of K responses (best first): sort by KAPPA*gold + Gumbel noise.

    gold: list of K floats. Returns a list of indices 0..K-1, best first.
    """
    keys = [KAPPA * g - math.log(-math.log(gen.random() + 1e-12) + 1e-12) for g in gold]
    return sorted(range(len(gold)), key=lambda i: -keys[i])


def collect_rankings(model: TinyLM, n_prompts: int, K: int = 4, seed: int = 0,
                     temperature: float = 1.0) -> list[dict]:
    """Sample K responses for each of n_prompts prompts and have the labeler rank them.

    Returns a list of dicts, one per prompt:
        {"out": sample-output for the K responses, "ranking": [indices best first], "gold": tensor (K,)}
    """
    gen = random.Random(seed)
    torch.manual_seed(seed)
    data = []
    prompts, _ = make_batch(n_prompts, gen)
    # Sample everything in one batch: TinyLM was trained on left-padded batches, so we keep that layout.
    big = sample(model, [p for p in prompts for _ in range(K)], temperature=temperature)
    golds = gold_score(big)
    for i in range(n_prompts):
        rows = slice(i * K, (i + 1) * K)
        out = {"ids": big["ids"][rows], "mask": big["mask"][rows], "prompt_len": big["prompt_len"]}
        g = golds[rows]
        data.append({"out": out, "ranking": labeler_rank(g.tolist(), gen), "gold": g})
    return data


# ---------------------------------------------------------------- the reward model
def digit_counts(out: dict) -> torch.Tensor:
    """(B, 10) float: how many times each digit 0..9 appears in each response (up to <eos>)."""
    toks = response_tokens(out)
    # the mask includes the <eos> token itself; digits are token ids 0..9
    is_digit = (toks <= 9) & (out["mask"] > 0)
    counts = torch.zeros(toks.shape[0], 10)
    counts.scatter_add_(1, toks.clamp(max=9) * is_digit.long(), is_digit.float())
    return counts


class DigitRM(nn.Module):
    """r(y) = sum over the digits d of y of w[d].   (10 parameters; ignores the prompt.)"""

    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.zeros(10))

    def forward(self, counts: torch.Tensor) -> torch.Tensor:
        """counts: (B, 10) from `digit_counts` -> (B,) scalar rewards."""
        return counts @ self.w


# ---------------------------------------------------------------- the critic (value model)
def hidden_states(lm: TinyLM, ids: torch.Tensor) -> torch.Tensor:
    """The final-layer hidden states (B, T, d) of a TinyLM (everything in TinyLM.forward but the head)."""
    return lm.hidden(ids)


class ValueModel(nn.Module):
    """A separate TinyLM trunk with a scalar head: V(x, y_<t) for every response position.

    Like Stiennon et al. (2020) and InstructGPT, the critic has its own parameters, so its
    updates can't damage the policy. (They initialize it from the reward model; our RM is
    too simple for that, so we initialize the trunk from the SFT model.)
    """

    def __init__(self, sft_model: TinyLM):
        super().__init__()
        self.trunk = TinyLM()
        self.trunk.load_state_dict(sft_model.state_dict())
        self.v_head = nn.Linear(self.trunk.ln.normalized_shape[0], 1)
        nn.init.zeros_(self.v_head.weight)
        nn.init.zeros_(self.v_head.bias)

    def forward(self, out: dict) -> torch.Tensor:
        """(B, max_new): value of the state just BEFORE each response token is generated.

        Aligned with `sequence_logprobs`: column k is V(x, y_<k), the state in which y_k was chosen.
        """
        ids, L = out["ids"], out["prompt_len"]
        h = hidden_states(self.trunk, ids[:, :-1])
        return self.v_head(h).squeeze(-1)[:, L - 1:]


# ---------------------------------------------------------------- small utilities
def masked_mean(x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Mean of x over the positions where mask == 1 (a scalar; 0 when the mask is empty)."""
    return (x * mask).sum() / mask.sum().clamp(min=1)


def masked_whiten(x: torch.Tensor, mask: torch.Tensor, eps: float = 1e-8) -> torch.Tensor:
    """Normalize x to mean 0, std 1 over the positions where mask == 1 (others set to 0)."""
    mean = masked_mean(x, mask)
    var = masked_mean((x - mean) ** 2, mask)
    return (x - mean) / torch.sqrt(var + eps) * mask


def sft_loss(model: TinyLM, batch_size: int, gen: random.Random) -> torch.Tensor:
    """Next-token cross-entropy on a fresh batch of CORRECT additions (the "pretraining" data).

    Used by the PPO-ptx option: mixing this loss into RLHF keeps the skill the reward never asked for.
    """
    prompts, answers = make_batch(batch_size, gen)
    ids, L = encode_prompts(prompts)
    resp = encode_answers(answers)
    full = torch.cat([ids, resp], 1)
    logits = model(full[:, :-1])[:, L - 1:]
    return F.cross_entropy(logits.reshape(-1, V), resp.reshape(-1), ignore_index=PAD)

