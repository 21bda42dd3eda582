"""How close can DP-SGD get at all? The best test score over a wide grid of the hyperparameters
the defaults fix (batch size, epochs, step size, clipping bound), chosen on the test score.

The defaults study (``bench_defaults.py``) compares each default with an oracle over the rule's
own constants only. This script asks the question behind the issue's "at epsilon 4 within 0.5
points (0.01 R^2) of scikit-learn": is there *any* setting of skdp's noisy SGD that gets there
on a data set? Where the best point of this grid, chosen on the test score (a non-private
selection: an upper reference, optimistic by construction), stays below the target, no public
default can reach it with this optimizer. Scores are means over ``--splits`` train/test splits
of the small scikit-learn sets (one split for the others) and ``--seeds`` seeds.

``--analyse-only`` re-derives the tables from stored grid scores, and chooses one grid point
for DPRidge on the public scale by leaving one regression set out (on that scale the same
constants mean the same thing on every data set): for each set the point with the smallest
mean gap to each cell's best on the *other* sets (gaps in the defaults study's tolerances,
capped at 10), scored against the set's own ceiling and the shipped default.

Usage::

    python benchmarks/probe_ceiling.py --datasets digits,wine,breast_cancer --epsilons 4 \\
        --splits 5 --seeds 1 --threads 1 --cache C.json
    python benchmarks/probe_ceiling.py --analyse-only --cache benchmarks/results/ceiling.json \\
        --exclude ames:0.1
"""

from __future__ import annotations

from harness.threads import pin_threads  # first: the thread counts before numpy loads

_THREADS = pin_threads()

import argparse  # noqa: E402
import itertools  # noqa: E402
import json  # noqa: E402
import math  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
from harness import cli, data  # noqa: E402
from harness.criteria import scaled_gap, tolerance  # noqa: E402
from harness.results import Run, Study, load_raw  # noqa: E402
from sklearn.linear_model import LogisticRegression, Ridge  # noqa: E402

from skdp.linear_model import DPLogisticRegression, DPRidge  # noqa: E402

STUDY = Study(
    name="ceiling",
    title="How close can any setting get? A wider grid",
    script="benchmarks/probe_ceiling.py",
    measures="The best test score of noisy SGD over batch size (n/32-n/4) x epochs (20-400) x "
    "step x clipping bound (480 settings), chosen on the test score (an upper reference, "
    "optimistic by construction), next to the shipped default, for DPRidge on diamonds, "
    "rand_hie, ames and diabetes and DPLogisticRegression on digits; and one grid point "
    "chosen for DPRidge by leaving one regression set out.",
    conclusion="The shipped DPRidge is within 0.01 R^2 of the ceiling on diamonds and rand_hie "
    "from epsilon 0.5 but 0.028-0.035 short on ames; digits at epsilon 4 cannot reach "
    "scikit-learn (1.85 points short at best); no single setting chosen without the held-out "
    "set beats the shipped rule.",
)

DELTA = 1e-5
BATCH_FRACTIONS = (1 / 32, 1 / 16, 1 / 8, 1 / 4)  # of n, at least 64 rows (keys: the fraction)
EPOCHS = (20, 50, 100, 200, 400)
#: Classification trains on the user's scale; regression on the public scale of
#: max_row_norm='auto' (the DPRidge default), where the step is relative to rows of norm <= 1.
STEPS = {"classification": (0.25, 0.5, 1.0, 2.0, 4.0, 8.0),
         "regression": (0.05, 0.1, 0.2, 0.5, 1.0, 2.0)}
CLIPS = (0.25, 0.5, 1.0, 2.0)


def score(datas, task: str, eps: float, seeds, **params) -> float:
    cls = DPLogisticRegression if task == "classification" else DPRidge
    scores = []
    for split in datas:
        for seed in seeds:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                try:
                    model = cls(privacy=(eps, DELTA), random_state=seed, **params).fit(
                        split.X_train, split.y_train)
                except FloatingPointError:
                    return -math.inf
            scores.append(model.score(split.X_test, split.y_test))
    return float(np.mean(scores))


def batch_label(fraction: str) -> str:
    return f"n/{round(1 / float(fraction))}"


def point_label(key: str) -> str:
    fraction, epochs, step, clip = key.split("|")
    return f"{batch_label(fraction)} / {epochs} / {step} / {clip}"


def ceiling_table(results: dict, run: Run) -> None:
    rows = []
    for name, res in results.items():
        unit = 100 if res["task"] == "classification" else 1
        label = f"{name} (%)" if unit == 100 else name
        for eps in sorted((k for k in res if k not in META), key=float):
            grid, default = res[eps]["grid"], res[eps]["default"]
            best = max(grid, key=grid.get)
            at_one = max((v for k, v in grid.items() if k.split("|")[3] == "1"),
                         default=float("nan"))

            def fmt(v, unit=unit):
                return f"{100 * v:.2f}" if unit == 100 else f"{v:.4f}"

            rows.append([label, f"{float(eps):g}", fmt(default),
                         f"{fmt(grid[best])} ({point_label(best)})",
                         f"{(grid[best] - default) * unit:+.4g}", fmt(at_one),
                         fmt(res["sklearn"])])
    run.table("The best of the grid (the ceiling) against the shipped default",
              ["data set", "eps", "default", "ceiling (batch / epochs / eta0 / clip)",
               "ceiling minus default", "best at clip 1", "scikit-learn"], rows, key="ceiling",
              notes="DPRidge's eta0 is on its public scale, DPLogisticRegression's on the "
              "user's; the small sets over their splits.")


META = ("task", "n", "sklearn", "splits")


def choose_rule(results: dict, run: Run, exclude: str, max_epochs: int) -> None:
    """One grid point for DPRidge, chosen by leaving one regression set out."""
    results = json.loads(json.dumps(results))
    for cell in filter(None, exclude.split(",")):
        name, eps = cell.split(":")
        results[name].pop(str(float(eps)), None)
    names = [name for name, res in results.items() if res.get("task") == "regression"]
    cells = [(name, eps) for name in names for eps in results[name] if eps not in META]
    if not cells:
        return

    def mean_gap(sets, point):
        gaps = [scaled_gap(max(results[n][e]["grid"].values()) - results[n][e]["grid"][point],
                           "regression", float(e)) for n, e in cells if n in sets]
        return float(np.mean(gaps))

    points = [p for p in results[cells[0][0]][cells[0][1]]["grid"]
              if int(p.split("|")[1]) <= max_epochs]
    everyone = min(points, key=lambda p: mean_gap(names, p))
    rows, misses, default_misses = [], 0, 0
    for name in names:
        point = min(points, key=lambda p: mean_gap([n for n in names if n != name], p))
        for _, eps in [c for c in cells if c[0] == name]:
            cell = results[name][eps]
            best_point = max(cell["grid"], key=cell["grid"].get)
            best = cell["grid"][best_point]
            held, default = cell["grid"][point], cell["default"]
            tol = tolerance("regression", float(eps)) + 1e-12
            ok, default_ok = best - held <= tol, best - default <= tol
            misses += not ok
            default_misses += not default_ok
            rows.append([name, f"{float(eps):g}", point_label(point), f"{held:.4f}",
                         f"{default:.4f}", f"{best:.4f} ({point_label(best_point)})",
                         f"{best - held:+.4f}", f"{best - default:+.4f}",
                         f"{'yes' if ok else 'NO'} / {'yes' if default_ok else 'NO'}"])
    run.table("DPRidge: one grid point chosen on the other sets, against the shipped rule",
              ["held out", "eps", "chosen on the others", "held-out score", "default",
               "ceiling (its point)", "gap", "default's gap",
               "within tolerance (rule / default)"], rows, key="rule",
              notes=f"Chosen on all sets: {point_label(everyone)} (mean scaled gap "
              f"{mean_gap(names, everyone):.2f}). Held out, the chosen point misses {misses} "
              f"cells against the ceiling, the shipped default {default_misses}. Excluded "
              f"cells: {exclude or 'none'}.")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", default="digits,wine,breast_cancer,diabetes,ames")
    parser.add_argument("--epsilons", default="4",
                        help="comma-separated; every grid score is kept in --cache, for a "
                        "rule to be chosen on them (--analyse-only)")
    parser.add_argument("--splits", type=int, default=5)
    parser.add_argument("--seeds", type=int, default=1)
    parser.add_argument("--cache", default="/tmp/probe_ceiling.json",
                        help="grid scores (a plain cache or a results file; comma-separated "
                        "caches are merged for --analyse-only)")
    parser.add_argument("--analyse-only", action="store_true")
    parser.add_argument("--limit", type=int, default=None,
                        help="only the first N grid points (smoke runs)")
    parser.add_argument("--exclude", default="",
                        help="cells left out of the rule's choice, e.g. ames:0.1 (no public "
                        "scale there: the constants mean something else)")
    parser.add_argument("--max-epochs", type=int, default=10**9,
                        help="leave grid points with more epochs out of the rule's choice")
    cli.add_common_arguments(parser)
    args = parser.parse_args(argv)
    cli.setup(args)
    run = Run(STUDY, args, results=args.results)
    results: dict = {}
    for path in filter(None, args.cache.split(",")):
        if Path(path).is_file():
            raw, meta = load_raw(path)
            for name, res in raw.items():
                results.setdefault(name, {}).update(res)
            if args.analyse_only:
                run.inherit(meta)
    if args.analyse_only:
        ceiling_table(results, run)
        choose_rule(results, run, args.exclude, args.max_epochs)
        run.raw = results
        run.save()
        return 0
    run.header([
        f"epsilon {args.epsilons}, delta {DELTA}; batch n x {BATCH_FRACTIONS} (>= 64), epochs "
        f"{EPOCHS}, eta0 {STEPS}, max_grad_norm {CLIPS}; splits {args.splits} of the small sets, "
        f"seeds {args.seeds}"])
    seeds = range(args.seeds)
    cache = Path(args.cache.split(",")[0])
    for name in args.datasets.split(","):
        try:
            datas = data.load_splits(name, args.splits)
        except data.DataMissing as missing:
            run.skip(name, str(missing))
            continue
        task = datas[0].task
        reference = float(np.mean([
            (LogisticRegression(max_iter=5000) if task == "classification" else Ridge())
            .fit(d.X_train, d.y_train).score(d.X_test, d.y_test) for d in datas]))
        n = datas[0].X_train.shape[0]
        for eps in (float(e) for e in args.epsilons.split(",")):
            started = time.perf_counter()
            default = score(datas, task, eps, seeds)
            grid = {}
            for fraction, epochs, step, clip in list(itertools.product(
                    BATCH_FRACTIONS, EPOCHS, STEPS[task], CLIPS))[: args.limit]:
                batch = max(64, round(n * fraction))
                grid[f"{fraction:g}|{epochs}|{step:g}|{clip:g}"] = score(
                    datas, task, eps, seeds, batch_size=batch, max_iter=epochs, eta0=step,
                    max_grad_norm=clip)
            best_key = max(grid, key=grid.get)
            best = grid[best_key]
            unit = 100 if task == "classification" else 1
            results.setdefault(name, {"task": task, "n": n, "sklearn": reference,
                                      "splits": len(datas)})
            results[name][str(eps)] = {"default": default, "grid": grid}
            print(f"{name} eps {eps:g}: default {default * unit:.4g}, best {best * unit:.4g} "
                  f"({best_key}), scikit-learn {reference * unit:.4g}, {len(grid)} fits in "
                  f"{time.perf_counter() - started:.0f} s", flush=True)
            cache.write_text(json.dumps(results))
    ceiling_table(results, run)
    choose_rule(results, run, args.exclude, args.max_epochs)
    run.raw = results
    run.save()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
