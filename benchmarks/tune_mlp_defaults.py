"""Validation accuracy of DPMLPClassifier / DPMLPRegressor over a small grid, to choose the
defaults a user gets when they pass only ``privacy``.

Each configuration is trained on 80% of the training split and scored on the other 20% (the
test sets are never used). Choosing defaults this way spends privacy of these public data sets;
on private data, tune with a DP search instead.

Usage: python benchmarks/tune_mlp_defaults.py [--seeds 2] [--task adult fmnist diamonds]
"""

from __future__ import annotations

import argparse
import itertools
import time

import numpy as np
from _datasets import adult, diamonds, fashion_mnist, validation_split

from skdp.neural_network import DPMLPClassifier, DPMLPRegressor

GRID = {
    "learning_rate_init": [0.1, 0.2, 0.5, 1.0, 2.0],
    "max_iter": [10, 20, 40],
}


def sweep(name, Estimator, data, grid, epsilons, seeds):
    X_tr, X_val, y_tr, y_val = data
    keys = list(grid)
    print(f"\n## {name}: validation score, mean (std) over {seeds} seeds\n", flush=True)
    for eps in epsilons:
        rows = []
        for values in itertools.product(*grid.values()):
            params = dict(zip(keys, values, strict=True))
            scores, start = [], time.perf_counter()
            for seed in range(seeds):
                est = Estimator(privacy=(eps, 1e-5), random_state=seed, **params)
                scores.append(est.fit(X_tr, y_tr).score(X_val, y_val))
            rows.append((params, np.mean(scores), np.std(scores),
                         (time.perf_counter() - start) / seeds))
        print(f"### epsilon = {eps}\n")
        print("| " + " | ".join(keys) + " | score | std | fit s |")
        print("|" + "---|" * (len(keys) + 3))
        for params, mean, std, secs in sorted(rows, key=lambda r: -r[1]):
            cells = " | ".join(str(params[k]) for k in keys)
            print(f"| {cells} | {mean:.4f} | {std:.4f} | {secs:.2f} |")
        print(flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=2)
    parser.add_argument("--task", nargs="+", default=["adult", "fmnist", "diamonds"],
                        choices=["adult", "fmnist", "diamonds"])
    parser.add_argument("--epsilons", type=float, nargs="+", default=[0.5, 2.0])
    args = parser.parse_args()
    tasks = {
        "adult": ("DPMLPClassifier on Adult", DPMLPClassifier, adult),
        "fmnist": ("DPMLPClassifier on Fashion-MNIST", DPMLPClassifier, fashion_mnist),
        "diamonds": ("DPMLPRegressor on diamonds", DPMLPRegressor, diamonds),
    }
    for task in args.task:
        name, Estimator, load = tasks[task]
        sweep(name, Estimator, validation_split(load()), GRID, args.epsilons, args.seeds)


if __name__ == "__main__":
    main()
