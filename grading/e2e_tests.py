"""Lab 12's end-to-end tests: PPO and the reward model trained with the submission's pieces.

    reward_model  the DigitRM trained with the submission's ranking_loss ranks held-out pairs well
    kl_penalty    PPO with beta > 0 raises the gold score over the SFT policy, few malformed answers
    blind_spot    PPO with beta = 0 exploits the RM: RM score up, gold down, malformed up
    ptx           PPO-ptx keeps more arithmetic accuracy than the same run without ptx

Each is registered once with `@e2e_test` (autograder/judge/e2e.py); grading.yaml `e2e.<name>` holds its numbers.
What the reference gives every grade (rankings, RM, the SFT policy's evaluation) comes from baseline.py.
"""

from __future__ import annotations

from typing import Callable, Mapping

from autograder import replay
from autograder.judge.e2e import Criterion, e2e_test
from autograder.lab.config import Config
from autograder.lab.paths import use_world

from .baseline import EVAL_SEED_OFFSET, RM_TEST, rankings, reference_rm, rm_key, sft_evaluation

use_world()
import tinylm  # noqa: E402
import training  # noqa: E402

# Measured CPU seconds of one PPO iteration of the reference (batch 32, one torch thread), and the share an
# SFT loss (ptx) adds: the lanes of a grade are balanced with these (autograder/judge/lanes.py).
PPO_ITERATION_SECONDS, PTX_SHARE = 0.1, 0.3
RM_TRAINING_SECONDS = 1.4


def rm_run_key(spec: Mapping) -> tuple:
    """The key of the reward_model test's training: everything its outcome depends on."""
    return ("reward_model", *(spec[k] for k in ("seed", "n_prompts", "heldout_prompts", "K", "steps", "batch_size",
                                               "lr")))


def ppo_key(spec: Mapping) -> tuple:
    """The memo key of the PPO run `spec` describes: everything its outcome depends on."""
    return (tuple(sorted(spec["ppo"].items())), spec["seed"], tuple(spec["parts"]), spec["eval_prompts"])


def without_ptx(spec: Mapping) -> dict:
    """The same run without the SFT loss: ptx's baseline, which is kl_penalty's run."""
    return {**spec, "ppo": {k: v for k, v in spec["ppo"].items() if k != "ptx_coef"}}


def ppo_runs(*also: Callable[[Mapping], Mapping]) -> Callable[[Mapping], dict]:
    """A test's `runs`: its own PPO run and the runs `also` derives from its spec, key -> estimated CPU seconds."""
    def runs(spec: Mapping) -> dict:
        out = {}
        for s in (spec, *(derive(spec) for derive in also)):
            share = 1 + PTX_SHARE if s["ppo"].get("ptx_coef", 0) > 0 else 1
            out[ppo_key(s)] = s["ppo"]["iterations"] * s["ppo"]["batch_size"] / 32 * PPO_ITERATION_SECONDS * share
        return out
    return runs


def ppo_outcome(cfg: Config, spec: Mapping, parts: training.Parts, memo: dict) -> dict:
    """Train PPO with `parts` and return its history and the final evaluation (memoised in `memo`)."""
    rm = reference_rm(*rm_key(cfg.e2e))
    ppo = dict(spec["ppo"])
    key = ppo_key(spec)

    def train() -> dict:
        policy = tinylm.load_sft()
        history = training.train_ppo(policy, rm, parts, training.PPOConfig(seed=spec["seed"], **ppo))
        final = training.evaluate_policy(policy, rm, spec["eval_prompts"], spec["seed"] + EVAL_SEED_OFFSET)
        return {"history": history, "final": final}

    if key not in memo:
        memo[key] = replay.outcome(key, parts, train, cfg.calibration.replay_rtol, cfg.calibration.replay_atol)
    start = sft_evaluation(rm_key(cfg.e2e), spec["eval_prompts"], spec["seed"] + EVAL_SEED_OFFSET)
    return {**memo[key], "start": start}


def _describe(run: dict) -> str:
    s, f = run["start"], run["final"]
    return "; ".join(f"{k} {s[k]:.3f} -> {f[k]:.3f}" for k in ("rm_score", "gold", "malformed", "accuracy"))


# ---------------------------------------------------------------- the four tests
# Each measurement returns (metrics, details, histories) for a training with `parts`; `memo` caches PPO
# runs per submission, so ptx reuses the kl_penalty run as its baseline. Calibration calls them too.
PPO_KEYS = ("ppo", "eval_prompts")
BLIND_SPOT_MISSED = "without a KL penalty the policy should fall into the RM's blind spot (gold down, malformed up)"


@e2e_test(RM_TEST, "a reward model trained with your ranking_loss learns the labeler's preference",
          "trains the 10-weight DigitRM on the labeler's rankings of SFT samples with your ranking_loss, then "
          "measures its pairwise accuracy on held-out rankings and the order of its digit weights",
          [Criterion("accuracy", "min_pairwise_accuracy", ">=",
                     "the reward model trained with your ranking_loss ranks held-out pairs poorly"),
           Criterion("parity_gap", 0.0, ">", "the reward model should rank every even digit above every odd digit")],
          settings=("n_prompts", "heldout_prompts", "K", "steps", "batch_size", "lr", "min_pairwise_accuracy"),
          runs=lambda spec: {rm_run_key(spec): RM_TRAINING_SECONDS * spec["steps"] / 300})
def measure_reward_model(cfg: Config, spec: Mapping, parts: training.Parts, memo: dict):
    """Minibatches of `batch_size` rankings per step, so that a correct ranking_loss written as Python loops
    over pairs stays affordable (the reference RM the PPO tests use is trained on the full batch: baseline.py).
    Replayed like the PPO runs: a ranking_loss that answers the reference's 300 recorded calls as it does is not
    trained with (nor is torch.optim, and so torch._dynamo, imported for it)."""
    def train() -> dict:
        data = rankings(spec["seed"], spec["n_prompts"], spec["K"])
        rm = training.train_reward_model(data, parts.ranking_loss, spec["steps"], spec["lr"], spec["batch_size"],
                                         spec["seed"])
        heldout = rankings(spec["seed"] + EVAL_SEED_OFFSET, spec["heldout_prompts"], spec["K"])
        w = rm.w.detach()
        # > 0: every even digit's weight above every odd digit's. The weights' level is barely identified (a
        # shift c per digit moves a reward by c * length), so their signs vary with the data; the order does not.
        parity_gap = (w[0::2].min() - w[1::2].max()).item()
        return {"accuracy": training.pairwise_accuracy(rm, heldout), "parity_gap": parity_gap, "weights": w.tolist()}

    run = replay.outcome(rm_run_key(spec), parts, train, cfg.calibration.replay_rtol, cfg.calibration.replay_atol)
    details = (f"held-out pairwise accuracy {run['accuracy']:.3f} (needs >= {spec['min_pairwise_accuracy']}); "
               f"weights {[round(x, 2) for x in run['weights']]}" + replay.note(run))
    return {"accuracy": run["accuracy"], "parity_gap": run["parity_gap"]}, details, {}


@e2e_test("kl_penalty", "PPO with a KL penalty (your GAE, PPO and KL parts) raises the gold score",
          "runs PPO from the SFT policy against the reference RM with a KL penalty (beta > 0), using your GAE, "
          "PPO losses and KL shaping; the hidden labeler's gold score must rise with few malformed answers",
          [Criterion("gold_gain", "min_gold_gain", ">=", "PPO with a KL penalty did not raise the gold score enough"),
           Criterion("malformed", "max_malformed", "<=", "PPO with a KL penalty produced too many malformed answers")],
          settings=(*PPO_KEYS, "min_gold_gain", "max_malformed"), band="run", plotted=("gold", "malformed"),
          runs=ppo_runs())
def measure_kl_penalty(cfg: Config, spec: Mapping, parts: training.Parts, memo: dict):
    run = ppo_outcome(cfg, spec, parts, memo)
    gain = run["final"]["gold"] - run["start"]["gold"]
    details = (f"SFT -> after PPO: {_describe(run)}; gold gain {gain:.3f} (needs >= {spec['min_gold_gain']})"
               + replay.note(run))
    return {"gold_gain": gain, "malformed": run["final"]["malformed"]}, details, {"run": run["history"]}


@e2e_test("blind_spot", "PPO without a KL penalty exploits the reward model's blind spot",
          "PPO without the KL penalty (beta = 0, and a smaller learning rate, so that it explores long enough to "
          "meet the blind spot): the policy should exploit the RM (more even digits, no <eos>), so the RM score "
          "rises while gold falls and malformed answers dominate",
          [Criterion("rm_gain", "min_rm_gain", ">=",
                     "without a KL penalty the RM score should rise a lot (the policy exploits the RM)", "RM gain"),
           Criterion("gold_change", "max_gold_change", "<=", BLIND_SPOT_MISSED),
           Criterion("malformed", "min_malformed", ">=", BLIND_SPOT_MISSED)],
          settings=(*PPO_KEYS, "min_rm_gain", "max_gold_change", "min_malformed"), band="run",
          plotted=("rm_score", "gold", "malformed"), runs=ppo_runs())
def measure_blind_spot(cfg: Config, spec: Mapping, parts: training.Parts, memo: dict):
    run = ppo_outcome(cfg, spec, parts, memo)
    s, f = run["start"], run["final"]
    details = f"SFT -> after PPO without KL penalty: {_describe(run)}" + replay.note(run)
    metrics = {"rm_gain": f["rm_score"] - s["rm_score"], "gold_change": f["gold"] - s["gold"],
               "malformed": f["malformed"]}
    return metrics, details, {"run": run["history"]}


PTX_BASELINE = Criterion("baseline_gold_gain", "min_baseline_gold_gain", ">=",
                         "the same PPO run without ptx did not raise the gold score enough: an accuracy kept by the "
                         "SFT loss alone says nothing of PPO pieces that do not train")


@e2e_test("ptx", "PPO-ptx keeps more arithmetic accuracy than PPO alone, with PPO pieces that train",
          "the kl_penalty run with an added SFT loss on correct sums (ptx); the same run without ptx (kl_penalty's, "
          "reused) must raise the gold score, the ptx run must give few malformed answers, and its sampled "
          "arithmetic accuracy must beat the run without ptx",
          [PTX_BASELINE,
           Criterion("malformed", "max_malformed", "<=", "PPO-ptx produced too many malformed answers"),
           Criterion("accuracy_gain", "min_accuracy_gain", ">=",
                     "PPO-ptx should keep more arithmetic accuracy than the same run without ptx")],
          settings=(*PPO_KEYS, "min_baseline_gold_gain", "max_malformed", "min_accuracy_gain"), shares="kl_penalty",
          band="ptx", plotted=("accuracy",), runs=ppo_runs(without_ptx))
def measure_ptx(cfg: Config, spec: Mapping, parts: training.Parts, memo: dict):
    """Judged on the PPO pieces training (gold gain of its baseline run, malformed answers of its own) before the
    accuracy it keeps: with pieces that do nothing the SFT loss alone wins accuracy over a run that did not move.
    (The ptx run's own gold gain is too close to 0 for the reference, 0.06 .. 0.15, to tell that apart.)
    When the baseline fails, the ptx run is not trained: nothing it measures could pass the test."""
    without = ppo_outcome(cfg, without_ptx(spec), parts, memo)
    baseline_gain = without["final"]["gold"] - without["start"]["gold"]
    baseline = (f"the same run without ptx: gold gain {baseline_gain:.3f} "
                f"(needs >= {spec['min_baseline_gold_gain']})")
    if PTX_BASELINE.fails(spec, baseline_gain):
        details = (f"SFT -> after PPO without ptx: {_describe(without)}; {baseline}; the run with ptx was not "
                   "trained, since the test fails whatever it measures" + replay.note(without))
        return {"baseline_gold_gain": baseline_gain}, details, {}  # kl_penalty's plot shows that run
    with_ptx = ppo_outcome(cfg, spec, parts, memo)
    gain = with_ptx["final"]["accuracy"] - without["final"]["accuracy"]
    details = (f"SFT -> after PPO-ptx: {_describe(with_ptx)}; {baseline}; accuracy with ptx "
               f"{with_ptx['final']['accuracy']:.3f}, without {without['final']['accuracy']:.3f} (gain {gain:.3f}, "
               f"needs >= {spec['min_accuracy_gain']})" + replay.note(with_ptx, without))
    metrics = {"baseline_gold_gain": baseline_gain, "malformed": with_ptx["final"]["malformed"],
               "accuracy_gain": gain}
    return metrics, details, {"ptx": with_ptx["history"], "no ptx": without["history"]}
