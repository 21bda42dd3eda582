"""Choose ``USER_SCALE_DAMPING`` (DPLogisticRegression's default step on the user's scale,
``2.0 / (1 + a z / b)``) by leaving one data set out.

For every data set, epsilon and damping ``a`` of the grid, the default estimator is fitted with
its step fixed at ``2.0 / (1 + a mu)``, ``mu = z / b`` read from the default fit (the noise
multiplier and batch size do not depend on the step), over several seeds. Then, for each data
set in turn, ``a`` is chosen on the other sets (most cells within target of that cell's best
``a``: 0.5 points at epsilon >= 1, 1.5 below; ties to the smallest mean gap) and reported on the
held-out set. Scores are test accuracies on the bundled public data sets (choosing defaults
spends no private data).

Usage::

    python benchmarks/tune_user_scale_damping.py --datasets wine:10,breast_cancer:10 --cache a.json
    python benchmarks/tune_user_scale_damping.py --analyse-only --cache a.json,b.json

``name:seeds`` sets the seeds per data set (small sets need more: one test row of wine is 2.2
points).
"""

from __future__ import annotations

import argparse
import json
import sys
import warnings
from pathlib import Path

from _threads import pin_threads  # first: it sets the thread counts before numpy loads

pin_threads(default=1)

import numpy as np  # noqa: E402
import torch  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _defaults_data  # noqa: E402

from skdp.linear_model import DPLogisticRegression  # noqa: E402

DAMPINGS = (0.0, 5.0, 10.0, 20.0, 30.0, 40.0, 60.0, 80.0)
EPSILONS = (0.1, 0.5, 1.0, 4.0)
DELTA = 1e-5
USER_SCALE_STEP = 2.0


def tolerance(eps: float) -> float:
    return 0.005 if eps >= 1 else 0.015


def run(specs: list[str], dampings) -> dict:
    out = {}
    for spec in specs:
        name, seeds = spec.split(":") if ":" in spec else (spec, "3")
        data = _defaults_data.load(name)
        for eps in EPSILONS:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                probe = DPLogisticRegression(privacy=(eps, DELTA), random_state=0)
                probe.fit(data.X_train, data.y_train)
            mu = probe.noise_multiplier_ / probe.batch_size_
            scores = {}
            for a in dampings:
                fits = []
                for seed in range(int(seeds)):
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        model = DPLogisticRegression(
                            privacy=(eps, DELTA), random_state=seed,
                            eta0=USER_SCALE_STEP / (1.0 + a * mu),
                        ).fit(data.X_train, data.y_train)
                    fits.append(model.score(data.X_test, data.y_test))
                scores[str(a)] = float(np.mean(fits))
            out[f"{name}|{eps}"] = {"mu": mu, "seeds": int(seeds), "scores": scores}
            print(f"{name:14s} eps {eps:4} mu {mu:.4f} " + " ".join(
                f"{100 * scores[str(a)]:6.2f}" for a in dampings), flush=True)
    return out


def analyse(results: dict) -> None:
    names = sorted({key.split("|")[0] for key in results})
    # Only the dampings measured on every cell.
    dampings = [a for a in DAMPINGS if all(str(a) in cell["scores"] for cell in results.values())]

    def gaps(name: str, a: float) -> list[tuple[float, float]]:
        rows = []
        for key, cell in results.items():
            if key.split("|")[0] != name:
                continue
            best = max(cell["scores"][str(b)] for b in dampings)
            rows.append((best - cell["scores"][str(a)], float(key.split("|")[1])))
        return rows

    def merit(a: float, sets) -> tuple[int, float]:
        cells = [gap for name in sets for gap in gaps(name, a)]
        within = sum(gap <= tolerance(eps) + 1e-12 for gap, eps in cells)
        return within, -float(np.mean([min(gap, 0.05) for gap, _ in cells]))

    print("\n| held out | chosen a | eps | mu | default (chosen a) | best a | best | gap | "
          "within target |")
    print("|---|---|---|---|---|---|---|---|---|")
    missed = 0
    for held in names:
        others = [n for n in names if n != held]
        chosen = max(dampings, key=lambda a: merit(a, others))
        for key, cell in results.items():
            if key.split("|")[0] != held:
                continue
            eps = float(key.split("|")[1])
            scores = {str(a): cell["scores"][str(a)] for a in dampings}
            best_a = max(scores, key=scores.get)
            gap = scores[best_a] - scores[str(chosen)]
            ok = gap <= tolerance(eps) + 1e-12
            missed += not ok
            print(f"| {held} | {chosen:g} | {eps:g} | {cell['mu']:.4f} | "
                  f"{100 * scores[str(chosen)]:.2f} | {float(best_a):g} | "
                  f"{100 * scores[best_a]:.2f} | {100 * gap:+.2f} | {'yes' if ok else 'NO'} |")
    everyone = max(dampings, key=lambda a: merit(a, names))
    print("\nCells within target, by damping on all sets: " + ", ".join(
        f"a = {a:g}: {merit(a, names)[0]}" for a in dampings))
    print(f"{missed} held-out cells miss the target; chosen on all sets: a = {everyone:g} "
          f"({merit(everyone, names)[0]} of {len(results)} cells within target)")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--datasets", default="")
    parser.add_argument("--cache", required=True, help="JSON file(s), comma-separated to merge")
    parser.add_argument("--dampings", default=",".join(str(a) for a in DAMPINGS),
                        help="the values of a to fit (comma-separated)")
    parser.add_argument("--analyse-only", action="store_true")
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    if args.analyse_only:
        results = {}
        for path in args.cache.split(","):  # merged cell by cell: runs may split the dampings
            for key, cell in json.loads(Path(path).read_text()).items():
                if key in results:
                    results[key]["scores"].update(cell["scores"])
                else:
                    results[key] = cell
    else:
        results = run(args.datasets.split(","), [float(a) for a in args.dampings.split(",")])
        Path(args.cache).write_text(json.dumps(results, indent=1))
    analyse(results)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
