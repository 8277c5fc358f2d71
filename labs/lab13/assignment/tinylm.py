"""A tiny causal transformer language model and a verifiable arithmetic task.

Small enough to train on a laptop CPU in seconds, big enough to show real LLM
post-training dynamics (SFT, then RL with a checkable reward).

The task: given a prompt like "37+48=", produce the digits of the sum and stop.
    prompt tokens:   <bos> 3 7 + 4 8 =
    response tokens: 8 5 <eos>
The reward is verifiable: 1.0 if the response is exactly the right answer, else 0.0.

Typical use:
    model = load_sft()                          # the lab's SFT checkpoint (sft.pt beside this file)
    prompts, answers = make_batch(16, rng)      # a batch of problems
    out = sample(model, prompts, temperature=1.0)
    rewards = [reward(r, a) for r, a in zip(decode_responses(out), answers)]
    logp = sequence_logprobs(model, out)        # per-token log-probs of the response, with a mask

Note on the log-probabilities: `sample` never draws <bos> or <pad>, so `sequence_logprobs`
scores tokens under that same distribution (those two logits removed). Scoring over the full
vocabulary instead would let a policy park probability mass on tokens it can never emit, which
nothing penalises, and the measured KL to the reference could turn negative.
"""

from __future__ import annotations

import os
import random
from pathlib import Path

import torch
import torch.nn as nn
import torch.nn.functional as F

# Tiny models run several times faster on one CPU thread than on many.
torch.set_num_threads(1)

# ---------------------------------------------------------------- vocabulary
VOCAB = list("0123456789+=") + ["<bos>", "<eos>", "<pad>"]
STOI = {s: i for i, s in enumerate(VOCAB)}
BOS, EOS, PAD = STOI["<bos>"], STOI["<eos>"], STOI["<pad>"]
V = len(VOCAB)
MAX_ANSWER = 4  # answer digits + <eos> fit in this many tokens for sums < 1000
NEVER_SAMPLED = [BOS, PAD]  # tokens `sample` never draws and `sequence_logprobs` never scores

SFT_CHECKPOINT = Path(__file__).with_name("sft.pt")
SFT_STEPS, SFT_SEED = 350, 0  # how `python -m autograder build-sft` makes sft.pt


def encode(s: str) -> list[int]:
    return [STOI[c] for c in s]


def decode(ids: list[int]) -> str:
    """Token ids -> text, stopping at <eos> and skipping <bos>/<pad>."""
    out = []
    for i in ids:
        if i == EOS:
            break
        if i in (BOS, PAD):
            continue
        out.append(VOCAB[i])
    return "".join(out)


# ---------------------------------------------------------------- task
def make_problem(rng: random.Random, max_n: int = 99) -> tuple[str, str]:
    a, b = rng.randint(0, max_n), rng.randint(0, max_n)
    return f"{a}+{b}=", str(a + b)


def make_batch(n: int, rng: random.Random, max_n: int = 99) -> tuple[list[str], list[str]]:
    """Return (prompts, answers): lists of strings like ('37+48=', '85')."""
    probs = [make_problem(rng, max_n) for _ in range(n)]
    return [p for p, _ in probs], [a for _, a in probs]


def reward(response: str, answer: str) -> float:
    """Verifiable reward: 1.0 for an exactly correct answer, else 0.0."""
    return 1.0 if response == answer else 0.0


# ---------------------------------------------------------------- model
def causal_mask(T: int) -> torch.Tensor:
    """(T, T) additive attention mask: -inf above the diagonal."""
    return torch.triu(torch.full((T, T), float("-inf")), diagonal=1)


class SelfAttention(nn.Module):
    """Causal multi-head self-attention with an optional key/value cache for incremental decoding.

    Parameters and their initialisation are those of nn.MultiheadAttention(d, n_head) (same names,
    so checkpoints load either way); computed as plain matrix products, which at this size costs
    a fraction of the general module's overhead.
    """

    def __init__(self, d: int, n_head: int):
        super().__init__()
        self.n_head = n_head
        self.in_proj_weight = nn.Parameter(torch.empty(3 * d, d))
        self.in_proj_bias = nn.Parameter(torch.zeros(3 * d))
        self.out_proj = nn.Linear(d, d)
        nn.init.xavier_uniform_(self.in_proj_weight)
        nn.init.zeros_(self.out_proj.bias)

    def forward(self, x: torch.Tensor, mask: torch.Tensor, cache: dict | None = None) -> torch.Tensor:
        """x: (B, T, d) -> (B, T, d). mask: (T, S) additive, S = T + the positions already in `cache`.

        With a `cache` (a dict, filled in place), x holds only the positions after the cached ones.
        """
        B, T, d = x.shape
        q, k, v = F.linear(x, self.in_proj_weight, self.in_proj_bias) \
            .view(B, T, 3, self.n_head, d // self.n_head).permute(2, 0, 3, 1, 4)  # each (B, heads, T, d/heads)
        if cache is not None:
            if cache:
                k, v = torch.cat([cache["k"], k], 2), torch.cat([cache["v"], v], 2)
            cache["k"], cache["v"] = k, v
        weights = torch.softmax(q @ k.transpose(-2, -1) * (d // self.n_head) ** -0.5 + mask, -1)
        return self.out_proj((weights @ v).transpose(1, 2).reshape(B, T, d))


class Block(nn.Module):
    def __init__(self, d: int, n_head: int):
        super().__init__()
        self.ln1 = nn.LayerNorm(d)
        self.attn = SelfAttention(d, n_head)
        self.ln2 = nn.LayerNorm(d)
        self.mlp = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))

    def forward(self, x: torch.Tensor, mask: torch.Tensor, cache: dict | None = None) -> torch.Tensor:
        x = x + self.attn(self.ln1(x), mask, cache)
        return x + self.mlp(self.ln2(x))


class TinyLM(nn.Module):
    def __init__(self, d: int = 64, n_head: int = 4, n_layer: int = 2, max_len: int = 16):
        super().__init__()
        self.max_len = max_len
        self.tok = nn.Embedding(V, d)
        self.pos = nn.Embedding(max_len, d)
        self.blocks = nn.ModuleList([Block(d, n_head) for _ in range(n_layer)])
        self.ln = nn.LayerNorm(d)
        self.head = nn.Linear(d, V)

    def hidden(self, ids: torch.Tensor, cache: list[dict] | None = None) -> torch.Tensor:
        """ids: (B, T) long -> final-layer hidden states (B, T, d), before the head.

        `cache` (one dict per block, from `new_cache`, filled in place) decodes incrementally: ids are
        then the positions right after those already cached.
        """
        start = cache[0]["k"].shape[2] if cache and cache[0] else 0
        T = ids.shape[1]
        x = self.tok(ids) + self.pos(torch.arange(start, start + T))
        mask = causal_mask(start + T)[start:]
        for blk, blk_cache in zip(self.blocks, cache or [None] * len(self.blocks)):
            x = blk(x, mask, blk_cache)
        return self.ln(x)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        """ids: (B, T) long -> logits (B, T, V). Position t predicts token t+1."""
        return self.head(self.hidden(ids))

    def new_cache(self) -> list[dict]:
        return [{} for _ in self.blocks]


# ---------------------------------------------------------------- batching helpers
def encode_prompts(prompts: list[str]) -> tuple[torch.Tensor, int]:
    """Left-pad prompts so they all end at the same column. Returns (ids (B, L), L)."""
    seqs = [[BOS] + encode(p) for p in prompts]
    L = max(len(s) for s in seqs)
    ids = torch.full((len(seqs), L), PAD, dtype=torch.long)
    for i, s in enumerate(seqs):
        ids[i, L - len(s):] = torch.tensor(s)
    return ids, L


def encode_answers(answers: list[str]) -> torch.Tensor:
    """Answers -> (B, MAX_ANSWER) long targets: digits, <eos>, then <pad>."""
    resp = torch.full((len(answers), MAX_ANSWER), PAD, dtype=torch.long)
    for i, a in enumerate(answers):
        toks = encode(a) + [EOS]
        resp[i, : len(toks)] = torch.tensor(toks)
    return resp


def sampling_logits(logits: torch.Tensor) -> torch.Tensor:
    """Remove the never-sampled tokens (<bos>, <pad>) from logits (..., V)."""
    logits = logits.clone()
    logits[..., NEVER_SAMPLED] = float("-inf")
    return logits


@torch.no_grad()
def sample(model: TinyLM, prompts: list[str], temperature: float = 1.0,
           max_new: int = MAX_ANSWER, greedy: bool = False) -> dict:
    """Sample responses. Returns a dict:
        ids          (B, L+max_new) prompt + response tokens (response padded with <pad> after <eos>)
        prompt_len   int, column where responses start
        mask         (B, max_new) float, 1 for response tokens that were generated (incl. <eos>)
    """
    was_training = model.training
    model.eval()
    ids, L = encode_prompts(prompts)
    B = ids.shape[0]
    done = torch.zeros(B, dtype=torch.bool)
    mask = torch.zeros(B, max_new)
    # rows are independent: groups of at most 512 keep memory small. Each step feeds only the newest
    # token of each row, attending to the keys and values cached for the earlier ones.
    groups = [(rows, model.new_cache()) for rows in ids.split(512)]
    for t in range(max_new):
        last = torch.cat([model.head(model.hidden(rows, cache)[:, -1, :]) for rows, cache in groups])
        logits = sampling_logits(last) / max(temperature, 1e-6)
        if greedy:
            nxt = logits.argmax(-1)
        else:
            nxt = torch.multinomial(F.softmax(logits, -1), 1).squeeze(1)
        nxt = torch.where(done, torch.full_like(nxt, PAD), nxt)
        mask[:, t] = (~done).float()
        ids = torch.cat([ids, nxt[:, None]], dim=1)
        groups = [(rows, cache) for rows, (_, cache) in zip(nxt[:, None].split(512), groups)]
        done |= nxt == EOS
    model.train(was_training)
    return {"ids": ids, "prompt_len": L, "mask": mask}


def decode_responses(out: dict) -> list[str]:
    L = out["prompt_len"]
    return [decode(row[L:].tolist()) for row in out["ids"]]


def sequence_logprobs(model: TinyLM, out: dict) -> torch.Tensor:
    """Per-token log-probs of the sampled response tokens under `model` (with grad).

    Scored under the distribution `sample` draws from (no <bos>/<pad>), at temperature 1.
    Returns (B, max_new) tensor; multiply by out["mask"] before summing or averaging.
    """
    ids, L = out["ids"], out["prompt_len"]
    logits = sampling_logits(model(ids[:, :-1]))  # position j predicts token j+1
    logp = F.log_softmax(logits, -1)
    tgt = ids[:, 1:]
    tok_logp = logp.gather(-1, tgt.unsqueeze(-1)).squeeze(-1)  # (B, T-1)
    # <pad> after <eos> scores -inf; those positions are masked out, so make them harmless zeros.
    return tok_logp[:, L - 1:].masked_fill(tgt[:, L - 1:] == PAD, 0.0)


# ---------------------------------------------------------------- SFT and evaluation
def sft(model: TinyLM, steps: int = 300, batch_size: int = 64, lr: float = 3e-3, seed: int = 0,
        max_n: int = 99, verbose: bool = False) -> TinyLM:
    """Supervised fine-tuning (next-token cross-entropy on correct answers).

    A few hundred steps gives a partly competent model: a good starting point for RL.
    """
    rng = random.Random(seed)
    opt = torch.optim.AdamW(model.parameters(), lr=lr)
    for step in range(steps):
        prompts, answers = make_batch(batch_size, rng, max_n)
        ids, L = encode_prompts(prompts)
        resp = encode_answers(answers)
        full = torch.cat([ids, resp], 1)
        logits = model(full[:, :-1])[:, L - 1:]
        loss = F.cross_entropy(logits.reshape(-1, V), resp.reshape(-1), ignore_index=PAD)
        opt.zero_grad()
        loss.backward()
        opt.step()
        if verbose and step % 100 == 0:
            print(f"sft step {step:4d}  loss {loss.item():.3f}")
    return model


def load_or_train_sft(path: str | os.PathLike, steps: int = SFT_STEPS, seed: int = SFT_SEED) -> TinyLM:
    """Load a TinyLM checkpoint from `path`, or SFT one from scratch (seeded) and save it.

    ~350 steps gives roughly 30-50% sampled accuracy: room for RL to improve.
    """
    torch.manual_seed(seed)
    model = TinyLM()
    if os.path.exists(path):
        model.load_state_dict(torch.load(path, weights_only=True))
    else:
        sft(model, steps=steps, seed=seed)
        torch.save(model.state_dict(), path)
    return model


def load_sft() -> TinyLM:
    """The lab's SFT policy, from the checkpoint shipped beside this file."""
    if not SFT_CHECKPOINT.exists():
        raise FileNotFoundError(f"{SFT_CHECKPOINT} is missing: run `python -m autograder build-sft`")
    return load_or_train_sft(SFT_CHECKPOINT)


@torch.no_grad()
def accuracy(model: TinyLM, n: int = 500, seed: int = 123, max_n: int = 99, greedy: bool = True) -> float:
    """Fraction of n fresh problems answered exactly right (greedy or sampled at temperature 1)."""
    rng = random.Random(seed)
    prompts, answers = make_batch(n, rng, max_n)
    resp = decode_responses(sample(model, prompts, greedy=greedy))
    return sum(r == a for r, a in zip(resp, answers)) / n


if __name__ == "__main__":
    import time

    torch.manual_seed(0)
    m = TinyLM()
    t0 = time.time()
    for k in range(1, 7):
        sft(m, steps=100, seed=k)
        print(f"after {100 * k} SFT steps: greedy acc {accuracy(m):.2f}, "
              f"sampled acc {accuracy(m, greedy=False):.2f}  ({time.time() - t0:.1f}s)")
