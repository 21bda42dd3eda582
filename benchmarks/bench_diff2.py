"""diff2 vs noisy full-batch gradient descent (DP-GD) at the same privacy: the comparison of
Murata & Suzuki in skdp's setting, on diamonds (DPRidge, and DPMLPRegressor with one small
hidden layer as in the paper) at epsilon 3 and 5.

Protocol (the paper's, scaled down): both methods run the same number of full-batch rounds.
DP-GD's step size and clipping bound are tuned on a validation split of the training data;
diff2 reuses them and tunes its restart period and difference clip (and a quarter of the step
size) on the same split (worst of two seeds). Like the paper's, this tuning is *not*
privacy-accounted (it is the same for both methods). Then each method's chosen configuration
is refitted on the training split with fresh seeds and scored (R^2) on the test split. Mean ±
std over seeds.

Usage:
    python benchmarks/bench_diff2.py [--task ridge mlp] [--epsilons 3 5] [--rounds 500]
        [--seeds 5] [--subsample N] [--threads 1]
"""

from __future__ import annotations

import argparse
import itertools
import time

import numpy as np
from harness import cli, data
from harness.cli import collect_warnings
from harness.machine import load_average
from harness.results import Run, Study

from skdp.linear_model import DPRidge
from skdp.neural_network import DPMLPRegressor

STUDY = Study(
    name="diff2",
    title="diff2 vs noisy full-batch gradient descent",
    script="benchmarks/bench_diff2.py",
    measures="Test R^2 of diff2 (Murata & Suzuki) against DP-GD with the same number of "
    "full-batch rounds on diamonds (DPRidge, and an MLP with 10 tanh units), epsilon 3 and 5 "
    "on all rows and 1-5 on a 2,000-row subsample; each method's step and clipping (diff2: "
    "restart period and difference clip too) tuned on a validation split, 5 fresh seeds, "
    "paired.",
    conclusion="diff2 never beat DP-GD here: tie for DPRidge on all rows, 0.002-0.009 R^2 "
    "behind elsewhere.",
)
DELTA = 1e-5


def make_ridge(**kw):
    return DPRidge(**kw)


def make_mlp(**kw):
    # The paper: one hidden layer of 10 units with a smooth activation (softplus; tanh here).
    return DPMLPRegressor(hidden_layer_sizes=(10,), activation="tanh", **kw)


TASKS = {
    "ridge": ("DPRidge on diamonds", make_ridge, "eta0"),
    "mlp": ("DPMLPRegressor(hidden_layer_sizes=(10,), activation='tanh') on diamonds",
            make_mlp, "learning_rate_init"),
}
LABELS = {"ridge": "DPRidge", "mlp": "MLP (10 tanh units)"}
STEP_SIZES = (0.25, 0.5, 1.0)
CLIP_BOUNDS = (0.3, 1.0, 3.0)
RESTART_PERIODS = (10, 50, 200)
DIFF_CLIPS = (1.0, 10.0, 100.0)


def fit_score(make, params, data, seed, caught, tag):
    X_fit, X_eval, y_fit, y_eval = data
    est = make(random_state=seed, **params)
    try:
        with collect_warnings(caught, tag):
            est.fit(X_fit, y_fit)
    except FloatingPointError:  # diverged (parameters not finite)
        return -np.inf, est
    return est.score(X_eval, y_eval), est


def validation_score(make, params, data, caught, tag):
    """The worst validation R^2 over two seeds: a configuration that diverges on one seed (a
    step size too large for the difference estimator's random walk) is not chosen."""
    return min(fit_score(make, params, data, seed, caught, tag)[0] for seed in (0, 1))


def run_task(key, args, caught, run):
    title, make, step_name = TASKS[key]
    X_train, X_test, y_train, y_test = data.load("diamonds")
    if args.subsample:
        # A public random subset of the training rows: a regime where the noise matters.
        keep = np.random.default_rng(0).permutation(len(X_train))[: args.subsample]
        X_train, y_train = X_train[keep], y_train[keep]
    val = data.validation_split((X_train, X_test, y_train, y_test))
    test = (X_train, X_test, y_train, y_test)
    rows = []
    start = time.perf_counter()
    for eps in args.epsilons:
        base = dict(privacy=(eps, DELTA), max_iter=args.rounds)
        dpgd_grid = [
            dict(base, batch_size=len(val[0]), **{step_name: eta}, max_grad_norm=clip)
            for eta, clip in itertools.product(STEP_SIZES, CLIP_BOUNDS)
        ]
        dpgd_val = [validation_score(make, p, val, caught, key) for p in dpgd_grid]
        best_dpgd = dpgd_grid[int(np.nanargmax(dpgd_val))]
        eta, clip = best_dpgd[step_name], best_dpgd["max_grad_norm"]
        diff2_grid = [
            dict(base, optimizer="diff2", **{step_name: step}, max_grad_norm=clip,
                 optimizer_params={"restart_period": period, "diff_clip": c2})
            for step, period, c2 in itertools.product(
                (eta, eta / 4), RESTART_PERIODS, DIFF_CLIPS
            )
        ]
        diff2_val = [validation_score(make, p, val, caught, key) for p in diff2_grid]
        best_diff2 = diff2_grid[int(np.nanargmax(diff2_val))]
        # Fresh seeds for the reported runs (the validation fits used seeds 0 and 1).
        dpgd_test, diff2_test = [], []
        for seed in range(2, args.seeds + 2):
            dpgd_test.append(fit_score(make, best_dpgd, test, seed, caught, key)[0])
            score, est = fit_score(make, best_diff2, test, seed, caught, key)
            assert est.privacy_spent_[0] <= eps
            diff2_test.append(score)
        dpgd_test, diff2_test = np.asarray(dpgd_test), np.asarray(diff2_test)
        rows.append((eps, best_dpgd, best_diff2, dpgd_test, diff2_test, max(dpgd_val),
                     max(diff2_val)))
        print(f"(eps={eps:g} done after {time.perf_counter() - start:.0f} s, load "
              f"{load_average()})", flush=True)

    table = []
    for eps, p_gd, p_d2, gd, d2, _, _ in rows:
        diff = d2 - gd
        gd_cfg = f"{step_name}={p_gd[step_name]:g}, C1={p_gd['max_grad_norm']:g}"
        op = p_d2["optimizer_params"]
        d2_cfg = (f"{step_name}={p_d2[step_name]:g}, C1={p_d2['max_grad_norm']:g}, "
                  f"T={op['restart_period']}, C2={op['diff_clip']:g}")
        table.append([LABELS[key], f"{eps:g}",
                      f"{gd.mean():.4f} ± {gd.std(ddof=1):.4f}",
                      f"{d2.mean():.4f} ± {d2.std(ddof=1):.4f}",
                      f"{diff.mean():+.4f} ± {diff.std(ddof=1):.4f}", gd_cfg, d2_cfg])
    return table


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--task", nargs="+", default=["ridge", "mlp"], choices=list(TASKS))
    parser.add_argument("--epsilons", type=float, nargs="+", default=[3.0, 5.0])
    parser.add_argument("--rounds", type=int, default=500)
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--subsample", type=int, default=None,
                        help="train on a random subset of this many training rows")
    cli.add_common_arguments(parser)
    args = parser.parse_args(argv)
    cli.setup(args)
    run = Run(STUDY, args, results=args.results)
    run.header([
        f"Tasks {args.task}; epsilons {args.epsilons}, delta={DELTA:g}; {args.rounds} rounds; "
        f"{args.seeds} test seeds. Grids: step {STEP_SIZES} x C1 {CLIP_BOUNDS} for DP-GD; "
        f"T {RESTART_PERIODS} x C2 {DIFF_CLIPS} x (step, step/4) for diff2; validation "
        "score = worst of two seeds."])
    caught: dict[str, int] = {}
    rows = []
    for key in args.task:
        rows += run_task(key, args, caught, run)
    rows_label = f"{args.subsample:,} training rows" if args.subsample else "All training rows"
    run.table(rows_label, ["model", "eps", "DP-GD", "diff2", "diff2 - DP-GD", "DP-GD config",
                           "diff2 config"], rows, key=f"rows={args.subsample or 'all'}",
              notes=f"Test R^2 after {args.rounds} full-batch rounds, mean ± std over seeds; "
              "the paired difference diff2 - DP-GD (same seeds); the configurations chosen on "
              "the validation split.")
    cli.print_warnings(caught)
    run.save()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
