"""Every optimizer with its defaults, next to noisy_sgd's, on data the defaults were not tuned on.

The defaults of the linear models are scale-free (``benchmarks/bench_defaults.py``); this script
checks that a user who picks another optimizer and nothing else gets a useful model: for each
data set of ``_defaults_data.py`` given and each epsilon, the test score of DPLogisticRegression
or DPRidge with ``optimizer`` in {noisy_sgd, adp_sgd, adaclip, diff2} and every other parameter
at its default (``adp_sgd`` therefore runs decaying steps with noise shaped to them, ``diff2``
1000 full-batch rounds), the mean over ``--seeds`` seeds, and the difference to noisy_sgd.

Usage: python benchmarks/bench_optimizer_defaults.py [--seeds 2]
       [--datasets adult,adult_rownorm,nass_cds,fertility,diamonds,rand_hie] [--epsilons 0.5,1,4]
       [--model linear|mlp] [--optimizers noisy_sgd,adp_sgd,adaclip,diff2] [--threads 1]
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _defaults_data  # noqa: E402
from _bench_common import add_threads_argument, apply_threads, print_header  # noqa: E402

from skdp.linear_model import DPLogisticRegression, DPRidge  # noqa: E402
from skdp.neural_network import DPMLPClassifier, DPMLPRegressor  # noqa: E402

OPTIMIZERS = ("noisy_sgd", "adp_sgd", "adaclip", "diff2")


ESTIMATORS = {
    "linear": {"classification": DPLogisticRegression, "regression": DPRidge},
    "mlp": {"classification": DPMLPClassifier, "regression": DPMLPRegressor},
}


def score(data, optimizer: str, eps: float, seeds, model_kind: str = "linear"
          ) -> tuple[float, float]:
    cls = ESTIMATORS[model_kind][data.task]
    scores, started = [], time.perf_counter()
    for seed in seeds:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model = cls(privacy=(eps, 1e-5), optimizer=optimizer, random_state=seed)
            model.fit(data.X_train, data.y_train)
        scores.append(model.score(data.X_test, data.y_test))
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
    add_threads_argument(parser)
    args = parser.parse_args(argv)
    apply_threads(args)
    optimizers = tuple(args.optimizers.split(","))
    if optimizers[0] != "noisy_sgd":
        parser.error("--optimizers must start with noisy_sgd, the reference")
    print_header("Every optimizer with its defaults",
                 [f"model {args.model}; seeds {args.seeds}; delta 1e-5"])
    print("| data set | eps | " + " | ".join(optimizers) + " | fit time (s) |")
    print("|---|---|" + "---|" * len(optimizers) + "---|")
    for name in args.datasets.split(","):
        data = _defaults_data.load(name)
        unit = 100 if data.task == "classification" else 1
        for eps in (float(e) for e in args.epsilons.split(",")):
            results = {opt: score(data, opt, eps, range(args.seeds), args.model)
                       for opt in optimizers}
            base = results["noisy_sgd"][0]
            cells = [f"{base * unit:.2f}" if unit == 100 else f"{base:.4f}"]
            for opt in optimizers[1:]:
                value = results[opt][0]
                diff = f"{(value - base) * 100:+.2f}" if unit == 100 else f"{value - base:+.4f}"
                cells.append((f"{value * unit:.2f}" if unit == 100 else f"{value:.4f}")
                             + f" ({diff})")
            times = " / ".join(f"{results[o][1]:.1f}" for o in optimizers)
            print(f"| {name} | {eps:g} | " + " | ".join(cells) + f" | {times} |", flush=True)
    print("\nAccuracy in %, R^2 as is; in brackets the difference to noisy_sgd.")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
