"""Validation score of DPMLPClassifier / DPMLPRegressor over a small grid of step sizes and
epochs: how the MLPs' private step (2.0 / 0.5) and 20 epochs were chosen.

Each configuration is trained on 80% of the training split and scored on the other 20% (the
test sets are never used). Usage::

    python benchmarks/tune_mlp_defaults.py [--seeds 2] [--task adult fmnist diamonds]
"""

from __future__ import annotations

import argparse
import itertools
import time

import numpy as np
from harness import cli, data
from harness.results import Run, Study

STUDY = Study(
    name="mlp_tuning",
    title="How the MLPs' private step and epochs were chosen",
    script="benchmarks/tune_mlp_defaults.py",
    measures="Validation score (80/20 split of the training data) of DPMLPClassifier on Adult "
    "and Fashion-MNIST and DPMLPRegressor on diamonds over step sizes {0.1, 0.2, 0.5, 1, 2} "
    "x epochs {10, 20, 40} at epsilon 0.5 and 2.",
    conclusion="Step 2.0 with 20 epochs for the classifier and 0.5 with 20 epochs for the "
    "regressor are best or within 0.001 of the best at a fraction of the cost.",
    chooses=("`mlp.learning_rate_init`: the private steps `MLP_CLASSIFIER.private = 2.0`, "
             "`MLP_REGRESSOR.private = 0.5` (`skdp/_defaults/mlp.py`)",
             "`mlp.max_iter`: `PRIVATE_EPOCHS = 20` (`skdp/_defaults/mlp.py`)"),
)
GRID = {"learning_rate_init": [0.1, 0.2, 0.5, 1.0, 2.0], "max_iter": [10, 20, 40]}
TASKS = {"adult": ("DPMLPClassifier on Adult", "DPMLPClassifier", "adult"),
         "fmnist": ("DPMLPClassifier on Fashion-MNIST", "DPMLPClassifier", "fashion_mnist"),
         "diamonds": ("DPMLPRegressor on diamonds", "DPMLPRegressor", "diamonds")}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=2)
    parser.add_argument("--task", nargs="+", default=list(TASKS), choices=list(TASKS))
    parser.add_argument("--epsilons", type=float, nargs="+", default=[0.5, 2.0])
    cli.add_common_arguments(parser)
    args = parser.parse_args(argv)
    cli.setup(args)
    import skdp.neural_network

    run = Run(STUDY, args, results=args.results)
    run.header([f"seeds {args.seeds}; epsilons {args.epsilons}; validation split 80/20 of "
                "the training data"])
    for key in args.task:
        title, estimator, name = TASKS[key]
        cls = getattr(skdp.neural_network, estimator)
        for _, loaded in data.load_available([name], skip=run.skip):
            X_tr, X_val, y_tr, y_val = data.validation_split(loaded)
            rows = []
            for values in itertools.product(*GRID.values()):
                params = dict(zip(GRID, values, strict=True))
                cells = []
                for eps in args.epsilons:
                    start = time.perf_counter()
                    scores = [cls(privacy=(eps, 1e-5), random_state=seed, **params)
                              .fit(X_tr, y_tr).score(X_val, y_val) for seed in range(args.seeds)]
                    cells.append(f"{np.mean(scores):.4f} ± {np.std(scores):.4f} "
                                 f"({(time.perf_counter() - start) / args.seeds:.1f} s)")
                rows.append([*map(str, values), *cells])
            run.table(f"{title}: validation score, mean ± std over {args.seeds} seeds "
                      "(seconds per fit)",
                      [*GRID, *(f"eps={e:g}" for e in args.epsilons)], rows, key=key)
    run.save()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
