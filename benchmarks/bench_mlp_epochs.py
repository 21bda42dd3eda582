"""The MLPs without privacy: test score after 20, 50 and 100 epochs against scikit-learn's
MLPs, which is what ``max_iter='auto'`` (100 epochs at ``privacy=(inf, 0)``) was chosen on.

A non-private fit has no noise, so only iterations limit it; the private default's 20 epochs
left the regressor short of scikit-learn. Each cell is the mean over 2 seeds and, for the small
scikit-learn sets, ``--splits`` train/test splits. Usage::

    python benchmarks/bench_mlp_epochs.py --threads 1 \\
        --datasets diamonds,rand_hie,ames,diabetes,cps1988,digits,breast_cancer,wine,nass_cds
"""

from __future__ import annotations

from _threads import pin_threads  # first: it sets the thread counts before numpy loads

_THREADS = pin_threads()

import argparse  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402

import numpy as np  # noqa: E402
from _bench_common import add_threads_argument, apply_threads, print_header  # noqa: E402
from bench_defaults import load_splits  # noqa: E402
from sklearn.neural_network import MLPClassifier, MLPRegressor  # noqa: E402

from skdp.neural_network import DPMLPClassifier, DPMLPRegressor  # noqa: E402

EPOCHS = (20, 50, 100)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", default="diamonds,rand_hie,ames,diabetes,cps1988,digits,"
                        "breast_cancer,wine,nass_cds")
    parser.add_argument("--splits", type=int, default=3)
    add_threads_argument(parser)
    args = parser.parse_args()
    apply_threads(args)
    warnings.filterwarnings("ignore")
    print_header("The MLPs without privacy: epochs", [
        f"privacy=(inf, 0), 100 hidden units, epochs {EPOCHS}, 2 seeds; scikit-learn's MLPs "
        "with max_iter=200, random_state=0"])
    print("| data set | scikit-learn | " + " | ".join(f"{e} epochs (s)" for e in EPOCHS) + " |")
    print("|---|---|" + "---|" * len(EPOCHS))
    for name in args.datasets.split(","):
        datas = load_splits(name, args.splits)
        regression = datas[0].task == "regression"
        reference = (MLPRegressor if regression else MLPClassifier)(max_iter=200, random_state=0)
        ref = np.mean([reference.fit(d.X_train, d.y_train).score(d.X_test, d.y_test)
                       for d in datas])
        cells = []
        for epochs in EPOCHS:
            cls = DPMLPRegressor if regression else DPMLPClassifier
            start = time.perf_counter()
            score = np.mean([
                cls(privacy=(float("inf"), 0.0), random_state=seed, max_iter=epochs)
                .fit(d.X_train, d.y_train).score(d.X_test, d.y_test)
                for d in datas for seed in range(2)])
            cells.append(f"{score:.4f} ({(time.perf_counter() - start) / (2 * len(datas)):.1f})")
        print(f"| {name} | {ref:.4f} | " + " | ".join(cells) + " |", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
