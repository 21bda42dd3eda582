"""The MLP defaults on data they were not tuned on: clipping bound and step size, leave one
data set out.

For every data set of the registry (``harness/data.py``) and every epsilon, fit DPMLPClassifier or
DPMLPRegressor (100 hidden units, every other parameter at its default, ``privacy=(eps, 1e-5)``,
``random_state=seed``) at every point of a grid of ``max_grad_norm`` x ``learning_rate_init``;
the step sizes are the task's default times a multiplier, so one (clipping bound, multiplier)
pair is a candidate default for both estimators. Then, for each data set in turn, choose ONE
pair on the *other* data sets of its task (smallest mean over (data set, eps) of the gap to that
cell's oracle, gaps capped at 5 points / 0.1 R^2) and report the held-out set's score at that
pair next to

- the former default (``max_grad_norm=1``, multiplier 1: step 2.0 / 0.5 undamped, 20 epochs;
  the shipped ``learning_rate_init='auto'`` damps that step by the noise per coordinate, chosen
  by ``tune_user_scale_damping.py --model mlp``);
- the oracle: the best grid point for that set and epsilon, chosen on the test score
  (non-private selection, an upper reference only);
- the pair chosen on all the data sets of the task;
- scikit-learn's MLPClassifier / MLPRegressor (default parameters, ``max_iter=200``,
  ``random_state=0``, non-private).

Without privacy (eps = inf) nothing is clipped, so ``max_grad_norm`` has no effect: only the
step sizes are fitted there and every clipping bound reads the same score.

Scores are means over the seeds stored for a cell. Every finished (cell, seed) is written to
``--cache`` (JSON) at once, so an interrupted run resumes where it stopped and runs with
different ``--seeds`` per data set can share one cache; ``--analyse-only`` re-prints the
analysis without fitting. ``--subsample name=rows`` trains the grid (and scikit-learn) on a
stratified (classification) or random (regression) subsample of that set's training rows
(``random_state=0``); the test set is unchanged.

Usage: OMP_NUM_THREADS=1 python benchmarks/bench_mlp_defaults.py --threads 1 --seeds 2
           [--datasets a,b] [--epsilons 0.5,1,4,inf] [--cache FILE] [--subsample name=rows]
       python benchmarks/bench_mlp_defaults.py --analyse-only --cache FILE
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
import torch  # noqa: E402
from harness import cli, data  # noqa: E402
from harness.internals import mlp_private_step  # noqa: E402
from harness.results import Run, Study, load_raw  # noqa: E402
from sklearn.model_selection import train_test_split  # noqa: E402
from sklearn.neural_network import MLPClassifier, MLPRegressor  # noqa: E402

from skdp.neural_network import DPMLPClassifier, DPMLPRegressor  # noqa: E402

STUDY = Study(
    name="mlp_defaults",
    title="The MLP defaults on data they were not tuned on (leave one data set out)",
    script="benchmarks/bench_mlp_defaults.py",
    measures="DPMLPClassifier / DPMLPRegressor (100 hidden units) over max_grad_norm {0.5, 1, "
    "2, 3, 5} x the step times {0.25, 0.5, 1, 2}, epsilon {0.5, 1, 4, inf}, on eleven data "
    "sets; for each held-out set one pair is chosen on the others of its task (smallest mean "
    "gap to each cell's oracle) and compared with the default.",
    conclusion="The private defaults stay (clipping bound 1, step 2.0 / 0.5): no pair chosen "
    "without the held-out set beats them across sets; without privacy the step is a quarter "
    "of the private one.",
    chooses=("the MLPs' `max_grad_norm=1.0`",
             "`mlp.learning_rate_init` without privacy: `MLP_CLASSIFIER.non_private = 0.5`, "
             "`MLP_REGRESSOR.non_private = 0.125`, a quarter of the private step "
             "(`skdp/_defaults/mlp.py`)"),
)

CLIPS = (0.5, 1.0, 2.0, 3.0, 5.0)
MULTIPLIERS = (0.25, 0.5, 1.0, 2.0)  # times the task's default learning_rate_init
EPSILONS = (0.5, 1.0, 4.0, math.inf)
DELTA = 1e-5
ESTIMATORS = {"classification": DPMLPClassifier, "regression": DPMLPRegressor}
# The undamped private step each 'auto' default starts from (2.0 / 0.5). Since
# learning_rate_init='auto' damps it by the noise per coordinate (tune_user_scale_damping.py),
# the grid's multiplier 1 is the former default, not the shipped one.
DEFAULT_STEP = {task: mlp_private_step(cls) for task, cls in ESTIMATORS.items()}
DEFAULT_CLIP = {task: cls().max_grad_norm for task, cls in ESTIMATORS.items()}
DEFAULT_PAIR = {task: (DEFAULT_CLIP[task], 1.0) for task in ESTIMATORS}
CAP = {"classification": 0.05, "regression": 0.1}  # 5 points of accuracy, 0.1 R^2
TIE = {"classification": 0.001, "regression": 0.001}  # |difference| below this is a tie


def key(eps, clip: float, mult: float) -> str:
    eps = float(eps)
    if not math.isfinite(eps):
        clip = 1.0  # nothing is clipped without privacy: one fit stands for every bound
    return f"{eps}|{clip:g}|{mult:g}"


# --------------------------------------------------------------------------------------------
# Fitting
# --------------------------------------------------------------------------------------------
def subsample(ds, rows: int):
    if rows >= ds.X_train.shape[0]:
        return ds
    stratify = ds.y_train if ds.task == "classification" else None
    X_train, _, y_train, _ = train_test_split(ds.X_train, ds.y_train, train_size=rows,
                                              stratify=stratify, random_state=0)
    return data.Data(ds.name, ds.task, X_train, ds.X_test, y_train, ds.y_test)


def fit_score(ds, eps: float, seed: int, clip: float, mult: float) -> float | None:
    """Test score of one fit; ``None`` when the fit diverged (FloatingPointError)."""
    cls = ESTIMATORS[ds.task]
    privacy = (eps, DELTA) if math.isfinite(eps) else (math.inf, 0.0)
    model = cls(privacy=privacy, random_state=seed, max_grad_norm=clip,
                learning_rate_init=DEFAULT_STEP[ds.task] * mult)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            model.fit(ds.X_train, ds.y_train)
        except FloatingPointError:
            return None
        score = float(model.score(ds.X_test, ds.y_test))
    return score if math.isfinite(score) else None


def run_dataset(name: str, entry: dict, epsilons, seeds, rows: int | None, save) -> None:
    ds = data.load(name)
    full_rows = ds.X_train.shape[0]
    if rows:
        ds = subsample(ds, rows)
    if entry.get("train_rows", ds.X_train.shape[0]) != ds.X_train.shape[0]:
        raise SystemExit(f"{name}: the cache holds a run on {entry['train_rows']} training rows, "
                         f"not {ds.X_train.shape[0]}: pass the same --subsample or a new cache")
    entry.update(task=ds.task, shape=[full_rows, ds.X_train.shape[1]],
                 train_rows=ds.X_train.shape[0])
    entry.setdefault("scores", {})
    entry.setdefault("seconds", 0.0)
    if "sklearn" not in entry:
        ref = (MLPClassifier if ds.task == "classification" else MLPRegressor)(
            max_iter=200, random_state=0)
        started = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ref.fit(ds.X_train, ds.y_train)
        entry["sklearn_seconds"] = time.perf_counter() - started
        entry["sklearn"] = float(ref.score(ds.X_test, ds.y_test))
        save()
    started, n_fits = time.perf_counter(), 0
    for eps in epsilons:
        for clip, mult in itertools.product(CLIPS, MULTIPLIERS):
            cell = entry["scores"].setdefault(key(eps, clip, mult), {})
            for seed in seeds:
                if str(seed) in cell:
                    continue
                t0 = time.perf_counter()
                cell[str(seed)] = fit_score(ds, eps, seed, clip, mult)
                entry["seconds"] += time.perf_counter() - t0
                n_fits += 1
                save()
    print(f"  {name}: {ds.X_train.shape[0]} x {ds.X_train.shape[1]} (of {full_rows} rows), "
          f"{n_fits} new fits in {time.perf_counter() - started:.0f} s; scikit-learn "
          f"{entry['sklearn_seconds']:.0f} s", flush=True)


# --------------------------------------------------------------------------------------------
# Analysis
# --------------------------------------------------------------------------------------------
GRID = tuple(itertools.product(CLIPS, MULTIPLIERS))


def cell_score(res: dict, eps: str, clip: float, mult: float) -> float:
    """Mean over the stored seeds; NaN when any seed diverged or nothing is stored."""
    values = list(res["scores"].get(key(eps, clip, mult), {}).values())
    if not values or any(v is None for v in values):
        return math.nan
    return float(np.mean(values))


def epsilons_of(res: dict) -> list[str]:
    return sorted({k.split("|")[0] for k in res["scores"]}, key=float)


def oracle(res: dict, eps: str) -> tuple[float, tuple[float, float]]:
    scored = [(cell_score(res, eps, *p), p) for p in GRID]
    scored = [(s, p) for s, p in scored if not math.isnan(s)]
    return max(scored) if scored else (math.nan, DEFAULT_PAIR[res["task"]])


def gap(res: dict, eps: str, point) -> float:
    """Gap to the cell's oracle, capped (a diverged fit counts as the cap)."""
    score = cell_score(res, eps, *point)
    cap = CAP[res["task"]]
    return cap if math.isnan(score) else min(oracle(res, eps)[0] - score, cap)


def mean_gap(results: dict, names, point, eps_filter=None) -> float:
    gaps = [gap(results[n], e, point) for n in names for e in epsilons_of(results[n])
            if eps_filter is None or e == eps_filter]
    return float(np.mean(gaps)) if gaps else math.nan


def choose(results: dict, names) -> tuple[float, float]:
    """The pair with the smallest mean capped gap over the (data set, eps) cells of ``names``;
    ties go to the pair nearer the current default (listed first by distance)."""
    task = results[names[0]]["task"]
    default = DEFAULT_PAIR[task]

    def distance(p):
        return abs(math.log(p[0] / default[0])) + abs(math.log(p[1] / default[1]))

    return min(GRID, key=lambda p: (round(mean_gap(results, names, p), 12), distance(p)))


def unit(task: str) -> tuple[float, str]:
    return (100.0, "points") if task == "classification" else (1.0, "R^2")


def fmt_score(task: str, value: float) -> str:
    if math.isnan(value):
        return "n/a"
    return f"{100 * value:.2f}" if task == "classification" else f"{value:.4f}"


def fmt_cell(res: dict, eps: str, point) -> str:
    """The cell's mean score, or how many of its seeds diverged, or 'missing'."""
    values = list(res["scores"].get(key(eps, *point), {}).values())
    if not values:
        return "missing"
    diverged = sum(v is None for v in values)
    if diverged:
        return f"diverged ({diverged}/{len(values)} seeds)"
    return fmt_score(res["task"], float(np.mean(values)))


def fmt_diff(task: str, value: float) -> str:
    if math.isnan(value):
        return "n/a"
    return f"{100 * value:+.2f}" if task == "classification" else f"{value:+.4f}"


def pair_str(point) -> str:
    return f"{point[0]:g} / {point[1]:g}"


def tally(diffs: list[float], task: str) -> str:
    tie = TIE[task]
    wins = sum(d > tie for d in diffs)
    ties = sum(abs(d) <= tie for d in diffs)
    losses = sum(d < -tie for d in diffs)
    scale, what = unit(task)
    worst = min(diffs) * scale if diffs else math.nan
    best = max(diffs) * scale if diffs else math.nan
    return (f"beats the current default in {wins}, ties in {ties} (|diff| <= "
            f"{tie * scale:g} {what}), loses in {losses} of {len(diffs)} cells; "
            f"worst {worst:+.4g}, best {best:+.4g} {what}")


def analyse(results: dict, run: Run) -> None:
    names = list(results)
    tasks = [t for t in ESTIMATORS if any(results[n]["task"] == t for n in names)]
    for task in tasks:
        members = [n for n in names if results[n]["task"] == task]
        scale, what = unit(task)
        sets = []
        for n in members:
            res = results[n]
            seeds = {len(v) for v in res["scores"].values()}
            note = (f", trained on a {res['train_rows']}-row subsample of {res['shape'][0]}"
                    if res["train_rows"] < res["shape"][0] else "")
            sets.append(f"{n} ({res['shape'][0]} x {res['shape'][1]}{note}; seeds per cell "
                        f"{sorted(seeds)})")
        eps_all = sorted({e for n in members for e in epsilons_of(results[n])}, key=float)
        rows = []
        for point in GRID:
            cells = [mean_gap(results, members, point, e) * scale for e in eps_all]
            mark = " (current default)" if point == DEFAULT_PAIR[task] else ""
            rows.append([f"{pair_str(point)}{mark}", *(f"{c:.3g}" for c in cells),
                         f"{mean_gap(results, members, point) * scale:.3g}"])
        run.table(f"{task}: mean capped gap to the oracle of every grid point",
                  ["max_grad_norm / multiplier", *(f"eps {e}" for e in eps_all), "all"], rows,
                  key=f"{task}|gaps",
                  notes=f"{what}, cap {CAP[task] * scale:g}; multiplier 1 = step "
                  f"{DEFAULT_STEP[task]:g}; over {', '.join(sets)}.")

        everyone = choose(results, members)
        rows, loo_diffs, all_diffs = [], [], []
        for n in members:
            res = results[n]
            point = choose(results, [m for m in members if m != n]) if len(members) > 1 \
                else everyone
            for eps in epsilons_of(res):
                held = cell_score(res, eps, *point)
                default = cell_score(res, eps, *DEFAULT_PAIR[task])
                best, best_point = oracle(res, eps)
                on_all = cell_score(res, eps, *everyone)
                diff = held - default
                loo_diffs.append(diff if not math.isnan(diff) else -CAP[task])
                all_diffs.append(on_all - default if not math.isnan(on_all - default)
                                 else -CAP[task])
                rows.append([n, f"{res['shape'][0]} x {res['shape'][1]}", eps, pair_str(point),
                             fmt_cell(res, eps, point), fmt_cell(res, eps, DEFAULT_PAIR[task]),
                             fmt_diff(task, diff),
                             f"{fmt_score(task, best)} ({pair_str(best_point)})",
                             fmt_cell(res, eps, everyone), fmt_score(task, res["sklearn"])])
        tallies = [f"Leave-one-out choice vs current default: {tally(loo_diffs, task)}.",
                   f"Pair chosen on all sets ({pair_str(everyone)}) vs current default: "
                   f"{tally(all_diffs, task)}."]
        for e in eps_all:
            diffs = [cell_score(results[n], e, *everyone)
                     - cell_score(results[n], e, *DEFAULT_PAIR[task]) for n in members
                     if e in epsilons_of(results[n])]
            diffs = [d if not math.isnan(d) else -CAP[task] for d in diffs]
            tallies.append(f"eps {e}: {tally(diffs, task)}.")
        run.table(f"{task}: each set held out", [
            "held out", "n x d", "eps", "chosen on the others (clip / mult)",
            "held out at that pair", "current default", "diff", "oracle (clip / mult)",
            f"chosen on all ({pair_str(everyone)})", "scikit-learn"], rows, key=f"{task}|held",
            notes=f"Chosen on all {task} sets: max_grad_norm={everyone[0]:g}, multiplier "
            f"{everyone[1]:g}. Accuracy in %, R^2 as is; 'diff' = held out at the pair chosen "
            "without it minus the current default; a diverged cell counts as the cap. "
            + " ".join(tallies))


# --------------------------------------------------------------------------------------------
# Command line
# --------------------------------------------------------------------------------------------
def parse_args(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seeds", type=int, default=2, help="seeds 0..N-1 per cell")
    parser.add_argument("--datasets", default="adult,adult_rownorm,nass_cds,fertility,digits,"
                        "breast_cancer,fashion_mnist,diamonds,rand_hie,ames,diabetes")
    parser.add_argument("--epsilons", default=",".join(str(e) for e in EPSILONS))
    parser.add_argument("--cache", default="/tmp/bench_mlp_defaults.json",
                        help="raw scores, resumable (a results file is read as well)")
    parser.add_argument("--subsample", default="",
                        help="comma list of name=rows: train on that many training rows")
    parser.add_argument("--analyse-only", action="store_true")
    cli.add_common_arguments(parser)
    return parser.parse_args(argv)


def main(argv=None) -> int:
    args = parse_args(argv)
    cli.setup(args)
    cache = Path(args.cache)
    results, meta = load_raw(cache) if cache.is_file() else ({}, None)
    run = Run(STUDY, args, results=args.results)
    if args.analyse_only:
        run.inherit(meta)
    else:
        rows = {k: int(v) for k, v in (item.split("=") for item in args.subsample.split(",")
                                       if item)}
        run.header([
            f"grid max_grad_norm {CLIPS} x step multiplier {MULTIPLIERS} (default steps "
            f"{DEFAULT_STEP}); seeds {args.seeds}; delta {DELTA}; torch threads "
            f"{torch.get_num_threads()}; subsamples {rows or 'none'}"])

        def save():
            tmp = cache.with_suffix(cache.suffix + ".tmp")
            tmp.write_text(json.dumps(results))
            tmp.replace(cache)

        epsilons = [float(e) for e in args.epsilons.split(",")]
        for name in args.datasets.split(","):
            entry = results.setdefault(name, {})
            try:
                run_dataset(name, entry, epsilons, range(args.seeds), rows.get(name), save)
            except data.DataMissing as missing:
                run.skip(name, str(missing))
                if not entry:
                    results.pop(name)
    analyse(results, run)
    run.raw = results
    run.save()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
