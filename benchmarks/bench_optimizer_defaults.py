"""Every optimizer with its defaults, next to noisy_sgd's, on data the defaults were not tuned on.

The defaults of the linear models are scale-free (``benchmarks/bench_defaults.py``); this script
checks that a user who picks another optimizer and nothing else gets a useful model: for each
data set given (the registry, ``harness/data.py``) and each epsilon, the test score of
DPLogisticRegression
or DPRidge with ``optimizer`` in {noisy_sgd, adp_sgd, adaclip, diff2} and every other parameter
at its default (``adp_sgd`` therefore runs decaying steps with noise shaped to them, ``diff2``
1000 full-batch rounds), the mean over ``--seeds`` seeds, and the difference to noisy_sgd.

Usage: python benchmarks/bench_optimizer_defaults.py [--seeds 2]
       [--datasets adult,adult_rownorm,nass_cds,fertility,diamonds,rand_hie] [--epsilons 0.5,1,4]
       [--model linear|mlp] [--optimizers noisy_sgd,adp_sgd,adaclip,diff2] [--threads 1]
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np
from harness import cli, data
from harness.results import Run, Study

from skdp.linear_model import DPLogisticRegression, DPRidge
from skdp.neural_network import DPMLPClassifier, DPMLPRegressor

STUDY = Study(
    name="optimizer_defaults",
    title="Every optimizer with its defaults",
    script="benchmarks/bench_optimizer_defaults.py",
    measures="Test score of the linear models (and, with `--model mlp`, the MLPs) with each "
    "optimizer and every other parameter at its default, next to noisy_sgd's, on the defaults "
    "study's sets at epsilon 0.5, 1 and 4; in brackets the difference to noisy_sgd.",
    conclusion="A user who picks another optimizer and nothing else gets a useful model on "
    "large data; adp_sgd's decaying schedule and diff2 trail noisy_sgd on small sets, which "
    "is why noisy_sgd is the default.",
    chooses=("`sgd.learning_rate` for the MLPs: 'auto' (invscaling with adp_sgd, constant "
             "otherwise)",),
)

OPTIMIZERS = ("noisy_sgd", "adp_sgd", "adaclip", "diff2")


ESTIMATORS = {
    "linear": {"classification": DPLogisticRegression, "regression": DPRidge},
    "mlp": {"classification": DPMLPClassifier, "regression": DPMLPRegressor},
}


def score(loaded, optimizer: str, eps: float, seeds, model_kind: str = "linear"
          ) -> tuple[float, float]:
    cls = ESTIMATORS[model_kind][loaded.task]
    scores, started = [], time.perf_counter()
    for seed in seeds:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model = cls(privacy=(eps, 1e-5), optimizer=optimizer, random_state=seed)
            model.fit(loaded.X_train, loaded.y_train)
        scores.append(model.score(loaded.X_test, loaded.y_test))
    return float(np.mean(scores)), (time.perf_counter() - started) / len(seeds)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seeds", type=int, default=2)
    parser.add_argument("--datasets",
                        default="adult,adult_rownorm,nass_cds,fertility,diamonds,rand_hie")
    parser.add_argument("--epsilons", default="0.5,1,4")
    parser.add_argument("--model", choices=sorted(ESTIMATORS), default="linear",
                        help="the linear models (DPLogisticRegression / DPRidge) or the MLPs "
                        "(DPMLPClassifier / DPMLPRegressor), every other parameter at its default")
    parser.add_argument("--optimizers", default=",".join(OPTIMIZERS),
                        help="noisy_sgd first (the reference of the differences)")
    cli.add_common_arguments(parser)
    args = parser.parse_args(argv)
    cli.setup(args)
    optimizers = tuple(args.optimizers.split(","))
    if optimizers[0] != "noisy_sgd":
        parser.error("--optimizers must start with noisy_sgd, the reference")
    run = Run(STUDY, args, results=args.results)
    run.header([f"model {args.model}; seeds {args.seeds}; delta 1e-5"])
    rows = []
    for name, loaded in data.load_available(args.datasets.split(","), skip=run.skip):
        unit = 100 if loaded.task == "classification" else 1
        for eps in (float(e) for e in args.epsilons.split(",")):
            results = {opt: score(loaded, opt, eps, range(args.seeds), args.model)
                       for opt in optimizers}
            base = results["noisy_sgd"][0]
            cells = [f"{base * unit:.2f}" if unit == 100 else f"{base:.4f}"]
            for opt in optimizers[1:]:
                value = results[opt][0]
                diff = f"{(value - base) * 100:+.2f}" if unit == 100 else f"{value - base:+.4f}"
                cells.append((f"{value * unit:.2f}" if unit == 100 else f"{value:.4f}")
                             + f" ({diff})")
            times = " / ".join(f"{results[o][1]:.1f}" for o in optimizers)
            rows.append([name, f"{eps:g}", *cells, times])
            print(" | ".join(rows[-1]), flush=True)
    run.table(f"Each optimizer with its defaults ({args.model} models)",
              ["data set", "eps", *optimizers, "fit time (s)"], rows,
              key=f"{args.model}|{','.join(optimizers)}",
              notes="Accuracy in %, R^2 as is; in brackets the difference to noisy_sgd.")
    run.save()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
