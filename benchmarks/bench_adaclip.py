"""adaclip vs noisy_sgd at the same privacy: the comparison of Pichapati et al. (their MNIST
Tables 1 and 2) in skdp's setting, on Fashion-MNIST (logistic regression and the MLP) and Adult.

Every row is the estimator's defaults plus the settings it lists (adaclip gets no tuning of its
own beyond its documented defaults; one row has ``variance_cap=4``, and a noisy_sgd row a larger
clipping bound, which separates adaclip's adaptivity from a mere change of the effective
clipping bound). The same seeds for every row, so row differences are paired.

Usage:
    python benchmarks/bench_adaclip.py [--task fmnist-logreg fmnist-mlp adult-logreg]
        [--epsilons 0.1 0.25 0.5 1 2] [--seeds 3] [--rows ...] [--threads 1]
"""

from __future__ import annotations

import argparse

from harness import cli, data
from harness.grids import paired_rows
from harness.results import Run, Study

STUDY = Study(
    name="adaclip",
    title="adaclip vs noisy_sgd",
    script="benchmarks/bench_adaclip.py",
    measures="Test accuracy of noisy_sgd (the default), adaclip with its defaults, and noisy_sgd "
    "with clipping bound 3, for DPLogisticRegression and DPMLPClassifier on Fashion-MNIST and "
    "DPLogisticRegression on Adult, epsilon 0.1-2, 3 paired seeds, and the seconds per fit.",
    conclusion="Pichapati et al.'s gains are not reproduced: adaclip moves between noisy_sgd "
    "with clipping bound 1 and a larger bound (winning at epsilon >= 1 on Fashion-MNIST, "
    "losing below) and costs 1.7-1.9x the time.",
    chooses=("`optimizer.adaclip`: `gamma=0.25`",),
)
TASKS = {
    "fmnist-logreg": ("DPLogisticRegression, Fashion-MNIST", "fashion_mnist",
                      "DPLogisticRegression"),
    "fmnist-mlp": ("DPMLPClassifier (100 hidden units), Fashion-MNIST", "fashion_mnist",
                   "DPMLPClassifier"),
    "adult-logreg": ("DPLogisticRegression, Adult", "adult", "DPLogisticRegression"),
}
# (key, label, parameters); the first row is the baseline of the paired differences.
ALL_ROWS = [
    ("noisy_sgd", "noisy_sgd (default)", {}),
    ("adaclip", "adaclip (defaults)", dict(optimizer="adaclip")),
    ("adaclip-cap4", "adaclip, variance_cap=4",
     dict(optimizer="adaclip", optimizer_params={"variance_cap": 4.0})),
    # adaclip's clipping in the noise-dominated regime is about 0.56 sqrt(cap / gamma) C
    # (docs/developers/optimizers.md): 1.6 C for cap 4. This row asks whether a larger plain
    # clipping bound explains the gain.
    ("noisy_sgd-C3", "noisy_sgd, max_grad_norm=3", dict(max_grad_norm=3.0)),
]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--task", nargs="+", default=["fmnist-logreg", "fmnist-mlp"],
                        choices=list(TASKS))
    parser.add_argument("--epsilons", type=float, nargs="+", default=[0.1, 0.25, 0.5, 1.0, 2.0])
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--rows", nargs="+", default=[key for key, _, _ in ALL_ROWS],
                        choices=[key for key, _, _ in ALL_ROWS],
                        help="configurations to run (the first is the baseline)")
    cli.add_common_arguments(parser)
    args = parser.parse_args(argv)
    cli.setup(args)
    import skdp.linear_model
    import skdp.neural_network

    configurations = [(label, params) for key, label, params in ALL_ROWS if key in args.rows]
    run = Run(STUDY, args, results=args.results)
    run.header([f"Tasks {args.task}; epsilons {args.epsilons}, delta=1e-5; {args.seeds} seeds. "
                "Each row changes only the listed parameters of the estimator's defaults."])
    for name, loaded in data.load_available(sorted({TASKS[t][1] for t in args.task}),
                                            skip=run.skip):
        for key in [t for t in args.task if TASKS[t][1] == name]:
            title, _, estimator = TASKS[key]
            cls = getattr(skdp.linear_model, estimator, None) or getattr(skdp.neural_network,
                                                                         estimator)
            rows = paired_rows(cls, loaded, configurations, args.epsilons, range(args.seeds),
                               tag=key, seconds=True)
            run.table(title, ["optimizer", *(f"eps={e:g}" for e in args.epsilons), "s/fit"],
                      rows, key=key,
                      notes="Test accuracy, mean ± std over seeds; in brackets the mean paired "
                      "difference to noisy_sgd (same seeds); seconds per fit.")
    run.save()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
