"""Choose DPRidge's SGD defaults on the public scale (batch, epochs, step, clipping bound) by
leaving one data set out, from the wide grid of ``probe_ceiling.py``.

On the public scale of ``max_row_norm='auto'`` (rows of norm at most 1, targets in [-1, 1]) the
same constants mean the same thing on every data set, so a rule can be one grid point, or one
grid point per noise level. For each regression set in turn, the point is chosen on the *other*
sets (smallest mean gap to each cell's best, gaps divided by the issue's tolerance, 0.01 R^2 at
epsilon >= 1 and 0.03 below, and capped at 10), then scored on the held-out set against its own
best point (the ceiling, chosen on the test score: an upper reference) and against the shipped
default.

Usage::

    python benchmarks/probe_ceiling.py --datasets diamonds,rand_hie,ames \\
        --epsilons 0.1,0.5,1,4 --splits 1 --cache C.json
    python benchmarks/tune_ridge_rule.py --cache C.json [--max-epochs 200]
"""

from __future__ import annotations

import argparse
import json

import numpy as np
from bench_defaults import scaled_gap, tolerance


def cells(results: dict, names) -> list[tuple[str, str]]:
    return [(name, eps) for name in names for eps in results[name]
            if eps not in ("task", "n", "sklearn", "splits")]


def mean_gap(results: dict, names, point: str) -> float:
    gaps = []
    for name, eps in cells(results, names):
        grid = results[name][eps]["grid"]
        gaps.append(scaled_gap(max(grid.values()) - grid[point], "regression", float(eps)))
    return float(np.mean(gaps))


def choose(results: dict, names, points) -> str:
    return min(points, key=lambda point: mean_gap(results, names, point))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cache", required=True, help="comma-separated caches, merged")
    parser.add_argument("--exclude", default="",
                        help="cells left out, e.g. ames:0.1 (no public scale there: the fit "
                        "trains on the data as given, where the constants mean something else)")
    parser.add_argument("--max-epochs", type=int, default=10**9,
                        help="leave out grid points with more epochs (fit time)")
    args = parser.parse_args()
    results = {}
    for path in args.cache.split(","):
        for name, res in json.loads(open(path).read()).items():
            results.setdefault(name, {}).update(res)
    for cell in filter(None, args.exclude.split(",")):
        name, eps = cell.split(":")
        results[name].pop(str(float(eps)), None)
    names = [name for name, res in results.items() if res.get("task") == "regression"]
    first = cells(results, names)[0]
    points = [p for p in results[first[0]][first[1]]["grid"]
              if int(p.split("|")[1]) <= args.max_epochs]
    everyone = choose(results, names, points)
    print(f"chosen on all sets (batch fraction | epochs | eta0 | clip): {everyone}, mean scaled "
          f"gap {mean_gap(results, names, everyone):.2f}\n")
    print("| held out | eps | chosen on the others | held-out score | default | ceiling "
          "(its point) | gap | default's gap | within tolerance (rule / default) |")
    print("|---|---|---|---|---|---|---|---|---|")
    misses = default_misses = 0
    for name in names:
        point = choose(results, [n for n in names if n != name], points)
        for _, eps in cells(results, [name]):
            cell = results[name][eps]
            best_point = max(cell["grid"], key=cell["grid"].get)
            best = cell["grid"][best_point]
            held, default = cell["grid"][point], cell["default"]
            ok = best - held <= tolerance("regression", float(eps)) + 1e-12
            default_ok = best - default <= tolerance("regression", float(eps)) + 1e-12
            misses += not ok
            default_misses += not default_ok
            print(f"| {name} | {eps} | {point} | {held:.4f} | {default:.4f} | {best:.4f} "
                  f"({best_point}) | {best - held:+.4f} | {best - default:+.4f} | "
                  f"{'yes' if ok else 'NO'} / {'yes' if default_ok else 'NO'} |")
    print(f"\nheld-out rule misses {misses} cells, the shipped default {default_misses}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
