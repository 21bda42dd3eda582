"""adp_sgd vs noisy_sgd under decaying step sizes, and each noise schedule vs constant noise, at
the same privacy: the comparisons of Wu et al. (ADP-SGD) and Hong, Wang & Zhou (dynamic noise
schedules) in skdp's setting (Poisson-sampled DP-SGD calibrated with PLD).

Every configuration is the estimator's defaults plus the settings in its row, for each epsilon
and seed, scored on the test split; the same seeds for every row, so row differences are paired.

Usage:
    python benchmarks/bench_schedules.py [--task adult-logreg fmnist-logreg adult-mlp fmnist-mlp]
        [--epsilons 0.5 1 2 4] [--seeds 3] [--decays 0.25 0.5] [--threads 1]
"""

from __future__ import annotations

import argparse

from harness import cli, data
from harness.grids import paired_rows
from harness.results import Run, Study

STUDY = Study(
    name="schedules",
    title="Step-size and noise schedules: adp_sgd vs noisy_sgd, schedules vs constant",
    script="benchmarks/bench_schedules.py",
    measures="Test accuracy of DPLogisticRegression and DPMLPClassifier (100 hidden units) on "
    "Adult and Fashion-MNIST with the defaults plus one change per row: decaying steps "
    "(invscaling, adagrad_norm) with noisy_sgd or adp_sgd, and each noise schedule (exp, step, "
    "time, poly decay) against constant noise, at the same epsilon (PLD over the per-step "
    "noise); in brackets the paired difference to the first row.",
    conclusion="No schedule beats constant steps and constant noise: adp_sgd ties noisy_sgd "
    "under the same decaying steps, decaying steps cost 0.4-2.4 points, noise schedules move "
    "-0.4 to +0.07 points.",
    chooses=("`optimizer='noisy_sgd'` and `noise_schedule='constant'` (the estimators' "
             "signatures); `sgd.learning_rate`: constant steps for noisy_sgd",
             "`noise_decay=0.5` when a schedule is chosen"),
)
TASKS = {
    "adult-logreg": ("DPLogisticRegression, Adult", "adult", "DPLogisticRegression"),
    "fmnist-logreg": ("DPLogisticRegression, Fashion-MNIST", "fashion_mnist",
                      "DPLogisticRegression"),
    "adult-mlp": ("DPMLPClassifier (100 hidden units), Adult", "adult", "DPMLPClassifier"),
    "fmnist-mlp": ("DPMLPClassifier (100 hidden units), Fashion-MNIST", "fashion_mnist",
                   "DPMLPClassifier"),
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


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--task", nargs="+", default=["adult-logreg", "fmnist-logreg"],
                        choices=list(TASKS))
    parser.add_argument("--epsilons", type=float, nargs="+", default=[0.5, 1.0, 2.0, 4.0])
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--decays", type=float, nargs="+", default=[0.25, 0.5])
    cli.add_common_arguments(parser)
    args = parser.parse_args(argv)
    cli.setup(args)
    import skdp.linear_model
    import skdp.neural_network

    run = Run(STUDY, args, results=args.results)
    run.header([f"Tasks {args.task}; epsilons {args.epsilons}, delta=1e-5; {args.seeds} "
                f"seeds; noise_decay in {args.decays}. Each row changes only the listed "
                "parameters of the estimator's defaults."])
    for name, loaded in data.load_available(sorted({TASKS[t][1] for t in args.task}),
                                            skip=run.skip):
        for key in [t for t in args.task if TASKS[t][1] == name]:
            title, _, estimator = TASKS[key]
            cls = getattr(skdp.linear_model, estimator, None) or getattr(skdp.neural_network,
                                                                         estimator)
            rows = paired_rows(cls, loaded, configurations(args.decays), args.epsilons,
                               range(args.seeds), tag=key)
            run.table(f"{title} ({args.seeds} seeds)",
                      ["configuration", *(f"eps={e:g}" for e in args.epsilons)], rows, key=key,
                      notes="Test accuracy, mean ± std over seeds; in brackets the mean paired "
                      "difference to the first row (same seeds).")
    run.save()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
