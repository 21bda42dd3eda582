"""AdaSSP's adaptive ridge as a uniform shift (the paper) or as an eigenvalue floor, against
DPRidge's default (noisy SGD), on the regression sets of the defaults study.

``DPRidge(optimizer='ssp', max_row_norm='auto')`` finds the same public scale as the default
and releases the same noisy statistics whatever ``eigen_floor`` is: only the solve (post-
processing) differs. Prints test R^2 (mean over seeds, and over ``--splits`` train/test splits
of diabetes) and the median fit time of each. Usage::

    python benchmarks/bench_ssp_floor.py --threads 1 --seeds 3 --splits 5 \\
        --datasets diamonds,rand_hie,ames,diabetes --floors none,0.5,0.25,0.1 --cache C.json
    python benchmarks/bench_ssp_floor.py --analyse-only --cache C.json,D.json

The analysis chooses the floor by leaving one data set out: for each set, the floor with the
smallest mean gap to each cell's best floor on the *other* sets (gaps divided by the defaults
study's tolerance, 0.01 R^2 at epsilon >= 1 and 0.03 below, capped at 10; refused cells
skipped), reported on the held-out set.
"""

from __future__ import annotations

from _threads import pin_threads  # first: it sets the thread counts before numpy loads

_THREADS = pin_threads()

import argparse  # noqa: E402
import json  # noqa: E402
import math  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
from _bench_common import add_threads_argument, apply_threads, print_header  # noqa: E402
from bench_defaults import load_splits, scaled_gap  # noqa: E402
from sklearn.linear_model import Ridge  # noqa: E402

from skdp.linear_model import DPRidge  # noqa: E402


def score(datas, eps: float, seeds, **params) -> tuple[float, float]:
    """Mean test R^2 (NaN if the fit is refused: no public scale at this n and epsilon) and
    the median seconds of a fit."""
    scores, seconds = [], []
    for data in datas:
        for seed in seeds:
            start = time.perf_counter()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                try:
                    model = DPRidge(privacy=(eps, 1e-5), random_state=seed, **params).fit(
                        data.X_train, data.y_train)
                except ValueError:
                    return float("nan"), float("nan")
            seconds.append(time.perf_counter() - start)
            scores.append(model.score(data.X_test, data.y_test))
    return float(np.mean(scores)), float(np.median(seconds))


def scaled_gaps(cells: dict, floor: str) -> list[float]:
    """Gap of ``floor`` to the best floor of each cell, in tolerances, capped at 10."""
    gaps = []
    for eps, scores in cells.items():
        values = {k: v for k, v in scores.items() if k != "sgd" and not math.isnan(v)}
        if floor in values:
            gaps.append(scaled_gap(max(values.values()) - values[floor], "regression",
                                   float(eps)))
    return gaps


def leave_one_out(results: dict) -> None:
    floors = [k for k in next(iter(next(iter(results.values())).values())) if k != "sgd"]

    def choose(names):
        return min(floors, key=lambda f: np.mean(
            [g for n in names for g in scaled_gaps(results[n], f)] or [0.0]))

    print(f"\nchosen on all sets: floor {choose(list(results))}")
    print("| held out | chosen on the others | held-out gaps to its best floor (R^2) |")
    print("|---|---|---|")
    for name, cells in results.items():
        floor = choose([n for n in results if n != name])
        gaps = []
        for eps, scores in cells.items():
            values = {k: v for k, v in scores.items() if k != "sgd" and not math.isnan(v)}
            if values:
                gaps.append(f"eps {eps}: {max(values.values()) - values[floor]:+.4f}")
        print(f"| {name} | {floor} | {', '.join(gaps)} |")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", default="diamonds,rand_hie,ames,diabetes")
    parser.add_argument("--epsilons", default="0.1,0.5,1,4")
    parser.add_argument("--floors", default="none,0.5,0.25,0.1")
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--splits", type=int, default=5)
    parser.add_argument("--cache", default="/tmp/bench_ssp_floor.json",
                        help="where the scores go (comma-separated caches are merged for "
                        "--analyse-only)")
    parser.add_argument("--analyse-only", action="store_true")
    add_threads_argument(parser)
    args = parser.parse_args()
    apply_threads(args)
    if args.analyse_only:
        results = {}
        for path in args.cache.split(","):
            results.update(json.loads(Path(path).read_text()))
        leave_one_out(results)
        return 0
    results = {}
    floors = [None if f == "none" else float(f) for f in args.floors.split(",")]
    print_header("AdaSSP: uniform ridge vs eigenvalue floor, vs the SGD default", [
        f"seeds {args.seeds}; splits of diabetes {args.splits}; delta 1e-5; ssp with "
        "max_row_norm='auto' (the default's public scale)"])
    names = " | ".join("ssp, uniform ridge" if f is None else f"ssp, floor {f:g}"
                       for f in floors)
    print(f"| data set | eps | noisy_sgd default | {names} | scikit-learn Ridge | "
          "fit s (sgd / ssp / Ridge) |")
    print("|---|---|---|" + "---|" * len(floors) + "---|---|")
    seeds = range(args.seeds)
    for name in args.datasets.split(","):
        datas = load_splits(name, args.splits)
        ridge_scores, ridge_seconds = [], []
        for data in datas:
            start = time.perf_counter()
            ridge = Ridge().fit(data.X_train, data.y_train)
            ridge_seconds.append(time.perf_counter() - start)
            ridge_scores.append(ridge.score(data.X_test, data.y_test))
        for eps in (float(e) for e in args.epsilons.split(",")):
            sgd, sgd_seconds = score(datas, eps, seeds)
            cells, ssp_seconds = [], []
            stored = results.setdefault(name, {}).setdefault(f"{eps:g}", {"sgd": sgd})
            for floor in floors:
                value, seconds = score(datas, eps, seeds, optimizer="ssp",
                                       max_row_norm="auto",
                                       optimizer_params={"eigen_floor": floor})
                cells.append(f"{value:.4f}")
                ssp_seconds.append(seconds)
                stored["none" if floor is None else f"{floor:g}"] = value
            print(f"| {name} | {eps:g} | {sgd:.4f} | {' | '.join(cells)} | "
                  f"{np.mean(ridge_scores):.4f} | {sgd_seconds:.3f} / "
                  f"{np.nanmedian(ssp_seconds):.3f} / {np.median(ridge_seconds):.3f} |",
                  flush=True)
            Path(args.cache).write_text(json.dumps(results))
    leave_one_out(results)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
