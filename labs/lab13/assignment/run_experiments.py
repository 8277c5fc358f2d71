"""Run Lab 13's experiments with YOUR functions: GRPO and Dr. GRPO on the verifiable reward, DPO and IPO on
the hidden labeler's preferences.

    python run_experiments.py                       # your posttrain.py (or posttrain.ipynb) next to this file
    python run_experiments.py --solution my.py --out my_plots

1. GRPO (your group_advantages, grpo_policy_loss): 16 problems x 8 sampled answers per iteration, reward 1
   for the exact sum. Greedy accuracy on fresh problems goes up. Dr. GRPO: no std, a constant normaliser.
2. DPO (your sequence_logprob, dpo_loss) on the labeler's best-vs-worst pairs of SFT samples: the gold score
   goes up, while the chosen answers' own log-prob goes DOWN and the arithmetic is lost: the labeler never
   checked the sums. IPO (your ipo_loss) regresses the margin to 1 / (2 beta) and drifts less.
3. A table of the results, and PNG plots of each run's per-iteration metrics.

About 20 s of CPU in all (one torch thread).
"""

from __future__ import annotations

import argparse
import copy
import importlib.util
import sys
from pathlib import Path
from types import ModuleType

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn
from training import (
    DPOConfig,
    GRPOConfig,
    Parts,
    collect_pairs,
    gold_metrics,
    greedy_accuracy,
    probe_inputs,
    tinylm,
    train_dpo,
    train_grpo,
)

HERE = Path(__file__).resolve().parent
GRPO_RUNS = {"GRPO": {}, "Dr. GRPO": {"normalize_std": False, "aggregation": "token_sum_norm", "beta": 0.0}}
PREFERENCE_RUNS = {"DPO": "dpo_loss", "IPO": "ipo_loss"}
STDERR = Console(stderr=True)


def default_solution() -> Path:
    """posttrain.py next to this file, else the notebook posttrain.ipynb (the nbgrader edition has only that)."""
    script = HERE / "posttrain.py"
    return script if script.exists() or not (HERE / "posttrain.ipynb").exists() else HERE / "posttrain.ipynb"


def load(path: Path) -> ModuleType:
    """The student's module: posttrain.py as it is, or a notebook's definitions (as the grader takes them)."""
    if not path.exists():
        sys.exit(f"{path} does not exist: give your posttrain.py or notebook with --solution")
    if path.suffix == ".ipynb":
        sys.path.insert(0, str(HERE))  # the grading engine shipped next to this file reads notebooks
        from autograder.sandbox.notebook import notebook_to_source
        module = ModuleType("posttrain")
        module.__file__ = str(path)
        exec(compile(notebook_to_source(path), str(path), "exec"), module.__dict__)
        return module
    spec = importlib.util.spec_from_file_location("posttrain", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def check_implemented(parts: Parts) -> list[str]:
    missing = []
    for name, args in probe_inputs().items():
        try:
            getattr(parts, name)(*args)
        except NotImplementedError:
            missing.append(name)
    return missing


def plot(histories: dict[str, list[dict]], out: Path) -> None:
    try:
        import matplotlib
        matplotlib.use("Agg")
        from matplotlib.figure import Figure
    except ImportError:
        STDERR.print("matplotlib is not installed: no plots")
        return
    out.mkdir(parents=True, exist_ok=True)
    for name, history in histories.items():
        metrics = list(history[0])
        fig = Figure(figsize=(4 * len(metrics), 3))
        for ax, metric in zip(fig.subplots(1, len(metrics)), metrics):
            ax.plot([h[metric] for h in history])
            ax.set_title(f"{name}: {metric}")
            ax.set_xlabel("iteration" if "GRPO" in name else "step")
        fig.tight_layout()
        path = out / f"{name.lower().replace('. ', '').replace(' ', '_')}.png"
        fig.savefig(path)
        STDERR.print(f"saved {path}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--solution", type=Path, default=default_solution(), metavar="FILE",
                        help="your posttrain.py or a notebook defining the same functions (default: %(default)s)")
    parser.add_argument("--out", type=Path, default=HERE / "plots")
    args = parser.parse_args()
    parts = Parts.from_module(load(args.solution))
    missing = check_implemented(parts)
    if missing:
        print(f"implement these first: {', '.join(missing)}")
        return 1
    sft = tinylm.load_sft()
    rows = [("SFT", greedy_accuracy(sft), gold_metrics(sft, sft))]
    histories: dict[str, list[dict]] = {}
    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), console=STDERR) as bar:
        for name, settings in GRPO_RUNS.items():
            cfg = GRPOConfig(**settings)
            task = bar.add_task(name, total=cfg.iterations)
            policy = copy.deepcopy(sft)
            histories[name] = train_grpo(policy, parts, cfg, on_iteration=lambda i, s, t=task: bar.advance(t))
            rows.append((name, greedy_accuracy(policy), gold_metrics(policy, sft)))
        pairs = collect_pairs(sft, 512)
        for name, loss in PREFERENCE_RUNS.items():
            cfg = DPOConfig()
            task = bar.add_task(name, total=cfg.steps)
            policy = copy.deepcopy(sft)
            histories[name] = train_dpo(policy, pairs, getattr(parts, loss), parts, cfg,
                                        on_step=lambda i, s, t=task: bar.advance(t))
            rows.append((name, greedy_accuracy(policy), gold_metrics(policy, sft)))
    print(f"{'policy':10} {'greedy acc':>10} {'gold':>7} {'malformed':>9} {'sampled acc':>11} {'KL to SFT':>9}")
    for name, acc, m in rows:
        print(f"{name:10} {acc:10.3f} {m['gold']:7.3f} {m['malformed']:9.3f} {m['accuracy']:11.3f} {m['kl']:9.3f}")
    plot(histories, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
