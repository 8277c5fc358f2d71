"""Lab 13's end-to-end tests: GRPO and DPO trained with the submission's pieces, judged by the world.

    grpo_accuracy     GRPO (std-normalised advantages, token mean) raises greedy accuracy on fresh sums
    drgrpo_accuracy   Dr. GRPO (no std, constant normaliser) raises it too
    dpo_gold          DPO on the labeler's pairs raises the gold score
    dpo_displacement  the known failure: DPO's margin grows by pushing the chosen answers' own likelihood
                      down, and the arithmetic the labeler never checked is lost (as blind_spot in Lab 12)
    ipo_gold          IPO raises the gold score while staying closer to the reference than DPO

Each test registers with the engine's `@e2e_test` (autograder/judge/e2e.py) when grading/lab.py imports this module.
The judge's measurements use the world only: accuracy and gold of fresh samples, log-probs of fixed pairs; never
a number the submission's functions computed. Each run goes through the engine's `replay.outcome`: the reference's
recorded run (data/replays.bin, replays.py) stands for it when the submission answers its calls as the reference.
"""

from __future__ import annotations

import copy
from typing import Any, Mapping

from autograder import replay
from autograder.judge.e2e import Criterion, Runs, e2e_test
from autograder.lab.paths import use_world

use_world()
import tinylm  # noqa: E402
import training  # noqa: E402

EVAL_SEED_OFFSET = 10_000          # evaluation problems never overlap the training's
GRPO_SECONDS, DPO_SECONDS = 5.0, 2.5   # reference CPU seconds of one run (one torch thread), for the lanes


def _key(spec: Mapping, what: str) -> tuple:
    return (what, tuple(sorted((k, str(v)) for k, v in spec[what].items())), spec["seed"], tuple(spec["parts"]))


# ---------------------------------------------------------------- what every grade starts from
_SFT_CACHE: dict = {}


def sft_accuracy(n: int, seed: int) -> float:
    """Greedy accuracy of the SFT policy on the evaluation problems (the same for every submission)."""
    key = ("sft_accuracy", n, seed)
    if key not in _SFT_CACHE:
        _SFT_CACHE[key] = training.greedy_accuracy(tinylm.load_sft(), n, seed)
    return _SFT_CACHE[key]


def pairs(seed: int, n_prompts: int, K: int) -> dict:
    """The labeler's preference pairs of SFT samples (the same for every submission)."""
    key = ("pairs", seed, n_prompts, K)
    if key not in _SFT_CACHE:
        _SFT_CACHE[key] = training.collect_pairs(tinylm.load_sft(), n_prompts, K, seed)
    return _SFT_CACHE[key]


def sft_metrics(n: int, seed: int) -> dict:
    key = ("sft_metrics", n, seed)
    if key not in _SFT_CACHE:
        sft = tinylm.load_sft()
        _SFT_CACHE[key] = training.gold_metrics(sft, sft, n, seed)
    return _SFT_CACHE[key]


# ---------------------------------------------------------------- GRPO
def grpo_outcome(cfg: Any, spec: Mapping, parts: Any, memo: dict) -> dict:
    """Train GRPO from the SFT policy with `parts`; greedy accuracy before and after (memoised)."""
    key = _key(spec, "grpo")

    def train() -> dict:
        policy = tinylm.load_sft()
        history = training.train_grpo(policy, parts, training.GRPOConfig(seed=spec["seed"], **spec["grpo"]))
        eval_seed = spec["seed"] + EVAL_SEED_OFFSET
        return {"history": history, "final": training.greedy_accuracy(policy, spec["eval_problems"], eval_seed),
                "start": sft_accuracy(spec["eval_problems"], eval_seed)}

    if key not in memo:
        memo[key] = replay.outcome(key, parts, train, cfg.calibration.replay_rtol, cfg.calibration.replay_atol)
    return memo[key]


def _grpo_measure(cfg: Any, spec: Mapping, parts: Any, memo: dict):
    run = grpo_outcome(cfg, spec, parts, memo)
    gain = run["final"] - run["start"]
    details = (f"greedy accuracy on {spec['eval_problems']} fresh problems: SFT {run['start']:.3f} -> after GRPO "
               f"{run['final']:.3f} (gain {gain:.3f}, needs >= {spec['min_accuracy_gain']})" + replay.note(run))
    return {"accuracy_gain": gain}, details, {"run": run["history"]}


GRPO_KEYS = ("grpo", "eval_problems", "min_accuracy_gain")


def _grpo_runs(spec: Mapping) -> dict:
    return {_key(spec, "grpo"): GRPO_SECONDS * spec["grpo"].get("iterations", 30) / 30}


@e2e_test("grpo_accuracy", "GRPO with your advantages and loss raises the greedy accuracy on fresh sums",
          "runs GRPO from the SFT policy on the verifiable reward (groups of sampled answers, std-normalised "
          "advantages, token-mean loss with a k3 KL) with your group_advantages and grpo_policy_loss; the greedy "
          "accuracy on fresh problems must rise",
          [Criterion("accuracy_gain", "min_accuracy_gain", ">=",
                     "GRPO with your functions did not raise the greedy accuracy enough")],
          settings=GRPO_KEYS, band="run", plotted=("reward", "equal_groups"), runs=_grpo_runs)
def measure_grpo(cfg: Any, spec: Mapping, parts: Any, memo: dict):
    return _grpo_measure(cfg, spec, parts, memo)


@e2e_test("drgrpo_accuracy", "Dr. GRPO (no std, constant normaliser) with your functions raises the accuracy",
          "the same GRPO run with Dr. GRPO's choices: advantages without the std (normalize_std=False) and the "
          "loss summed over tokens and divided by a constant (token_sum_norm); the greedy accuracy must rise",
          [Criterion("accuracy_gain", "min_accuracy_gain", ">=",
                     "Dr. GRPO with your functions did not raise the greedy accuracy enough")],
          settings=GRPO_KEYS, band="run", plotted=("reward", "length"), runs=_grpo_runs)
def measure_drgrpo(cfg: Any, spec: Mapping, parts: Any, memo: dict):
    return _grpo_measure(cfg, spec, parts, memo)


# ---------------------------------------------------------------- DPO and IPO
def preference_outcome(cfg: Any, spec: Mapping, parts: Any, memo: dict, loss: str) -> dict:
    """Train `loss` ("dpo_loss" or "ipo_loss") on the labeler's pairs; the judge's measurements (memoised)."""
    key = (loss, *_key(spec, "dpo"), spec["n_prompts"], spec["K"], spec["eval_prompts"])

    def train() -> dict:
        data = pairs(spec["seed"], spec["n_prompts"], spec["K"])
        sft = tinylm.load_sft()
        policy = copy.deepcopy(sft)
        history = training.train_dpo(policy, data, getattr(parts, loss), parts,
                                     training.DPOConfig(seed=spec["seed"], **spec["dpo"]))
        eval_seed = spec["seed"] + EVAL_SEED_OFFSET
        final = training.gold_metrics(policy, sft, spec["eval_prompts"], eval_seed)
        chosen = data["chosen"]
        with_policy = (tinylm.sequence_logprobs(policy, chosen) * chosen["mask"]).sum(1)
        with_sft = (tinylm.sequence_logprobs(sft, chosen) * chosen["mask"]).sum(1)
        return {"history": history, "final": final, "start": sft_metrics(spec["eval_prompts"], eval_seed),
                "chosen_logp_change": (with_policy - with_sft).mean().item()}

    if key not in memo:
        memo[key] = replay.outcome(key, parts, train, cfg.calibration.replay_rtol, cfg.calibration.replay_atol)
    return memo[key]


DPO_KEYS = ("dpo", "n_prompts", "K", "eval_prompts")


def _dpo_runs(loss: str) -> Runs:
    return lambda spec: {(loss, *_key(spec, "dpo"), spec["n_prompts"], spec["K"], spec["eval_prompts"]): DPO_SECONDS}


def _describe(run: dict) -> str:
    s, f = run["start"], run["final"]
    return "; ".join(f"{k} {s[k]:.3f} -> {f[k]:.3f}" for k in ("gold", "malformed", "accuracy", "kl"))


@e2e_test("dpo_gold", "DPO with your sequence_logprob and dpo_loss raises the labeler's gold score",
          "trains the SFT policy with your dpo_loss on the hidden labeler's preference pairs (its best against its "
          "worst of K samples), sequence log-probs from your sequence_logprob; fresh samples' gold score must rise",
          [Criterion("gold_gain", "min_gold_gain", ">=", "DPO with your functions did not raise the gold score enough"),
           Criterion("malformed", "max_malformed", "<=",
                     "DPO with your functions produced too many malformed answers")],
          settings=(*DPO_KEYS, "min_gold_gain", "max_malformed"), band="run", plotted=("loss", "margin"),
          runs=_dpo_runs("dpo_loss"))
def measure_dpo_gold(cfg: Any, spec: Mapping, parts: Any, memo: dict):
    run = preference_outcome(cfg, spec, parts, memo, "dpo_loss")
    gain = run["final"]["gold"] - run["start"]["gold"]
    details = (f"SFT -> after DPO: {_describe(run)}; gold gain {gain:.3f} (needs >= {spec['min_gold_gain']})"
               + replay.note(run))
    return {"gold_gain": gain, "malformed": run["final"]["malformed"]}, details, {"run": run["history"]}


@e2e_test("dpo_displacement", "DPO lowers the likelihood of the answers it prefers, and forgets the arithmetic",
          "the dpo_gold run, seen from the reference: while the gold score rises, DPO widens the margin between "
          "chosen and rejected answers "
          "mostly by pushing both down, so the chosen answers' own log-prob falls, and the sums the labeler never "
          "checked are lost (sampled accuracy drops): a known failure of DPO, shown with your functions",
          [Criterion("gold_gain", "min_gold_gain", ">=",
                     "DPO with your functions did not learn the labeler's preference (gold score not up)"),
           Criterion("chosen_logp_change", "max_chosen_logp_change", "<=",
                     "DPO should lower the chosen answers' log-prob (likelihood displacement), as the reference does"),
           Criterion("accuracy_change", "max_accuracy_change", "<=",
                     "DPO on style preferences should lose arithmetic accuracy, as the reference's does")],
          settings=(*DPO_KEYS, "min_gold_gain", "max_chosen_logp_change", "max_accuracy_change"), shares="dpo_gold",
          band="run", plotted=("chosen_logp_change",), runs=_dpo_runs("dpo_loss"))
def measure_dpo_displacement(cfg: Any, spec: Mapping, parts: Any, memo: dict):
    run = preference_outcome(cfg, spec, parts, memo, "dpo_loss")
    change = run["final"]["accuracy"] - run["start"]["accuracy"]
    details = (f"chosen answers' log-prob changed by {run['chosen_logp_change']:.2f} nats; SFT -> after DPO: "
               f"{_describe(run)}" + replay.note(run))
    metrics = {"gold_gain": run["final"]["gold"] - run["start"]["gold"],
               "chosen_logp_change": run["chosen_logp_change"], "accuracy_change": change}
    return metrics, details, {"run": run["history"]}


@e2e_test("ipo_gold", "IPO with your ipo_loss raises the gold score and stays near the reference",
          "trains the SFT policy with your ipo_loss on the same pairs (sequence log-probs from the reference's "
          "sequence_logprob); the gold score must rise while the KL to the SFT policy stays bounded",
          [Criterion("gold_gain", "min_gold_gain", ">=", "IPO with your ipo_loss did not raise the gold score enough"),
           Criterion("kl", "max_kl", "<=", "IPO with your ipo_loss moved too far from the reference policy")],
          settings=(*DPO_KEYS, "min_gold_gain", "max_kl"), band="run", plotted=("loss", "margin"),
          runs=_dpo_runs("ipo_loss"))
def measure_ipo_gold(cfg: Any, spec: Mapping, parts: Any, memo: dict):
    run = preference_outcome(cfg, spec, parts, memo, "ipo_loss")
    gain = run["final"]["gold"] - run["start"]["gold"]
    details = (f"SFT -> after IPO: {_describe(run)}; gold gain {gain:.3f} (needs >= {spec['min_gold_gain']})"
               + replay.note(run))
    return {"gold_gain": gain, "kl": run["final"]["kl"]}, details, {"run": run["history"]}
