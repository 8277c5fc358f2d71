"""Run the lab's experiments with YOUR functions and watch RLHF work (and fail).

    python run_experiments.py                     # your rlhf.py (or rlhf.ipynb) next to this file
    python run_experiments.py --solution my.ipynb --iterations 60 --out my_plots

1. The labeler ranks K = 4 samples of the SFT policy for 1024 prompts; a DigitRM is trained on those
   rankings with your `ranking_loss`, and its held-out pairwise accuracy is printed.
2. PPO (your compute_gae, ppo_policy_loss, ppo_value_loss, shaped_rewards) optimises the SFT policy
   against that reward model three times:
     kl     beta = 0.2: the KL penalty keeps the policy near the SFT model; gold goes up.
     no-kl  beta = 0:   the policy finds the RM's blind spot (four even digits, no <eos>):
                        RM score keeps rising while gold crashes to -1. Early on it looks like success!
     ptx    beta = 0.2 plus the SFT loss mixed in (PPO-ptx): arithmetic accuracy is kept better.
3. A table of the final metrics is printed and plots (RM score, gold, KL, malformed per iteration)
   are saved as PNG files.

A progress bar (on stderr) follows each PPO run; about a minute in all on a laptop CPU.
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
import time
from pathlib import Path
from types import ModuleType

from lab_helpers import collect_rankings
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn
from tinylm import load_sft
from training import Parts, PPOConfig, evaluate_policy, pairwise_accuracy, probe_inputs, train_ppo, train_reward_model

HERE = Path(__file__).resolve().parent
RUNS = {  # name -> PPO settings on top of PPOConfig's defaults
    "kl": {"beta": 0.2},
    "no-kl": {"beta": 0.0},
    "ptx": {"beta": 0.2, "ptx_coef": 1.0},
}
METRICS = (("rm_score", "RM score"), ("gold", "gold score (hidden labeler)"), ("kl", "KL to SFT (nats)"),
           ("malformed", "malformed fraction"))
STDERR = Console(stderr=True)


def default_solution() -> Path:
    """rlhf.py next to this file, else the notebook rlhf.ipynb (the nbgrader edition has only that)."""
    script = HERE / "rlhf.py"
    return script if script.exists() or not (HERE / "rlhf.ipynb").exists() else HERE / "rlhf.ipynb"


def import_solution(path: Path) -> ModuleType:
    """The student's module: rlhf.py as it is, or a notebook's definitions (as the grader takes them)."""
    if path.suffix == ".ipynb":
        sys.path.insert(0, str(HERE))  # the grading engine shipped next to this file reads notebooks
        from autograder.sandbox.notebook import notebook_to_source
        module = ModuleType("rlhf")
        module.__file__ = str(path)
        exec(compile(notebook_to_source(path), str(path), "exec"), module.__dict__)
        return module
    spec = importlib.util.spec_from_file_location("rlhf", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def load_parts(path: Path) -> Parts:
    """The seven functions from the student's file; exits with a clear message if one is missing."""
    if not path.exists():
        sys.exit(f"{path} does not exist: give your rlhf.py or notebook with --solution")
    parts = Parts.from_module(import_solution(path))
    for name, args in probe_inputs().items():
        try:
            getattr(parts, name)(*args)
        except NotImplementedError:
            sys.exit(f"rlhf.{name} is not implemented yet (it raises NotImplementedError). "
                     "Implement it, run the public tests, then run the experiments again.")
    return parts


def progress_bar() -> Progress:
    """One bar per PPO run: iterations done, the latest metrics, the time left (fits 80 columns)."""
    return Progress(TextColumn("{task.description:<6}"), BarColumn(bar_width=12), MofNCompleteColumn(),
                    TextColumn("{task.fields[s]}"), TimeRemainingColumn(), console=STDERR)


def metrics_text(s: dict) -> str:
    return f"rm {s['rm_score']:5.2f} gold {s['gold']:5.2f} kl {s['kl']:5.2f} malformed {s['malformed']:4.2f}"


def plot(histories: dict[str, list[dict]], out: Path) -> list[Path]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    out.mkdir(parents=True, exist_ok=True)
    paths = []
    for key, label in METRICS:
        fig, ax = plt.subplots(figsize=(6, 3.5))
        for name, history in histories.items():
            ax.plot([h[key] for h in history], label=name)
        ax.set_xlabel("PPO iteration")
        ax.set_ylabel(label)
        ax.legend()
        fig.tight_layout()
        path = out / f"{key}.png"
        fig.savefig(path, dpi=100)
        plt.close(fig)
        paths.append(path)
    return paths


def run_names(text: str) -> list[str]:
    names = [n.strip() for n in text.split(",") if n.strip()]
    unknown = [n for n in names if n not in RUNS]
    if unknown or not names:
        raise argparse.ArgumentTypeError(f"unknown run {', '.join(unknown) or '(none)'}; choose from {', '.join(RUNS)}")
    return names


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--solution", type=Path, default=default_solution(), metavar="FILE",
                        help="your rlhf.py or a notebook defining the same functions (default: %(default)s)")
    parser.add_argument("--iterations", type=int, default=120, metavar="N",
                        help="PPO iterations of each run (default: %(default)s; 60 is enough to see the trends)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the data and of PPO (default: %(default)s)")
    parser.add_argument("--runs", type=run_names, default=list(RUNS), metavar="NAMES",
                        help=f"comma-separated runs to train, from {', '.join(RUNS)} (default: all)")
    parser.add_argument("--out", type=Path, default=Path("plots"), metavar="DIR",
                        help="folder for the PNG plots (default: ./%(default)s)")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    parts = load_parts(args.solution)

    t0 = time.perf_counter()
    sft = load_sft()
    with STDERR.status("training the reward model with your ranking_loss"):
        rankings = collect_rankings(sft, 1024, K=4, seed=args.seed)
        rm = train_reward_model(rankings, parts.ranking_loss)
        heldout = collect_rankings(sft, 512, K=4, seed=args.seed + 10_000)
    print(f"reward model: held-out pairwise accuracy {pairwise_accuracy(rm, heldout):.3f}, "
          f"weights {[round(w, 2) for w in rm.w.tolist()]}  ({time.perf_counter() - t0:.1f} s)")

    start = evaluate_policy(sft, rm, seed=args.seed + 10_000)
    rows, histories = {"SFT": start}, {}
    with progress_bar() as bar:
        for name in args.runs:
            task = bar.add_task(name, total=args.iterations, s="")
            policy = load_sft()
            cfg = PPOConfig(iterations=args.iterations, seed=args.seed, **RUNS[name])
            histories[name] = train_ppo(policy, rm, parts, cfg,
                                        on_iteration=lambda it, s, task=task: bar.update(task, advance=1,
                                                                                         s=metrics_text(s)))
            rows[name] = evaluate_policy(policy, rm, seed=args.seed + 10_000)

    print(f"\n{'policy':8s} {'RM score':>9s} {'gold':>6s} {'malformed':>10s} {'accuracy':>9s}")
    for name, m in rows.items():
        print(f"{name:8s} {m['rm_score']:9.3f} {m['gold']:6.3f} {m['malformed']:10.3f} {m['accuracy']:9.3f}")
    paths = plot(histories, args.out)
    print("\nplots: " + "  ".join(str(p) for p in paths))
    return 0


if __name__ == "__main__":
    sys.exit(main())
