"""End-to-end tests: train with the submission's functions, judge the outcome with the given world.

The judge runs the training code itself. The submission's functions for the parts under test are
called in the sandbox (`RemoteFunction`: plain tensors in, values and gradients out); every other
part uses the reference, so one mistake never costs points twice. The trained models stay in the
judge and are evaluated on fresh prompts by the judge's own copy of the world.

Each test is declared once, with `@e2e_test` on its measurement: its title, description, criteria, the
grading.yaml keys of its own, which test's runs it reuses and which history its calibration band shows.
`grade`, `calibrate`, the handout and the reports read REGISTRY; tests/test_config.py checks it against
grading.yaml's `e2e` section.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import ModuleType
from typing import Callable, Mapping

from autograder.baseline import EVAL_SEED_OFFSET, RM_TEST, rankings, reference_rm, rm_key, sft_evaluation
from autograder.config import Config, ConfigError
from autograder.outcome import Finding
from autograder.paths import use_world
from autograder.remote import RemoteSubmission, SubmissionError

use_world()
import tinylm  # noqa: E402
import training  # noqa: E402


@dataclass(frozen=True)
class Criterion:
    metric: str
    bound: str | float   # a grading.yaml key of the test, or a number
    side: str            # ">=", "<=" or ">": where the metric must lie relative to the bound
    message: str         # the test's message when the metric is on the wrong side


Measure = Callable[[Config, Mapping, training.Parts, dict], tuple[dict, str, dict]]


@dataclass(frozen=True)
class E2ETest:
    name: str
    title: str                   # one line, shown to students
    description: str             # what it trains and why it should pass (handout)
    criteria: tuple[Criterion, ...]
    settings: tuple[str, ...]    # the test's own grading.yaml keys, beside points/parts/seed/visibility
    measure: Measure             # (cfg, spec, parts, memo) -> (metrics, details, histories)
    shares: str | None = None    # measured in one process with this test, whose runs it reuses
    band: str | None = None      # the history (a key of `histories`) its calibration band shows

    def verdict(self, spec: Mapping, metrics: dict) -> str:
        """The message of the first criterion the metrics fail, or "" when the test passes."""
        for c in self.criteria:
            m = margin(metrics[c.metric], threshold(spec, c.bound), c.side)
            if m < 0 or (m == 0 and c.side == ">"):
                return c.message
        return ""

    @property
    def thresholds(self) -> set[str]:
        return {c.bound for c in self.criteria if isinstance(c.bound, str)}


REGISTRY: dict[str, E2ETest] = {}


def e2e_test(name: str, title: str, description: str, criteria: list[Criterion], settings: tuple[str, ...],
             shares: str | None = None, band: str | None = None) -> Callable[[Measure], Measure]:
    """Register the decorated measurement as the end-to-end test `name` (grading.yaml `e2e.<name>`)."""
    def register(measure: Measure) -> Measure:
        if name in REGISTRY:
            raise ValueError(f"e2e test {name} is registered twice")
        REGISTRY[name] = E2ETest(name, title, description, tuple(criteria), settings, measure, shares, band)
        return measure
    return register


def check_config(cfg: Config) -> None:
    """grading.yaml's `e2e` section holds exactly the registered tests, each with exactly its own keys."""
    if set(cfg.e2e) != set(REGISTRY):
        extra, missing = sorted(set(cfg.e2e) - set(REGISTRY)), sorted(set(REGISTRY) - set(cfg.e2e))
        raise ConfigError(f"{cfg.where('e2e')}: e2e tests differ from the registered ones "
                          f"(unknown: {', '.join(extra) or '-'}; missing: {', '.join(missing) or '-'})")
    for name, spec in cfg.e2e.items():
        declared = set(REGISTRY[name].settings)
        for key in sorted(set(spec.settings) ^ declared):
            problem = "unknown key" if key in spec.settings else "missing key"
            raise ConfigError(f"{cfg.where(f'e2e.{name}.{key}')}: e2e.{name}.{key}: {problem} "
                              f"(the test's keys: {', '.join(sorted(declared))})")
        unknown_parts = set(spec.parts) - set(cfg.parts)
        if unknown_parts:
            raise ConfigError(f"{cfg.where(f'e2e.{name}.parts')}: e2e.{name}.parts: no such part "
                              f"{', '.join(sorted(unknown_parts))}")


def threshold(spec: Mapping, bound: str | float) -> float:
    return float(spec[bound]) if isinstance(bound, str) else float(bound)


def margin(value: float, bound: float, side: str) -> float:
    """How far `value` lies inside the passing side of `bound` (negative: it fails)."""
    return value - bound if side.startswith(">") else bound - value


# ---------------------------------------------------------------- running one test in a grade
def mixed_parts(cfg: Config, sub: RemoteSubmission, reference: ModuleType, graded: tuple[str, ...]) -> training.Parts:
    """The reference's functions, with the submission's for the functions of the `graded` parts."""
    remote = sub.parts(tuple(fn for part in graded for fn in cfg.parts[part]))
    return training.Parts.from_module(reference).replace(**remote)


def run(name: str, cfg: Config, sub: RemoteSubmission, reference: ModuleType) -> Finding:
    """Train and judge the e2e test `name` with the submission's functions of its parts."""
    from autograder.plots import e2e_plots
    test, spec = REGISTRY[name], cfg.e2e[name]
    try:
        for function in (fn for part in spec.parts for fn in cfg.parts[part]):
            sub.call(function, *training.probe_inputs()[function])  # fail fast before any training
        parts = mixed_parts(cfg, sub, reference, spec.parts)
        metrics, details, histories = test.measure(cfg, spec, parts, sub.memo)
    except SubmissionError as exc:
        return Finding.failed_call(str(exc), exc.kind, exc.detail)
    except (RuntimeError, ValueError) as exc:  # e.g. nan probabilities while sampling
        return Finding(message=f"training diverged: {str(exc)[:200]}", kind="diverged")
    plots = e2e_plots(name, histories) if histories else []
    return Finding(message=test.verdict(spec, metrics), details=details, plots=plots, metrics=metrics)


# ---------------------------------------------------------------- what the reference gives every grade
def ppo_outcome(cfg: Config, spec: Mapping, parts: training.Parts, memo: dict) -> dict:
    """Train PPO with `parts` and return its history and the final evaluation (memoised in `memo`)."""
    rm = reference_rm(*rm_key(cfg.e2e))
    ppo = dict(spec["ppo"])
    key = (tuple(sorted(ppo.items())), spec["seed"], tuple(spec["parts"]), spec["eval_prompts"])
    if key not in memo:
        policy = tinylm.load_sft()
        history = training.train_ppo(policy, rm, parts, training.PPOConfig(seed=spec["seed"], **ppo))
        final = training.evaluate_policy(policy, rm, spec["eval_prompts"], spec["seed"] + EVAL_SEED_OFFSET)
        memo[key] = {"history": history, "final": final}
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
          settings=("n_prompts", "heldout_prompts", "K", "steps", "lr", "min_pairwise_accuracy"))
def measure_reward_model(cfg: Config, spec: Mapping, parts: training.Parts, memo: dict):
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


@e2e_test("kl_penalty", "PPO with a KL penalty (your GAE, PPO and KL parts) raises the gold score",
          "runs PPO from the SFT policy against the reference RM with a KL penalty (beta > 0), using your GAE, "
          "PPO losses and KL shaping; the hidden labeler's gold score must rise with few malformed answers",
          [Criterion("gold_gain", "min_gold_gain", ">=", "PPO with a KL penalty did not raise the gold score enough"),
           Criterion("malformed", "max_malformed", "<=", "PPO with a KL penalty produced too many malformed answers")],
          settings=(*PPO_KEYS, "min_gold_gain", "max_malformed"), band="run")
def measure_kl_penalty(cfg: Config, spec: Mapping, parts: training.Parts, memo: dict):
    run = ppo_outcome(cfg, spec, parts, memo)
    gain = run["final"]["gold"] - run["start"]["gold"]
    details = f"SFT -> after PPO: {_describe(run)}; gold gain {gain:.3f} (needs >= {spec['min_gold_gain']})"
    return {"gold_gain": gain, "malformed": run["final"]["malformed"]}, details, {"run": run["history"]}


@e2e_test("blind_spot", "PPO without a KL penalty exploits the reward model's blind spot",
          "the same PPO run without the KL penalty (beta = 0): the policy should exploit the RM (more even "
          "digits, no <eos>), so the RM score rises while gold falls and malformed answers dominate",
          [Criterion("rm_gain", "min_rm_gain", ">=",
                     "without a KL penalty the RM score should rise a lot (the policy exploits the RM)"),
           Criterion("gold_change", "max_gold_change", "<=", BLIND_SPOT_MISSED),
           Criterion("malformed", "min_malformed", ">=", BLIND_SPOT_MISSED)],
          settings=(*PPO_KEYS, "min_rm_gain", "max_gold_change", "min_malformed"), band="run")
def measure_blind_spot(cfg: Config, spec: Mapping, parts: training.Parts, memo: dict):
    run = ppo_outcome(cfg, spec, parts, memo)
    s, f = run["start"], run["final"]
    details = f"SFT -> after PPO without KL penalty: {_describe(run)}"
    metrics = {"rm_gain": f["rm_score"] - s["rm_score"], "gold_change": f["gold"] - s["gold"],
               "malformed": f["malformed"]}
    return metrics, details, {"run": run["history"]}


@e2e_test("ptx", "PPO-ptx keeps more arithmetic accuracy than PPO alone",
          "the kl_penalty run with an added SFT loss on correct sums (ptx); its sampled arithmetic accuracy "
          "must beat the same run without ptx (kl_penalty's, reused)",
          [Criterion("accuracy_gain", "min_accuracy_gain", ">=",
                     "PPO-ptx should keep more arithmetic accuracy than the same run without ptx")],
          settings=(*PPO_KEYS, "min_accuracy_gain"), shares="kl_penalty", band="ptx")
def measure_ptx(cfg: Config, spec: Mapping, parts: training.Parts, memo: dict):
    with_ptx = ppo_outcome(cfg, spec, parts, memo)
    baseline_spec = {**spec, "ppo": {k: v for k, v in spec["ppo"].items() if k != "ptx_coef"}}
    without = ppo_outcome(cfg, baseline_spec, parts, memo)
    gain = with_ptx["final"]["accuracy"] - without["final"]["accuracy"]
    details = (f"accuracy with ptx {with_ptx['final']['accuracy']:.3f}, without {without['final']['accuracy']:.3f} "
               f"(gain {gain:.3f}, needs >= {spec['min_accuracy_gain']})")
    return {"accuracy_gain": gain}, details, {"ptx": with_ptx["history"], "no ptx": without["history"]}
