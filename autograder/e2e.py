"""End-to-end tests: train with the submission's functions, judge the outcome with the given world.

The judge runs the training code itself. The submission's functions for the parts under test are
called in the sandbox (`RemoteFunction`: plain tensors in, values and gradients out); every other
part uses the reference, so one mistake never costs points twice. The trained models stay in the
judge and are evaluated on fresh prompts by the judge's own copy of the world.

    reward_model  the DigitRM trained with the submission's ranking_loss ranks held-out pairs well
    kl_penalty    PPO with beta > 0 raises the gold score over the SFT policy, few malformed answers
    blind_spot    PPO with beta = 0 exploits the RM: RM score up, gold down, malformed up
    ptx           PPO-ptx keeps more arithmetic accuracy than the same run without ptx
"""

from __future__ import annotations

import functools
from types import ModuleType

from autograder.config import Config
from autograder.grade import TestResult
from autograder.paths import use_world
from autograder.remote import RemoteSubmission, SubmissionError

use_world()
import lab_helpers  # noqa: E402
import tinylm  # noqa: E402
import training  # noqa: E402

EVAL_SEED_OFFSET = 10_000  # evaluation prompts never overlap the training seeds' prompts


@functools.lru_cache(maxsize=4)
def rankings(seed: int, n_prompts: int, K: int) -> list[dict]:
    """The labeler's rankings of SFT samples (deterministic for a seed; cached for the grade)."""
    return lab_helpers.collect_rankings(tinylm.load_sft(), n_prompts, K=K, seed=seed)


@functools.lru_cache(maxsize=4)
def reference_rm(seed: int, n_prompts: int, K: int, steps: int, lr: float) -> lab_helpers.DigitRM:
    """The reward model the PPO tests optimise against: trained with the reference's loss."""
    reference = _reference_module()
    return training.train_reward_model(rankings(seed, n_prompts, K), reference.ranking_loss, steps, lr)


def _reference_module() -> ModuleType:
    from autograder.grade import load_reference
    return load_reference()


def mixed_parts(cfg: Config, sub: RemoteSubmission, reference: ModuleType, graded: list[str]) -> training.Parts:
    """The reference's functions, with the submission's for the functions of the `graded` parts."""
    remote = sub.parts(tuple(fn for part in graded for fn in cfg.parts[part]))
    return training.Parts.from_module(reference).replace(**remote)


def run(test_id: str, cfg: Config, sub: RemoteSubmission, reference: ModuleType) -> TestResult:
    name = test_id.split(".", 1)[1]
    spec = cfg.e2e[name]
    result = TestResult(test_id, TITLES[name], ["e2e", *spec["parts"]], spec["points"], 0.0, "")
    try:
        for function in (fn for part in spec["parts"] for fn in cfg.parts[part]):
            sub.call(function, *training.probe_inputs()[function])  # fail fast before any training
        parts = mixed_parts(cfg, sub, reference, spec["parts"])
        metrics, details, histories = MEASURES[name](cfg, spec, parts, sub.memo)
        message = verdict(name, spec, metrics)
    except SubmissionError as exc:
        message, details, histories = str(exc), "", {}
    except (RuntimeError, ValueError) as exc:  # e.g. nan probabilities while sampling
        message, details, histories = f"training diverged: {str(exc)[:200]}", "", {}
    result.message, result.details = message, details
    if histories:
        from autograder.plots import e2e_plots
        result.plots = e2e_plots(name, histories)
    return result


# ---------------------------------------------------------------- the four measurements
# Each returns (metrics, details, histories) for a training with `parts`; `memo` caches PPO runs
# (per submission), so ptx reuses the kl_penalty run as its baseline. Calibration calls them too.
def measure_reward_model(cfg: Config, spec: dict, parts: training.Parts, memo: dict):
    data = rankings(spec["seed"], spec["n_prompts"], spec["K"])
    rm = training.train_reward_model(data, parts.ranking_loss, spec["steps"], spec["lr"])
    heldout = rankings(spec["seed"] + EVAL_SEED_OFFSET, spec["heldout_prompts"], spec["K"])
    accuracy = training.pairwise_accuracy(rm, heldout)
    w = rm.w.detach()
    # > 0: every even digit's weight above every odd digit's. The weights' level is barely identified
    # (a shift c per digit moves a reward by c * length), so their signs vary with the data; the order does not.
    parity_gap = (w[0::2].min() - w[1::2].max()).item()
    details = (f"held-out pairwise accuracy {accuracy:.3f} (needs >= {spec['min_pairwise_accuracy']}); "
               f"weights {[round(x, 2) for x in w.tolist()]}")
    return {"accuracy": accuracy, "parity_gap": parity_gap}, details, {}


def ppo_outcome(cfg: Config, spec: dict, parts: training.Parts, memo: dict) -> dict:
    """Train PPO with `parts` and return its history and the final evaluation (memoised in `memo`)."""
    rm_spec = cfg.e2e["reward_model"]
    rm = reference_rm(rm_spec["seed"], rm_spec["n_prompts"], rm_spec["K"], rm_spec["steps"], rm_spec["lr"])
    ppo = dict(spec["ppo"])
    key = (tuple(sorted(ppo.items())), spec["seed"], tuple(spec["parts"]), spec["eval_prompts"])
    if key not in memo:
        policy = tinylm.load_sft()
        history = training.train_ppo(policy, rm, parts, training.PPOConfig(seed=spec["seed"], **ppo))
        final = training.evaluate_policy(policy, rm, spec["eval_prompts"], spec["seed"] + EVAL_SEED_OFFSET)
        memo[key] = {"history": history, "final": final}
    start = sft_evaluation(rm_spec, spec["eval_prompts"], spec["seed"] + EVAL_SEED_OFFSET)
    return {**memo[key], "start": start}


@functools.lru_cache(maxsize=4)
def _sft_evaluation(rm_key: tuple, n: int, seed: int) -> dict:
    return training.evaluate_policy(tinylm.load_sft(), reference_rm(*rm_key), n, seed)


def sft_evaluation(rm_spec: dict, n: int, seed: int) -> dict:
    rm_key = (rm_spec["seed"], rm_spec["n_prompts"], rm_spec["K"], rm_spec["steps"], rm_spec["lr"])
    return _sft_evaluation(rm_key, n, seed)


def _describe(run: dict) -> str:
    s, f = run["start"], run["final"]
    return "; ".join(f"{k} {s[k]:.3f} -> {f[k]:.3f}" for k in ("rm_score", "gold", "malformed", "accuracy"))


def measure_kl_penalty(cfg: Config, spec: dict, parts: training.Parts, memo: dict):
    run = ppo_outcome(cfg, spec, parts, memo)
    gain = run["final"]["gold"] - run["start"]["gold"]
    details = f"SFT -> after PPO: {_describe(run)}; gold gain {gain:.3f} (needs >= {spec['min_gold_gain']})"
    return {"gold_gain": gain, "malformed": run["final"]["malformed"]}, details, {"run": run["history"]}


def measure_blind_spot(cfg: Config, spec: dict, parts: training.Parts, memo: dict):
    run = ppo_outcome(cfg, spec, parts, memo)
    s, f = run["start"], run["final"]
    details = f"SFT -> after PPO without KL penalty: {_describe(run)}"
    metrics = {"rm_gain": f["rm_score"] - s["rm_score"], "gold_change": f["gold"] - s["gold"],
               "malformed": f["malformed"]}
    return metrics, details, {"run": run["history"]}


def measure_ptx(cfg: Config, spec: dict, parts: training.Parts, memo: dict):
    with_ptx = ppo_outcome(cfg, spec, parts, memo)
    baseline_spec = {**spec, "ppo": {k: v for k, v in spec["ppo"].items() if k != "ptx_coef"}}
    without = ppo_outcome(cfg, baseline_spec, parts, memo)
    gain = with_ptx["final"]["accuracy"] - without["final"]["accuracy"]
    details = (f"accuracy with ptx {with_ptx['final']['accuracy']:.3f}, without {without['final']['accuracy']:.3f} "
               f"(gain {gain:.3f}, needs >= {spec['min_accuracy_gain']})")
    return {"accuracy_gain": gain}, details, {"ptx": with_ptx["history"], "no ptx": without["history"]}


# ---------------------------------------------------------------- the judgement
BLIND_SPOT_MISSED = "without a KL penalty the policy should fall into the RM's blind spot (gold down, malformed up)"
# test -> [(metric, threshold: a grading.yaml key of the test or a number, side, message when it fails)]
# side ">=" / "<=" / ">" is where the metric must lie relative to the threshold; checked in order.
CRITERIA = {
    "reward_model": [
        ("accuracy", "min_pairwise_accuracy", ">=",
         "the reward model trained with your ranking_loss ranks held-out pairs poorly"),
        ("parity_gap", 0.0, ">", "the reward model should rank every even digit above every odd digit"),
    ],
    "kl_penalty": [
        ("gold_gain", "min_gold_gain", ">=", "PPO with a KL penalty did not raise the gold score enough"),
        ("malformed", "max_malformed", "<=", "PPO with a KL penalty produced too many malformed answers"),
    ],
    "blind_spot": [
        ("rm_gain", "min_rm_gain", ">=",
         "without a KL penalty the RM score should rise a lot (the policy exploits the RM)"),
        ("gold_change", "max_gold_change", "<=", BLIND_SPOT_MISSED),
        ("malformed", "min_malformed", ">=", BLIND_SPOT_MISSED),
    ],
    "ptx": [
        ("accuracy_gain", "min_accuracy_gain", ">=",
         "PPO-ptx should keep more arithmetic accuracy than the same run without ptx"),
    ],
}


def threshold(spec: dict, bound) -> float:
    return float(spec[bound]) if isinstance(bound, str) else float(bound)


def margin(value: float, bound: float, side: str) -> float:
    """How far `value` lies inside the passing side of `bound` (negative: it fails)."""
    return value - bound if side.startswith(">") else bound - value


def verdict(name: str, spec: dict, metrics: dict) -> str:
    """The message of the first criterion the metrics fail, or "" when the test passes."""
    for metric, bound, side, message in CRITERIA[name]:
        m = margin(metrics[metric], threshold(spec, bound), side)
        if m < 0 or (m == 0 and side == ">"):
            return message
    return ""


MEASURES = {"reward_model": measure_reward_model, "kl_penalty": measure_kl_penalty,
            "blind_spot": measure_blind_spot, "ptx": measure_ptx}
TITLES = {
    "reward_model": "a reward model trained with your ranking_loss learns the labeler's preference",
    "kl_penalty": "PPO with a KL penalty (your GAE, PPO and KL parts) raises the gold score",
    "blind_spot": "PPO without a KL penalty exploits the reward model's blind spot",
    "ptx": "PPO-ptx keeps more arithmetic accuracy than PPO alone",
}
