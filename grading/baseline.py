"""What the reference gives every grade, computed once and shipped in grading/data/baseline.json.

A grade needs three things that do not depend on the submission: the labeler's rankings of SFT samples
(the reward_model test trains and scores on them), the reward model trained on them with the
reference's ranking_loss (the PPO tests optimise against it), and the SFT policy's evaluation against
that RM (the PPO tests' starting point). Computing them costs about 3 s of CPU per judge lane.

    data = rankings(0, 1024, 4)                   # as lab_helpers.collect_rankings(load_sft(), 1024, K=4, seed=0)
    rm = reference_rm(0, 1024, 4, 300, 0.05)      # as training.train_reward_model(data, reference.ranking_loss, ...)
    start = sft_evaluation((0, 1024, 4, 300, 0.05), 512, 10001)  # as training.evaluate_policy(load_sft(), rm, ...)

Each returns exactly (bit for bit) what the computation returns, from the shipped file when it holds
that setting and its fingerprint matches (a hash of the world files, the SFT checkpoint, the
reference's code, torch's version and its pinned kernels), else by computing it (cached for the process). Nothing else
changes: a stale or missing file only costs time. `python -m autograder refresh` rewrites the file
for grading.yaml's settings; tests/test_baseline.py checks it is current and (slow) recomputes it.
"""

from __future__ import annotations

import functools
import hashlib
import json
from pathlib import Path

import torch

from autograder.lab import config
from autograder.lab.arithmetic import torch_setup
from autograder.lab.fingerprints import code_of, numerics
from autograder.lab.paths import REFERENCE, use_world, world_files

use_world()
import lab_helpers  # noqa: E402
import tinylm  # noqa: E402
import training  # noqa: E402

DATA_FILE = Path(__file__).resolve().parent / "data" / "baseline.json"
EVAL_SEED_OFFSET = 10_000  # evaluation prompts never overlap the training seeds' prompts
RM_TEST = "reward_model"   # the PPO tests optimise against the reference RM trained with this e2e test's data
RMKey = tuple  # (seed, n_prompts, K, steps, lr): the reward_model test's settings


def rm_key(e2e: dict) -> RMKey:
    """The reference RM's settings, from grading.yaml's `e2e` section."""
    rm = e2e[RM_TEST]
    return (rm["seed"], rm["n_prompts"], rm["K"], rm["steps"], rm["lr"])


# ---------------------------------------------------------------- the three values
@functools.lru_cache(maxsize=4)
def rankings(seed: int, n_prompts: int, K: int) -> list[dict]:
    """The labeler's rankings of K SFT samples for each of n_prompts prompts (collect_rankings' output)."""
    shipped = _shipped("rankings", [seed, n_prompts, K])
    return computed_rankings(seed, n_prompts, K) if shipped is None else _decode_rankings(shipped, n_prompts, K)


@functools.lru_cache(maxsize=4)
def reference_rm(seed: int, n_prompts: int, K: int, steps: int, lr: float) -> lab_helpers.DigitRM:
    """The DigitRM trained on rankings(seed, n_prompts, K) with the reference's ranking_loss."""
    shipped = _shipped("reference_rm", [seed, n_prompts, K, steps, lr])
    if shipped is None:
        return computed_rm(seed, n_prompts, K, steps, lr)
    rm = lab_helpers.DigitRM()
    with torch.no_grad():
        rm.w.copy_(torch.tensor(shipped, dtype=torch.float32))
    return rm


@functools.lru_cache(maxsize=4)
def sft_evaluation(rm_key: RMKey, n: int, seed: int) -> dict:
    """training.evaluate_policy of the SFT policy against reference_rm(*rm_key) on n prompts of `seed`."""
    shipped = _shipped("sft_evaluation", [list(rm_key), n, seed])
    return computed_sft_evaluation(tuple(rm_key), n, seed) if shipped is None else dict(shipped)


# the same values computed (never read from the file): the fallback, and what the file is written from
@functools.lru_cache(maxsize=4)
def computed_rankings(seed: int, n_prompts: int, K: int) -> list[dict]:
    return lab_helpers.collect_rankings(tinylm.load_sft(), n_prompts, K=K, seed=seed)


@functools.lru_cache(maxsize=4)
def computed_rm(seed: int, n_prompts: int, K: int, steps: int, lr: float) -> lab_helpers.DigitRM:
    from autograder.lab.reference import load_reference
    return training.train_reward_model(computed_rankings(seed, n_prompts, K), load_reference().ranking_loss,
                                       steps, lr)


@functools.lru_cache(maxsize=4)
def computed_sft_evaluation(rm_key: RMKey, n: int, seed: int) -> dict:
    return training.evaluate_policy(tinylm.load_sft(), computed_rm(*rm_key), n, seed)


# ---------------------------------------------------------------- the shipped file
def fingerprint() -> str:
    """sha256 of everything the three values depend on besides their arguments."""
    h = hashlib.sha256(f"{torch_setup()}\n".encode())
    for name, file in world_files().items():
        h.update(name.encode() + b"\0" + file.read_bytes())
    h.update(b"reference\0" + (code_of(REFERENCE) if REFERENCE.is_file() else "absent").encode())
    return h.hexdigest()


def is_current(path: Path = DATA_FILE) -> bool:
    """True when the shipped file matches this world (release should refuse to ship a stale one)."""
    return bool(_load(path))


@functools.lru_cache(maxsize=1)
def _load(path: Path = DATA_FILE) -> dict:
    """The shipped values of a current file ({} when it is absent, unreadable or stale)."""
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) and data.get("fingerprint") == fingerprint() else {}


def _shipped(kind: str, args: list):
    return _load().get(kind, {}).get(_key(args))


def _key(args: list) -> str:
    return json.dumps(args)


def _encode_rankings(data: list[dict]) -> dict:
    """Rankings as plain data: every response row's token ids as one string of hex digits (ids < 16)."""
    ids = torch.cat([d["out"]["ids"] for d in data])
    return {"prompt_len": data[0]["out"]["prompt_len"],
            "ids": ["".join(f"{t:x}" for t in row) for row in ids.tolist()],
            "ranking": [d["ranking"] for d in data]}


def _decode_rankings(shipped: dict, n_prompts: int, K: int) -> list[dict]:
    """collect_rankings' output again: ids as shipped; mask and gold derived from them as `sample` does."""
    ids = torch.tensor([[int(c, 16) for c in row] for row in shipped["ids"]], dtype=torch.long)
    L = shipped["prompt_len"]
    response = ids[:, L:]
    # `sample` marks a token generated while no <eos> had been drawn yet (the <eos> itself included)
    ended_before = torch.cumsum((response == tinylm.EOS).long(), 1) - (response == tinylm.EOS).long()
    big = {"ids": ids, "mask": (ended_before == 0).float(), "prompt_len": L}
    golds = lab_helpers.gold_score(big)
    data = []
    for i in range(n_prompts):
        rows = slice(i * K, (i + 1) * K)
        out = {"ids": big["ids"][rows], "mask": big["mask"][rows], "prompt_len": L}
        data.append({"out": out, "ranking": list(shipped["ranking"][i]), "gold": golds[rows]})
    return data


# ---------------------------------------------------------------- writing it
def shipped_calls(e2e: dict) -> list[tuple[str, list]]:
    """(kind, arguments) of every value a grade with grading.yaml's `e2e` section asks for."""
    rm, key = e2e[RM_TEST], list(rm_key(e2e))
    calls = [("rankings", [rm["seed"], rm["n_prompts"], rm["K"]]),
             ("rankings", [rm["seed"] + EVAL_SEED_OFFSET, rm["heldout_prompts"], rm["K"]]),
             ("reference_rm", key)]
    for name in sorted(e2e):
        spec = e2e[name]
        call = ("sft_evaluation", [key, spec["eval_prompts"], spec["seed"] + EVAL_SEED_OFFSET]) \
            if "eval_prompts" in spec else None
        if call is not None and call not in calls:
            calls.append(call)
    return calls


def compute(calls: list[tuple[str, list]]) -> dict:
    """The file's content for these calls, computed from scratch (the shipped file is not read)."""
    out: dict = {"fingerprint": fingerprint(), "numerics": numerics()}  # numerics: the machine's rounding
    for kind, args in calls:
        if kind == "rankings":
            value = _encode_rankings(computed_rankings(*args))
        elif kind == "reference_rm":
            value = computed_rm(*args).w.detach().tolist()
        else:
            rm_key, n, seed = args
            value = computed_sft_evaluation(tuple(rm_key), n, seed)
        out.setdefault(kind, {})[_key(args)] = value
    return out


def write(path: Path = DATA_FILE) -> dict:
    """Recompute the values grading.yaml's settings need and write them to `path`."""
    data = compute(shipped_calls(config.load().e2e))
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, separators=(",", ":")) + "\n")
    _load.cache_clear()
    return data
