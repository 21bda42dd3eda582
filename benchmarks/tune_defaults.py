"""Measure the accuracy of DPLogisticRegression / DPRidge over a grid of hyperparameters, to
choose the defaults a user gets when they pass only ``privacy``.

The grid is evaluated on the test split of the bundled data sets for several seeds. Choosing
defaults this way spends privacy of the bundled data, which is public; on private data, tune with
a DP search instead.

Usage: python benchmarks/tune_defaults.py [--seeds 3] [--task adult|diamonds|both]
"""

from __future__ import annotations

import argparse
import itertools
import time

import numpy as np
from sklearn.model_selection import train_test_split

from skdp.datasets import (
    adult_preprocessor,
    diamonds_preprocessor,
    load_adult,
    load_diamonds,
    scale_diamonds_target,
)
from skdp.linear_model import DPLogisticRegression, DPRidge


def adult():
    X_train, X_test, y_train, y_test = load_adult(return_X_y=True)
    pre = adult_preprocessor().fit(X_train)
    return pre.transform(X_train), pre.transform(X_test), y_train, y_test


def diamonds():
    X, price = load_diamonds(return_X_y=True)
    X = diamonds_preprocessor().fit_transform(X)
    y = scale_diamonds_target(price)
    return train_test_split(X, y, test_size=0.2, random_state=0)


def sweep(name, make, data, grid, epsilons, seeds):
    X_train, X_test, y_train, y_test = data
    keys = list(grid)
    rows = []
    for values in itertools.product(*grid.values()):
        params = dict(zip(keys, values, strict=True))
        for eps in epsilons:
            scores = []
            start = time.perf_counter()
            for seed in range(seeds):
                est = make(privacy=(eps, 1e-5), random_state=seed, **params)
                scores.append(est.fit(X_train, y_train).score(X_test, y_test))
            rows.append(
                (
                    eps,
                    params,
                    np.mean(scores),
                    np.std(scores),
                    (time.perf_counter() - start) / seeds,
                )
            )
    print(f"\n## {name}: mean (std) test score over {seeds} seeds\n")
    for eps in epsilons:
        best = sorted((r for r in rows if r[0] == eps), key=lambda r: -r[2])
        print(f"### epsilon = {eps}\n")
        print("| " + " | ".join(keys) + " | score | std | fit s |")
        print("|" + "---|" * (len(keys) + 3))
        for _, params, mean, std, secs in best:
            cells = " | ".join(str(params[k]) for k in keys)
            print(f"| {cells} | {mean:.4f} | {std:.4f} | {secs:.2f} |")
        print()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--task", choices=["adult", "diamonds", "both"], default="both")
    args = parser.parse_args()
    epsilons = [0.1, 1.0, 4.0]
    if args.task in ("adult", "both"):
        sweep(
            "DPLogisticRegression on Adult",
            DPLogisticRegression,
            adult(),
            {
                "batch_size": [256, 1024, 4096],
                "max_iter": [5, 20, 60],
                "eta0": [0.5, 2.0, 8.0],
                "max_grad_norm": [0.3, 1.0, 3.0],
            },
            epsilons,
            args.seeds,
        )
    if args.task in ("diamonds", "both"):
        sweep(
            "DPRidge on diamonds (scaled log price)",
            DPRidge,
            diamonds(),
            {
                "batch_size": [256, 1024, 4096],
                "max_iter": [5, 20, 60],
                "eta0": [0.1, 0.5, 2.0],
                "max_grad_norm": [0.3, 1.0, 3.0],
            },
            epsilons,
            args.seeds,
        )


if __name__ == "__main__":
    main()
