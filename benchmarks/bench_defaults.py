"""Defaults that hold on data nobody tuned them on: leave one data set out.

For every data set of the registry (``harness/data.py``: Adult twice, diamonds,
Fashion-MNIST, four raw tables, four scikit-learn sets) and every epsilon, fit the linear model
(DPLogisticRegression or DPRidge with the SGD optimizer) with the scale-free rule of
``skdp/_defaults/linear.py`` (``max_row_norm='auto'``, ``eta0='auto'``, ``max_iter='auto'``) at
every point of a grid of the rule's constants (STEP_SCALE x NOISE_DAMPING x FEATURE_EXPONENT,
one triple per task). Then, for each data set in turn, choose its task's constants on all the
*other* data sets of that task (most cells within target, then the smallest mean gap to each
set's oracle, gaps divided by the issue's tolerance: 0.5 points / 0.01 R^2 at eps >= 1, 1.5
points / 0.03 R^2 below) and report that choice on the held-out set next to

- the oracle: the best of the grid points and the two defaults below for that set and epsilon,
  chosen on the test score (non-private selection, an upper reference only);
- the former defaults (``eta0`` 2.0 / 0.5, 20 epochs, no row bound);
- the shipped defaults (the estimator with every parameter at its default: for
  DPLogisticRegression the measured step and epochs on the user's scale, grown with epsilon;
  for DPRidge the scale-free rule), and whether they are within the target;
- scikit-learn (LogisticRegression / Ridge with the same penalty).

The grid spans step sizes 16x apart and damping from none to strong, so the oracle is a
generous reference. Scores are the mean over ``--seeds`` seeds, and for the small scikit-learn
sets over ``--splits`` train/test splits (one test row of wine is 2.2 points: a single split
decides a cell by a row or two, and the oracle, a maximum over the grid, gains from that
noise). Raw scores are cached in ``--cache`` (JSON), so the analysis can be re-run without
refitting (``--analyse-only``).

Usage: python benchmarks/bench_defaults.py [--seeds 2] [--splits 1] [--datasets a,b]
       [--epsilons 0.1,1,inf] [--threads 1] [--cache /tmp/bench_defaults.json] [--analyse-only]
       python benchmarks/bench_defaults.py --analyse-only \
           --cache benchmarks/results/defaults_study.json   # the stored study's tables
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import time
import warnings
from pathlib import Path

import numpy as np
from harness import cli, data, internals
from harness.criteria import GAP_CAP, close_to_sklearn, tolerance
from harness.results import Run, Study, load_raw
from sklearn.linear_model import LogisticRegression, Ridge

from skdp.linear_model import DPLogisticRegression, DPRidge

STUDY = Study(
    name="defaults_study",
    title="Defaults on data they were not tuned on",
    script="benchmarks/bench_defaults.py",
    measures="For twelve preparations of eleven data sets and epsilon 0.1-inf: the linear "
    "models' scale-free rule (`max_row_norm`, `eta0`, `max_iter` = 'auto') at every point of "
    "a grid of its constants, chosen for each held-out set on the other sets of its task, next "
    "to the oracle (best grid point or default on the test score), the former defaults (step "
    "2.0 / 0.5, 20 epochs), the shipped defaults and scikit-learn; the small sets over ten "
    "train/test splits.",
    conclusion="The shipped defaults are within target of the oracle in 54 of 60 cells "
    "(misses: row-normalised Adult at epsilon 1, wine at 0.1, 1 and inf, digits and diabetes "
    "at 0.1); the scale-free rule stays an option for DPLogisticRegression and is DPRidge's "
    "default.",
    chooses=("`linear.eta0.scale_free`: `STEP_SCALE`, `NOISE_DAMPING`, `FEATURE_EXPONENT` "
             "(`skdp/_defaults/linear.py`)",
             "`linear.max_iter`: `MIN_STEPS = 1000`, `MIN_EPOCHS = 20` "
             "(`skdp/_defaults/linear.py`)",
             "`scale.search`: DPRidge's `max_row_norm='auto'` by default"),
)

STEP_SCALES = (1.0, 2.0, 4.0, 8.0)
DAMPINGS = (4.0,)
EXPONENTS = (0.0, 0.5, 1.0)
GRID = tuple(itertools.product(STEP_SCALES, DAMPINGS, EXPONENTS))
EPSILONS = (0.1, 0.5, 1.0, 4.0, math.inf)
DELTA = 1e-5
FORMER = {"max_iter": 20, "max_row_norm": None}  # the former defaults, before 'auto'
OLD_DEFAULTS = {"classification": {"eta0": 2.0, **FORMER}, "regression": {"eta0": 0.5, **FORMER}}
AUTO = {"max_row_norm": "auto", "eta0": "auto", "max_iter": "auto"}


def estimator(task: str, eps: float, seed: int, **params):
    cls = DPLogisticRegression if task == "classification" else DPRidge
    params = {"optimizer": "noisy_sgd", **params}
    return cls(privacy=(eps, DELTA if math.isfinite(eps) else 0.0), random_state=seed, **params)


def score_fits(datas, eps: float, seeds, **params) -> float:
    """Mean test score over ``seeds`` and over the splits ``datas`` (one ``Data`` or a list of
    train/test splits of one set); -1 if a fit diverged, NaN if one was refused."""
    scores = []
    for split in datas if isinstance(datas, list) else [datas]:
        for seed in seeds:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                try:
                    model = estimator(split.task, eps, seed, **params).fit(split.X_train,
                                                                           split.y_train)
                except FloatingPointError:  # diverged (possible without clipping, eps = inf)
                    return -1.0
                except ValueError:  # refused: n too small to find the scale
                    return float("nan")
            scores.append(float(model.score(split.X_test, split.y_test)))
    return float(np.mean(scores))


def run_dataset(name: str, epsilons, seeds, splits: int = 1) -> dict:
    datas = data.load_splits(name, splits)
    first = datas[0]
    references = [(LogisticRegression(max_iter=5000) if first.task == "classification"
                   else Ridge()).fit(d.X_train, d.y_train) for d in datas]
    out = {"task": first.task, "shape": list(first.shape), "splits": len(datas),
           "sklearn": float(np.mean([r.score(d.X_test, d.y_test)
                                     for r, d in zip(references, datas, strict=True)])),
           "old": {}, "shipped": {}, "grid": {}}
    started = time.perf_counter()
    for eps in epsilons:
        key = str(eps)
        out["old"][key] = score_fits(datas, eps, seeds, **OLD_DEFAULTS[first.task])
        # Every parameter at its default, with the rule's shipped constants.
        out["shipped"][key] = score_fits(datas, eps, seeds)
        for step, damping, exponent in GRID:
            if not math.isfinite(eps) and damping != DAMPINGS[0]:
                continue  # damping acts on the noise only: the same fit
            with internals.rule_constants(first.task, step, damping, exponent):
                out["grid"][f"{key}|{step}|{damping}|{exponent}"] = score_fits(
                    datas, eps, seeds, **AUTO)
    out["seconds"] = time.perf_counter() - started
    print(f"  {name}: {first.shape[0]} x {first.shape[1]}, {len(datas)} split(s), "
          f"{out['seconds']:.0f} s", flush=True)
    return out


def rescore_shipped(name: str, res: dict, epsilons, seeds) -> None:
    """Replace ``res['shipped']`` by fresh fits of the estimator with every default (on the
    splits the cache was made with)."""
    datas = data.load_splits(name, res.get("splits", 1))
    for eps in epsilons:
        res["shipped"][str(eps)] = score_fits(datas, eps, seeds)
    print(f"  {name}: shipped defaults re-scored", flush=True)


def grid_score(res: dict, eps: str, step: float, damping: float, exponent: float) -> float:
    if eps == "inf":
        damping = DAMPINGS[0]
    return res["grid"][f"{eps}|{step}|{damping}|{exponent}"]


def oracle(res: dict, eps: str) -> float:
    """The best score at ``eps`` of the grid, the former and the shipped defaults (chosen on
    the test score: an upper reference only)."""
    candidates = [v for k, v in res["grid"].items() if k.split("|")[0] == eps]
    candidates += [res[k][eps] for k in ("old", "shipped") if eps in res.get(k, {})]
    return max(v for v in candidates if not math.isnan(v))


def within_target(res: dict, eps: str, score: float) -> bool:
    """Gap to the oracle within the tolerance; without privacy also close to scikit-learn."""
    ok = oracle(res, eps) - score <= tolerance(res["task"], float(eps)) + 1e-12
    if float(eps) == math.inf:
        ok = ok and res["sklearn"] - score <= close_to_sklearn(res["task"])
    return ok


def choose(results: dict, names) -> tuple[float, float, float]:
    """The grid point that meets the target in the most (data set, epsilon) cells of ``names``;
    ties go to the smallest mean gap to the oracle (gaps divided by the tolerance and capped at
    10, so that one hopeless cell of a tiny data set cannot outvote the others)."""
    best, best_key = None, None
    for point in GRID:
        met, gaps = 0, []
        for name in names:
            res = results[name]
            for eps in res["old"]:
                gap = oracle(res, eps) - grid_score(res, eps, *point)
                scaled = gap / tolerance(res["task"], float(eps))
                met += scaled <= 1.0 + 1e-9
                gaps.append(min(scaled, GAP_CAP))
        key = (-met, float(np.mean(gaps)) if gaps else 0.0)
        if best_key is None or key < best_key:
            best, best_key = point, key
    return best


def fmt_score(value: float, task: str) -> str:
    return f"{100 * value:.2f}" if task == "classification" else f"{value:.4f}"


def analyse(results: dict, run: Run) -> None:
    names = list(results)
    tasks = sorted({res["task"] for res in results.values()})
    try:
        shipped_constants = internals.shipped_rule_constants()
    except ImportError:  # an analysis of stored scores does not need skdp's internals
        shipped_constants = None
    chosen_lines = []
    for task in tasks:
        everyone = choose(results, [n for n in names if results[n]["task"] == task])
        shipped = ("" if shipped_constants is None else " (shipped: " + ", ".join(
            f"{shipped_constants[c][task]:g}" for c in internals.RULE_CONSTANTS) + ")")
        chosen_lines.append(f"{task}: constants chosen on all its data sets: STEP_SCALE="
                            f"{everyone[0]:g}, NOISE_DAMPING={everyone[1]:g}, "
                            f"FEATURE_EXPONENT={everyone[2]:g}{shipped}.")
    held_rows, shipped_rows = [], []
    misses = shipped_misses = 0
    for name in names:
        res = results[name]
        task = res["task"]
        unit = 100 if task == "classification" else 1
        splits = f", {res['splits']} splits" if res.get("splits", 1) > 1 else ""
        # Chosen on the other data sets of the same task (the constants are per task).
        point = choose(results, [n for n in names if n != name and results[n]["task"] == task])
        for eps in res["old"]:
            held = grid_score(res, eps, *point)
            best = oracle(res, eps)
            ok = within_target(res, eps, held)
            misses += not ok
            shipped = res.get("shipped", {}).get(eps)
            shipped_ok = shipped is not None and within_target(res, eps, shipped)
            shipped_misses += not shipped_ok
            held_rows.append([name, f"{res['shape'][0]} x {res['shape'][1]}", eps,
                              " / ".join(f"{c:g}" for c in point), fmt_score(held, task),
                              fmt_score(best, task), f"{(best - held) * unit:+.3g}",
                              fmt_score(res["old"][eps], task), fmt_score(res["sklearn"], task),
                              "yes" if ok else "NO"])
            shipped_rows.append([f"{name}{splits}", eps,
                                 "n/a" if shipped is None else fmt_score(shipped, task),
                                 fmt_score(best, task),
                                 "n/a" if shipped is None else f"{(best - shipped) * unit:+.2f}"
                                 if unit == 100 else f"{best - shipped:+.4f}",
                                 fmt_score(res["old"][eps], task),
                                 fmt_score(res["sklearn"], task), "yes" if shipped_ok else "NO"])
    run.table("The shipped defaults against the oracle",
              ["data set", "eps", "shipped default", "oracle", "gap", "former default",
               "scikit-learn", "within target"], shipped_rows, key="shipped",
              notes=f"{shipped_misses} of {len(shipped_rows)} (data set, epsilon) cells miss "
              "the target (accuracy in %, R^2 as is). The oracle is the best of the grid, the "
              "former and the shipped defaults for that cell, chosen on the test score (an "
              "upper reference). Within target: gap at most 0.5 points / 0.01 R^2 at epsilon "
              ">= 1 and 1.5 / 0.03 below, and without privacy also within 0.3 points / 0.005 "
              "R^2 of scikit-learn. Small sets: the mean over their train/test splits.")
    run.table("The scale-free rule, chosen on the other sets of its task (held out)",
              ["held out", "n x d", "eps", "chosen on the others (step / damping / exponent)",
               "held-out rule", "oracle", "gap", "former default", "scikit-learn",
               "within target"], held_rows, key="held_out",
              notes=f"{misses} cells miss the target with the held-out rule. "
              + " ".join(chosen_lines))


def parse_args(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seeds", type=int, default=2)
    parser.add_argument("--splits", type=int, default=1,
                        help="train/test splits of the small scikit-learn sets (digits, breast "
                        "cancer, diabetes, wine) to average over, each with --seeds seeds; "
                        "the other sets keep their one split")
    parser.add_argument("--datasets", default=",".join(data.STUDY_SETS))
    parser.add_argument("--epsilons", default=",".join(str(e) for e in EPSILONS))
    parser.add_argument("--cache", default="/tmp/bench_defaults.json",
                        help="raw scores (a plain cache or a results file; comma-separated "
                        "caches are merged for --analyse-only)")
    parser.add_argument("--analyse-only", action="store_true")
    parser.add_argument("--shipped-only", action="store_true",
                        help="re-score only the shipped defaults of --datasets (after a change "
                        "to them), keeping the grid, the former defaults and scikit-learn's "
                        "score from --cache; use the --seeds the cache was made with")
    cli.add_common_arguments(parser)
    return parser.parse_args(argv)


def main(argv=None) -> int:
    args = parse_args(argv)
    cli.setup(args)
    run = Run(STUDY, args, results=args.results)
    results, meta = {}, None
    for path in filter(None, args.cache.split(",")):
        if Path(path).is_file():
            raw, meta = load_raw(path)
            results.update(raw)
    cache = Path(args.cache.split(",")[0])
    epsilons = [float(e) for e in args.epsilons.split(",")]
    if args.shipped_only:
        for name in args.datasets.split(","):
            rescore_shipped(name, results[name], epsilons, range(args.seeds))
            cache.write_text(json.dumps(results))
    elif args.analyse_only:
        run.inherit(meta)
    else:
        run.header([f"grid STEP_SCALE {STEP_SCALES} x NOISE_DAMPING {DAMPINGS} x "
                    f"FEATURE_EXPONENT {EXPONENTS}; seeds {args.seeds}; splits of the small "
                    f"sets {args.splits}; delta {DELTA}"])
        for name in args.datasets.split(","):
            try:
                results[name] = run_dataset(name, epsilons, range(args.seeds), args.splits)
            except data.DataMissing as missing:
                run.skip(name, str(missing))
                continue
            cache.write_text(json.dumps(results))
    analyse(results, run)
    run.raw = results
    run.save(merge=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
