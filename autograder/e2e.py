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
        message, details, histories = JUDGES[name](cfg, spec, sub, reference)
    except SubmissionError as exc:
        message, details, histories = str(exc), "", {}
    except (RuntimeError, ValueError) as exc:  # e.g. nan probabilities while sampling
        message, details, histories = f"training diverged: {str(exc)[:200]}", "", {}
    result.message, result.details = message, details
    if histories:
        from autograder.plots import e2e_plots
        result.plots = e2e_plots(name, histories)
    return result


# ---------------------------------------------------------------- the four judgements
def judge_reward_model(cfg: Config, spec: dict, sub: RemoteSubmission, reference: ModuleType):
    data = rankings(spec["seed"], spec["n_prompts"], spec["K"])
    loss = mixed_parts(cfg, sub, reference, spec["parts"]).ranking_loss
    rm = training.train_reward_model(data, loss, spec["steps"], spec["lr"])
    heldout = rankings(spec["seed"] + EVAL_SEED_OFFSET, spec["heldout_prompts"], spec["K"])
    accuracy = training.pairwise_accuracy(rm, heldout)
    w = rm.w.detach()
    details = (f"held-out pairwise accuracy {accuracy:.3f} (needs >= {spec['min_pairwise_accuracy']}); "
               f"weights {[round(x, 2) for x in w.tolist()]}")
    if accuracy < spec["min_pairwise_accuracy"]:
        return "the reward model trained with your ranking_loss ranks held-out pairs poorly", details, {}
    if not ((w[0::2] > 0).all() and (w[1::2] < 0).all()):
        return "the reward model should learn even digits > 0 and odd digits < 0", details, {}
    return "", details, {}


def ppo_outcome(cfg: Config, spec: dict, sub: RemoteSubmission, reference: ModuleType) -> dict:
    """Train PPO with the submission's parts and return its history and the final evaluation.

    Runs are memoised per submission and settings, so ptx reuses the kl_penalty run as its baseline.
    """
    rm_spec = cfg.e2e["reward_model"]
    rm = reference_rm(rm_spec["seed"], rm_spec["n_prompts"], rm_spec["K"], rm_spec["steps"], rm_spec["lr"])
    ppo = dict(spec["ppo"])
    key = (tuple(sorted(ppo.items())), spec["seed"], tuple(spec["parts"]), spec["eval_prompts"])
    cache = sub.memo
    if key not in cache:
        policy = tinylm.load_sft()
        parts = mixed_parts(cfg, sub, reference, spec["parts"])
        history = training.train_ppo(policy, rm, parts, training.PPOConfig(seed=spec["seed"], **ppo))
        final = training.evaluate_policy(policy, rm, spec["eval_prompts"], spec["seed"] + EVAL_SEED_OFFSET)
        cache[key] = {"history": history, "final": final}
    start = sft_evaluation(rm_spec, spec["eval_prompts"], spec["seed"] + EVAL_SEED_OFFSET)
    return {**cache[key], "start": start}


@functools.lru_cache(maxsize=4)
def _sft_evaluation(rm_key: tuple, n: int, seed: int) -> dict:
    return training.evaluate_policy(tinylm.load_sft(), reference_rm(*rm_key), n, seed)


def sft_evaluation(rm_spec: dict, n: int, seed: int) -> dict:
    rm_key = (rm_spec["seed"], rm_spec["n_prompts"], rm_spec["K"], rm_spec["steps"], rm_spec["lr"])
    return _sft_evaluation(rm_key, n, seed)


def _describe(run: dict) -> str:
    s, f = run["start"], run["final"]
    return "; ".join(f"{k} {s[k]:.3f} -> {f[k]:.3f}" for k in ("rm_score", "gold", "malformed", "accuracy"))


def judge_kl_penalty(cfg: Config, spec: dict, sub: RemoteSubmission, reference: ModuleType):
    run = ppo_outcome(cfg, spec, sub, reference)
    gain = run["final"]["gold"] - run["start"]["gold"]
    details = f"SFT -> after PPO: {_describe(run)}; gold gain {gain:.3f} (needs >= {spec['min_gold_gain']})"
    if gain < spec["min_gold_gain"]:
        return "PPO with a KL penalty did not raise the gold score enough", details, {"run": run["history"]}
    if run["final"]["malformed"] > spec["max_malformed"]:
        return "PPO with a KL penalty produced too many malformed answers", details, {"run": run["history"]}
    return "", details, {"run": run["history"]}


def judge_blind_spot(cfg: Config, spec: dict, sub: RemoteSubmission, reference: ModuleType):
    run = ppo_outcome(cfg, spec, sub, reference)
    s, f = run["start"], run["final"]
    details = f"SFT -> after PPO without KL penalty: {_describe(run)}"
    if f["rm_score"] - s["rm_score"] < spec["min_rm_gain"]:
        return "without a KL penalty the RM score should rise a lot (the policy exploits the RM)", details, \
            {"run": run["history"]}
    if f["gold"] - s["gold"] > spec["max_gold_change"] or f["malformed"] < spec["min_malformed"]:
        return "without a KL penalty the policy should fall into the RM's blind spot (gold down, " \
               "malformed up)", details, {"run": run["history"]}
    return "", details, {"run": run["history"]}


def judge_ptx(cfg: Config, spec: dict, sub: RemoteSubmission, reference: ModuleType):
    with_ptx = ppo_outcome(cfg, spec, sub, reference)
    baseline_spec = {**spec, "ppo": {k: v for k, v in spec["ppo"].items() if k != "ptx_coef"}}
    without = ppo_outcome(cfg, baseline_spec, sub, reference)
    gain = with_ptx["final"]["accuracy"] - without["final"]["accuracy"]
    details = (f"accuracy with ptx {with_ptx['final']['accuracy']:.3f}, without {without['final']['accuracy']:.3f} "
               f"(gain {gain:.3f}, needs >= {spec['min_accuracy_gain']})")
    histories = {"ptx": with_ptx["history"], "no ptx": without["history"]}
    if gain < spec["min_accuracy_gain"]:
        return "PPO-ptx should keep more arithmetic accuracy than the same run without ptx", details, histories
    return "", details, histories


JUDGES = {"reward_model": judge_reward_model, "kl_penalty": judge_kl_penalty,
          "blind_spot": judge_blind_spot, "ptx": judge_ptx}
TITLES = {
    "reward_model": "a reward model trained with your ranking_loss learns the labeler's preference",
    "kl_penalty": "PPO with a KL penalty (your GAE, PPO and KL parts) raises the gold score",
    "blind_spot": "PPO without a KL penalty exploits the reward model's blind spot",
    "ptx": "PPO-ptx keeps more arithmetic accuracy than PPO alone",
}
