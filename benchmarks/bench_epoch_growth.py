"""DPLogisticRegression's ``max_iter='auto'`` (epochs grown with epsilon where the noise is small)
against the former fixed 20 epochs, on the data sets of the defaults study.

For every data set and epsilon: the epochs the rule chose, test accuracy (%) of the default fit
and of the same fit with ``max_iter=20`` (mean over seeds), and the fit times. Usage::

    python benchmarks/bench_epoch_growth.py --threads 1 --seeds 2 \\
        --datasets adult,adult_rownorm,nass_cds,fertility,fashion_mnist,digits,breast_cancer,wine

``--epsilons 0.1,0.5,1 --fixed 20,35,61,100`` asks whether more epochs would help below epsilon 2
too (docs/benchmarks.md, "More epochs at larger epsilon").
"""

from __future__ import annotations

from _threads import pin_threads  # first: it sets the thread counts before numpy loads

_THREADS = pin_threads()

import argparse  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402

import _defaults_data  # noqa: E402
import numpy as np  # noqa: E402
from _bench_common import add_threads_argument, apply_threads  # noqa: E402

from skdp.linear_model import DPLogisticRegression  # noqa: E402


def fit_and_score(data, **params) -> tuple[float, int, float, float]:
    """Test accuracy (%), epochs run, seconds of one fit and the noise per coordinate of a
    mean gradient relative to the clipping bound, ``mu = z / b`` (public)."""
    start = time.perf_counter()
    model = DPLogisticRegression(**params).fit(data.X_train, data.y_train)
    seconds = time.perf_counter() - start
    mu = model.noise_multiplier_ / model.batch_size_
    return 100 * model.score(data.X_test, data.y_test), model.n_iter_, seconds, mu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_threads_argument(parser)
    parser.add_argument("--seeds", type=int, default=2)
    parser.add_argument("--datasets", default="adult,adult_rownorm,nass_cds,fertility,"
                        "fashion_mnist,digits,breast_cancer,wine")
    parser.add_argument("--epsilons", default="1,2,4,8")
    parser.add_argument("--fixed", default="20",
                        help="fixed epoch counts to compare with the rule (the first is the "
                        "baseline of the 'gain' column), e.g. 20,35,61,100")
    args = parser.parse_args()
    apply_threads(args)
    warnings.filterwarnings("ignore")
    fixed_epochs = [int(e) for e in args.fixed.split(",")]
    fixed_names = " | ".join(f"{e} epochs" for e in fixed_epochs)
    print(f"| data set | eps | mu = z / b | epochs | {fixed_names} | rule | gain | "
          "fit s (first fixed / rule) |")
    print("|---|---|---|---|" + "---|" * len(fixed_epochs) + "---|---|---|")
    for name in args.datasets.split(","):
        data = _defaults_data.load(name)
        for eps in (float(e) for e in args.epsilons.split(",")):
            rule, fixed = [], {e: [] for e in fixed_epochs}
            for seed in range(args.seeds):
                common = dict(privacy=(eps, 1e-5), random_state=seed)
                rule.append(fit_and_score(data, **common))
                for epochs in fixed_epochs:
                    fixed[epochs].append(fit_and_score(data, max_iter=epochs, **common))
            acc_rule = np.mean([r[0] for r in rule])
            acc_fixed = {e: np.mean([f[0] for f in runs]) for e, runs in fixed.items()}
            base = fixed_epochs[0]
            columns = " | ".join(f"{acc_fixed[e]:.2f}" for e in fixed_epochs)
            print(f"| {name} | {eps:g} | {rule[0][3]:.4f} | {rule[0][1]} | {columns} | "
                  f"{acc_rule:.2f} | {acc_rule - acc_fixed[base]:+.2f} | "
                  f"{np.median([f[2] for f in fixed[base]]):.1f} / "
                  f"{np.median([r[2] for r in rule]):.1f} |", flush=True)


if __name__ == "__main__":
    main()
