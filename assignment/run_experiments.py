"""Run the lab's experiments with YOUR rlhf.py and watch RLHF work (and fail).

    python run_experiments.py                 # about a minute on a laptop CPU
    python run_experiments.py --iterations 60 --out my_plots

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
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
import time
from pathlib import Path


from lab_helpers import collect_rankings
from tinylm import load_sft
from training import (Parts, PPOConfig, evaluate_policy, pairwise_accuracy, probe_inputs, train_ppo,
                      train_reward_model)

RUNS = {  # name -> PPO settings on top of PPOConfig's defaults
    "kl": {"beta": 0.2},
    "no-kl": {"beta": 0.0},
    "ptx": {"beta": 0.2, "ptx_coef": 1.0},
}
METRICS = (("rm_score", "RM score"), ("gold", "gold score (hidden labeler)"), ("kl", "KL to SFT (nats)"),
           ("malformed", "malformed fraction"))


def load_parts(path: Path) -> Parts:
    """The seven functions from the student's file; exits with a clear message if one is missing."""
    spec = importlib.util.spec_from_file_location("rlhf", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    parts = Parts.from_module(module)
    for name, args in probe_inputs().items():
        try:
            getattr(parts, name)(*args)
        except NotImplementedError:
            sys.exit(f"rlhf.{name} is not implemented yet (it raises NotImplementedError). "
                     "Implement it, run the public tests, then run the experiments again.")
    return parts


def progress(name: str):
    """A callback for train_ppo that prints the metrics every 20 iterations."""
    def report(it: int, s: dict) -> None:
        if it % 20 == 19:
            print(f"  {name:6s} iter {it + 1:4d}  rm {s['rm_score']:6.2f}  gold {s['gold']:5.2f}  "
                  f"kl {s['kl']:6.2f}  malformed {s['malformed']:4.2f}")
    return report


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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--solution", type=Path, default=Path(__file__).with_name("rlhf.py"))
    parser.add_argument("--iterations", type=int, default=120)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--runs", default=",".join(RUNS), help="comma-separated subset of " + ", ".join(RUNS))
    parser.add_argument("--out", type=Path, default=Path("plots"))
    args = parser.parse_args(argv)
    parts = load_parts(args.solution)

    t0 = time.perf_counter()
    sft = load_sft()
    rankings = collect_rankings(sft, 1024, K=4, seed=args.seed)
    rm = train_reward_model(rankings, parts.ranking_loss)
    heldout = collect_rankings(sft, 512, K=4, seed=args.seed + 10_000)
    print(f"reward model: held-out pairwise accuracy {pairwise_accuracy(rm, heldout):.3f}, "
          f"weights {[round(w, 2) for w in rm.w.tolist()]}  ({time.perf_counter() - t0:.1f} s)")

    start = evaluate_policy(sft, rm, seed=args.seed + 10_000)
    rows, histories = {"SFT": start}, {}
    for name in args.runs.split(","):
        t0 = time.perf_counter()
        policy = load_sft()
        cfg = PPOConfig(iterations=args.iterations, seed=args.seed, **RUNS[name])
        histories[name] = train_ppo(policy, rm, parts, cfg, on_iteration=progress(name))
        rows[name] = evaluate_policy(policy, rm, seed=args.seed + 10_000)
        print(f"{name}: {time.perf_counter() - t0:.1f} s")

    print(f"\n{'policy':8s} {'RM score':>9s} {'gold':>6s} {'malformed':>10s} {'accuracy':>9s}")
    for name, m in rows.items():
        print(f"{name:8s} {m['rm_score']:9.3f} {m['gold']:6.3f} {m['malformed']:10.3f} {m['accuracy']:9.3f}")
    paths = plot(histories, args.out)
    print("\nplots: " + "  ".join(str(p) for p in paths))
    return 0


if __name__ == "__main__":
    sys.exit(main())
