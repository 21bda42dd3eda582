"""How far to widen a public scale that the search found only at inner quantiles
(``skdp._public_scale.WIDEN_TO``), chosen by leaving one regression set out.

For every regression set and epsilon where the scale search of ``max_row_norm='auto'`` cannot
locate the 0.02/0.98-quantiles (it moves them inward, down to the quartiles), DPRidge with its
defaults is fitted with the located range kept as is (``off``) and widened to a normal shape's
``(w, 1 - w)``-quantiles for each ``w`` of ``--widths``. The choice: for each set, the ``w``
with the smallest mean gap to each cell's best on the *other* sets (gaps divided by the
defaults study's tolerance, 0.01 R^2 at epsilon >= 1 and 0.03 below, capped at 10), scored on
the held-out set. ``--held-out`` sets are scored with the choice made on all the others and
never take part in it. Usage::

    python benchmarks/tune_widening.py --threads 1 --seeds 3 --splits 5 \\
        --datasets diamonds,rand_hie,ames,diabetes --held-out cps1988
"""

from __future__ import annotations

from _threads import pin_threads  # first: it sets the thread counts before numpy loads

_THREADS = pin_threads()

import argparse  # noqa: E402
import warnings  # noqa: E402

import numpy as np  # noqa: E402
from _bench_common import add_threads_argument, apply_threads, print_header  # noqa: E402
from bench_defaults import load_splits, scaled_gap  # noqa: E402

import skdp._scale.public_scale as public_scale  # noqa: E402
from skdp.linear_model import DPRidge  # noqa: E402
from skdp.preprocessing._bounds import plan_quantiles  # noqa: E402

EPSILONS = (0.1, 0.5, 1.0, 4.0)


def located_quantile(n: int, eps: float) -> float | None:
    """The lower quantile the search of a one-target regression locates (None: no search)."""
    noise = public_scale.scale_noise_multiplier(eps, 1e-5, n, 1)
    if noise is None:
        return None
    columns, quantiles = public_scale.search_columns(1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return min(plan_quantiles(quantiles, n, columns, noise, "probe").quantiles)


def score(datas, eps: float, seeds, widen_to: float) -> float:
    saved = public_scale.WIDEN_TO
    public_scale.WIDEN_TO = widen_to
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return float(np.mean([
                DPRidge(privacy=(eps, 1e-5), random_state=seed).fit(d.X_train, d.y_train)
                .score(d.X_test, d.y_test) for d in datas for seed in seeds]))
    finally:
        public_scale.WIDEN_TO = saved


def mean_gap(results: dict, names, key: str) -> float:
    gaps = [scaled_gap(max(cell.values()) - cell[key], "regression", eps)
            for name in names for eps, cell in results[name].items()]
    return float(np.mean(gaps)) if gaps else 0.0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", default="diamonds,rand_hie,ames,diabetes")
    parser.add_argument("--held-out", default="")
    parser.add_argument("--widths", default="0.02,0.05,0.1")
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--splits", type=int, default=5)
    add_threads_argument(parser)
    args = parser.parse_args()
    apply_threads(args)
    widths = [float(w) for w in args.widths.split(",")]
    keys = ["off", *(f"{w:g}" for w in widths)]
    print_header("Widening a scale found at inner quantiles", [
        f"DPRidge defaults; widths {widths}; seeds {args.seeds}; splits of the small sets "
        f"{args.splits}; delta 1e-5"])
    print("| data set | eps | located quantile | " + " | ".join(keys) + " |")
    print("|---|---|---|" + "---|" * len(keys))
    chosen_on = args.datasets.split(",")
    held_out = [name for name in args.held_out.split(",") if name]
    results: dict[str, dict[float, dict[str, float]]] = {}
    for name in chosen_on + held_out:
        datas = load_splits(name, args.splits)
        results[name] = {}
        for eps in EPSILONS:
            located = located_quantile(datas[0].X_train.shape[0], eps)
            if located is None or located <= public_scale.TARGET_QUANTILES[0] + 1e-12:
                continue  # no search, or the planned quantiles are located: nothing to widen
            cell = {"off": score(datas, eps, range(args.seeds), 1.0)}
            for width in widths:
                cell[f"{width:g}"] = score(datas, eps, range(args.seeds), width)
            results[name][eps] = cell
            print(f"| {name} | {eps:g} | {located:.3f} | "
                  + " | ".join(f"{cell[k]:.4f}" for k in keys) + " |", flush=True)
    print(f"\nchosen on {', '.join(chosen_on)}: "
          f"{min(keys, key=lambda k: mean_gap(results, chosen_on, k))}")
    print("| held out | chosen on the others | gaps to its best (R^2) |\n|---|---|---|")
    for name in chosen_on + held_out:
        others = [n for n in chosen_on if n != name]
        key = min(keys, key=lambda k: mean_gap(results, others, k))
        gaps = ", ".join(f"eps {eps:g}: {max(cell.values()) - cell[key]:+.4f}"
                         for eps, cell in results[name].items())
        print(f"| {name} | {key} | {gaps or 'nothing widened'} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
