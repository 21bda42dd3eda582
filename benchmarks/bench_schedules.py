"""adp_sgd vs noisy_sgd under decaying step sizes, and each noise schedule vs constant noise,
at the same privacy: the comparisons of Wu et al. (ADP-SGD) and Hong, Wang & Zhou (dynamic
noise schedules) in skdp's setting (Poisson-sampled DP-SGD calibrated with PLD).

Every configuration is fitted with the estimator's defaults plus the settings in its row, for
each epsilon and seed, and scored on the test split (the same seeds for every row, so that row
differences are paired). Mean ± std over seeds.

Usage:
    python benchmarks/bench_schedules.py [--task adult-logreg fmnist-logreg adult-mlp fmnist-mlp]
        [--epsilons 0.5 1 2 4] [--seeds 3] [--decays 0.25 0.5]
"""

from __future__ import annotations

import argparse
import time

from _bench_common import (
    DELTA,
    add_threads_argument,
    apply_threads,
    collect_warnings,
    load_average,
    paired_cell,
    print_header,
    print_warnings,
)
from _datasets import adult, fashion_mnist

from skdp.linear_model import DPLogisticRegression
from skdp.neural_network import DPMLPClassifier

TASKS = {
    "adult-logreg": ("DPLogisticRegression on Adult", adult, DPLogisticRegression, {}),
    "fmnist-logreg": ("DPLogisticRegression on Fashion-MNIST", fashion_mnist,
                      DPLogisticRegression, {}),
    "adult-mlp": ("DPMLPClassifier(hidden_layer_sizes=(100,)) on Adult", adult,
                  DPMLPClassifier, {}),
    "fmnist-mlp": ("DPMLPClassifier(hidden_layer_sizes=(100,)) on Fashion-MNIST", fashion_mnist,
                   DPMLPClassifier, {}),
}


def configurations(decays):
    """(label, parameters) of every row; the first is the baseline."""
    rows = [
        ("noisy_sgd, constant steps, constant noise (default)", {}),
        ("noisy_sgd, invscaling steps", dict(learning_rate="invscaling")),
        ("adp_sgd, invscaling steps", dict(optimizer="adp_sgd", learning_rate="invscaling")),
        ("noisy_sgd, adagrad_norm steps", dict(learning_rate="adagrad_norm")),
        ("adp_sgd, adagrad_norm steps", dict(optimizer="adp_sgd", learning_rate="adagrad_norm")),
    ]
    for schedule in ("exp_decay", "step_decay", "time_decay", "poly_decay"):
        for decay in decays:
            rows.append((f"noisy_sgd, {schedule}, noise_decay={decay:g}",
                         dict(noise_schedule=schedule, noise_decay=decay)))
    return rows


def run_task(key, args, caught):
    title, load, Estimator, extra = TASKS[key]
    X_train, X_test, y_train, y_test = load()
    print(f"\n## {title}\n", flush=True)
    rows = configurations(args.decays)
    scores = {(label, eps): [] for label, _ in rows for eps in args.epsilons}
    start = time.perf_counter()
    for eps in args.epsilons:
        for label, params in rows:
            for seed in range(args.seeds):
                est = Estimator(privacy=(eps, DELTA), random_state=seed, **extra, **params)
                with collect_warnings(caught, key):
                    est.fit(X_train, y_train)
                assert est.privacy_spent_[0] <= eps
                scores[label, eps].append(est.score(X_test, y_test))
        print(f"(eps={eps:g} done after {time.perf_counter() - start:.0f} s, load "
              f"{load_average()})", flush=True)
    header = "| configuration | " + " | ".join(f"eps={e:g}" for e in args.epsilons) + " |"
    print("\nTest accuracy, mean ± std over seeds; in brackets the mean paired difference to "
          "the first row (same seeds).\n")
    print(header)
    print("|" + "---|" * (len(args.epsilons) + 1))
    base_label = rows[0][0]
    for label, _ in rows:
        cells = []
        for eps in args.epsilons:
            base = None if label == base_label else scores[base_label, eps]
            cells.append(paired_cell(scores[label, eps], base))
        print(f"| {label} | " + " | ".join(cells) + " |")
    print(flush=True)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--task", nargs="+", default=["adult-logreg", "fmnist-logreg"],
                        choices=list(TASKS))
    parser.add_argument("--epsilons", type=float, nargs="+", default=[0.5, 1.0, 2.0, 4.0])
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--decays", type=float, nargs="+", default=[0.25, 0.5])
    add_threads_argument(parser)
    args = parser.parse_args(argv)
    apply_threads(args)
    print_header("Step-size and noise schedules: adp_sgd vs noisy_sgd, schedules vs constant", [
        f"Tasks {args.task}; epsilons {args.epsilons}, delta={DELTA:g}; {args.seeds} seeds; "
        f"noise_decay in {args.decays}. Each row changes only the listed parameters of the "
        "estimator's defaults.",
    ])
    caught: dict[str, int] = {}
    for key in args.task:
        run_task(key, args, caught)
    print_warnings(caught)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
