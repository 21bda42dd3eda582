"""DPMLPClassifier vs Opacus (same network and DP-SGD settings) vs scikit-learn's non-private
MLPClassifier on Adult and Fashion-MNIST; DPMLPRegressor vs MLPRegressor on diamonds.

For each epsilon and seed, skdp is fitted with its defaults (plus ``hidden_layer_sizes``); Opacus
then trains the same architecture (Glorot-uniform initialisation, ReLU) with the batch size,
sampling rate, steps, clipping bound, step and weight decay read from the fitted skdp estimator,
Poisson sampling and its PRV accountant. ``--timing`` measures instead the cost of an epoch and
the peak memory of a fit (the growth of a fresh process' resident set, or
``torch.cuda.max_memory_allocated`` on a GPU), and should run on an otherwise idle machine.

Usage:
    python benchmarks/bench_mlp.py [--task adult fmnist diamonds] [--seeds 3]
        [--opacus-seeds 2] [--epsilons 0.5 1 2 4] [--device cpu|cuda] [--quick]
    python benchmarks/bench_mlp.py --timing [--task ...] [--device cpu|cuda]
"""

from __future__ import annotations

import argparse

import numpy as np
from harness import cli, data
from harness.competitors import Opacus, Skdp, Sklearn
from harness.machine import load_average
from harness.results import Run, Study
from harness.tables import fmt, mean_std, ratio
from harness.timing import peak_memory_mib, timed

DELTA = 1e-5
HIDDEN = (100,)
ACCURACY = Study(
    name="mlp_vs_opacus",
    title="DP MLPs: skdp vs Opacus vs scikit-learn (accuracy)",
    script="benchmarks/bench_mlp.py",
    measures="Test accuracy of DPMLPClassifier (100 hidden units, defaults) against Opacus "
    "training the same network with the settings read from the fitted skdp estimator (batch, "
    "sampling rate, steps, clipping bound, step, weight decay; Poisson sampling, PRV "
    "accountant), and scikit-learn's non-private MLPClassifier (Adam, 20 epochs).",
    conclusion="skdp's DP MLP matches Opacus on the same settings (Adult: paired differences "
    "-0.0006 to -0.0000 at epsilon 0.5-4, within seed noise).",
)
TIMING = Study(
    name="mlp_timing",
    title="DP MLPs: time per epoch and peak memory (CPU)",
    script="benchmarks/bench_mlp.py",
    measures="Milliseconds per epoch of DPMLPClassifier / DPMLPRegressor (100 hidden units, "
    "epsilon 1) with and without privacy ((t(6 epochs) - t(2 epochs)) / 4, minimum of 3 fits, "
    "calibration cached), of Opacus on the same network (its default hooks and its ghost "
    "clipping; make_private excluded), and the peak memory of a 2-epoch fit.",
    conclusion="A DP epoch is 50-85x faster than Opacus' default mode (4.6-19x its ghost "
    "clipping) and 1.20-1.46x a non-private epoch, in a tenth of Opacus' memory on "
    "Fashion-MNIST.",
)
TASKS = {
    "adult": ("Adult", "adult", "DPMLPClassifier", "MLPClassifier"),
    "fmnist": ("Fashion-MNIST", "fashion_mnist", "DPMLPClassifier", "MLPClassifier"),
    "diamonds": ("diamonds (scaled log price)", "diamonds", "DPMLPRegressor", "MLPRegressor"),
}


def fit_skdp(estimator, X, y, **params) -> None:
    """One fit (the function a fresh process runs to measure peak memory)."""
    estimator(**params).fit(X, y)


def skdp_epoch_seconds(estimator, X, y, *, privacy, batch_size, device, e1=2, e2=6,
                       repeats=3) -> float:
    """(t(e2) - t(e1)) / (e2 - e1), each the minimum over repeats, calibration warmed."""
    def fit(epochs):
        est = estimator(privacy=privacy, hidden_layer_sizes=HIDDEN, max_iter=epochs,
                        batch_size=batch_size, device=device, random_state=0)
        return timed(lambda: est.fit(X, y))[1]

    fit(e1), fit(e2)  # warm the calibration cache and the allocator
    return (min(fit(e2) for _ in range(repeats)) - min(fit(e1) for _ in range(repeats))) / (
        e2 - e1)


def targets_of(est, y):
    return np.searchsorted(est.classes_, y) if hasattr(est, "classes_") else y


def run_accuracy(run, key, loaded, estimator, reference, args, opacus, caught) -> None:
    title = TASKS[key][0]
    X_train, X_test, y_train, y_test = loaded
    metric = "accuracy" if hasattr(reference, "predict_proba") else "R^2"
    with cli.collect_warnings(caught, "sklearn"):
        sk = Sklearn(lambda: reference).fit(X_train, y_train)
    sk_score = sk.score(X_test, y_test)
    skdp = Skdp(estimator, hidden_layer_sizes=HIDDEN, device=args.device)
    from skdp.accounting import calibrate

    rows, seeds = [], list(range(args.seeds))
    for eps in args.epsilons:
        r = {k: [] for k in ("skdp", "skdp_eps", "opacus", "opacus_eps", "diff")}
        by_seed = {}
        for seed in seeds:
            calibrate.cache_clear()
            with cli.collect_warnings(caught, "skdp"):
                fitted = skdp.fit(X_train, y_train, privacy=(eps, DELTA), random_state=seed)
            by_seed[seed] = fitted.score(X_test, y_test)
            r["skdp"].append(by_seed[seed])
            r["skdp_eps"].append(fitted.epsilon)
        est = fitted.model
        if opacus.available and (metric == "accuracy" or args.opacus_regression):
            for seed in seeds[: args.opacus_seeds]:
                with cli.collect_warnings(caught, "opacus"):
                    op = opacus.fit_mlp(X_train, targets_of(est, y_train), like=est,
                                        epsilon=eps, delta=DELTA, seed=seed, device=args.device)
                score = op.score(X_test, y_test)
                r["opacus"].append(score)
                r["diff"].append(by_seed[seed] - score)
                r["opacus_eps"].append(op.epsilon)
        rows.append([fmt(eps, 2), mean_std(r["skdp"]), mean_std(r["opacus"]), f"{sk_score:.4f}",
                     mean_std(r["diff"]), mean_std(r["skdp_eps"]), mean_std(r["opacus_eps"])])
        print(f"eps={eps:g}: skdp {mean_std(r['skdp'])}, Opacus {mean_std(r['opacus'])}; "
              f"load {load_average()}", flush=True)
    run.table(f"{title}, test {metric}",
              ["eps", f"skdp (n={len(seeds)})", f"Opacus (n={args.opacus_seeds})",
               "sklearn (non-private)", "skdp - Opacus (paired)", "skdp eps (PLD)",
               "Opacus eps (PRV)"], rows, key=key,
              notes=f"Settings read from the fitted skdp estimator: epochs={est.n_iter_}, "
              f"batch_size={est.batch_size_}, steps={est.n_steps_}, clip={est.max_grad_norm}, "
              f"lr={est.learning_rate_:.4g}, alpha={est.alpha}.")


def run_timing(run, key, loaded, estimator, args, opacus, caught) -> None:
    title = TASKS[key][0]
    X_train, _, y_train, _ = loaded
    e1, e2 = args.timing_epochs
    est = estimator(privacy=(1.0, DELTA), hidden_layer_sizes=HIDDEN, device=args.device,
                    random_state=0)
    with cli.collect_warnings(caught, "skdp"):
        est.fit(X_train, y_train)
        epochs = {label: skdp_epoch_seconds(estimator, X_train, y_train, privacy=privacy,
                                            batch_size=est.batch_size_, device=args.device,
                                            e1=e1, e2=e2)
                  for label, privacy in (("dp", (1.0, DELTA)), ("np", (np.inf, 0)))}
        common = dict(hidden_layer_sizes=HIDDEN, device=args.device, random_state=0, max_iter=2)
        memory = {label: peak_memory_mib(fit_skdp, estimator, X_train, y_train,
                                         on_device=args.device, privacy=privacy, **common)
                  for label, privacy in (("dp", (1.0, DELTA)), ("np", (np.inf, 0)))}
    dp = epochs["dp"]
    rows = [["skdp DP (ghost clipping)", fmt(dp * 1e3, 1), "1.00x", fmt(memory["dp"], 0)],
            ["skdp non-private", fmt(epochs["np"] * 1e3, 1), ratio(epochs["np"], dp, 2),
             fmt(memory["np"], 0)]]
    if opacus.available:
        short = estimator(privacy=(1.0, DELTA), hidden_layer_sizes=HIDDEN, device=args.device,
                          random_state=0, max_iter=2).fit(X_train, y_train)
        targets = targets_of(est, y_train)
        for mode in ("hooks", "ghost"):
            try:
                with cli.collect_warnings(caught, "opacus"):
                    op = opacus.fit_mlp(X_train, targets, like=short, epsilon=1.0, delta=DELTA,
                                        seed=0, device=args.device, grad_sample_mode=mode)
                    mem = peak_memory_mib(_opacus_fit, X_train, targets, short,
                                          on_device=args.device, device=args.device, mode=mode)
            except Exception as exc:  # noqa: BLE001 - report and go on
                rows.append([f"Opacus DP ({mode})", f"failed: {type(exc).__name__}"[:80],
                             "n/a", "n/a"])
                continue
            rows.append([f"Opacus DP ({mode})", fmt(op.extra["epoch_s"] * 1e3, 1),
                         ratio(op.extra["epoch_s"], dp, 1), fmt(mem, 0)])
    steps = est.n_steps_ // est.n_iter_
    run.table(f"{title} (batch {est.batch_size_}, {steps} steps per epoch)",
              ["run", "ms / epoch", "time / skdp DP", "peak MiB"], rows, key=key,
              notes=f"skdp: (t({e2} epochs) - t({e1} epochs)) / {e2 - e1}, minimum of 3 fits "
              "each, calibration cached; Opacus: its training loop over 2 epochs / 2 "
              "(make_private excluded). Peak memory: growth of the resident set during one "
              "2-epoch fit in a fresh process, data loaded (CPU), or "
              "torch.cuda.max_memory_allocated (GPU), MiB.")


def _opacus_fit(X, y, like, *, device, mode):
    Opacus().fit_mlp(X, y, like=like, epsilon=1.0, delta=DELTA, seed=0, device=device,
                     grad_sample_mode=mode)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--task", nargs="+", default=["adult", "fmnist", "diamonds"],
                        choices=list(TASKS))
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--opacus-seeds", type=int, default=2)
    parser.add_argument("--epsilons", type=float, nargs="+", default=[0.5, 1.0, 2.0, 4.0])
    parser.add_argument("--device", default="cpu", choices=["cpu", "cuda"])
    parser.add_argument("--opacus-regression", action="store_true",
                        help="also run Opacus on diamonds")
    parser.add_argument("--quick", action="store_true", help="smoke run: one seed, eps=1")
    parser.add_argument("--timing", action="store_true",
                        help="only the per-epoch cost and peak memory (run on a quiet machine)")
    parser.add_argument("--timing-epochs", type=int, nargs=2, default=[2, 6])
    cli.add_common_arguments(parser)
    args = parser.parse_args(argv)
    cli.setup(args)
    if args.quick:
        args.seeds, args.opacus_seeds, args.epsilons = 1, 1, [1.0]
    args.opacus_seeds = min(args.opacus_seeds, args.seeds)
    from sklearn import neural_network as sk_nn

    import skdp.neural_network

    study = ACCURACY
    if args.timing:
        study = TIMING if args.device == "cpu" else Study(
            **{**TIMING.__dict__, "name": f"mlp_timing_{args.device}",
               "title": f"DP MLPs: time per epoch and peak memory ({args.device.upper()})"})
    run = Run(study, args, results=args.results)
    run.header([f"Tasks: {args.task}; epsilons {args.epsilons}, delta={DELTA:g}; seeds: skdp "
                f"{args.seeds}, Opacus {args.opacus_seeds}; device {args.device}.",
                "scikit-learn's MLPs are the non-private reference, with their defaults (Adam) "
                "except max_iter=20."])
    opacus = Opacus()
    if opacus.reason:
        run.note(f"NOTE: {opacus.reason}; its rows are skipped.")
    caught: dict[str, int] = {}
    for key in args.task:
        _, name, estimator, reference = TASKS[key]
        for _, loaded in data.load_available([name], skip=run.skip):
            cls = getattr(skdp.neural_network, estimator)
            if args.timing:
                run_timing(run, key, loaded, cls, args, opacus, caught)
            else:
                ref = getattr(sk_nn, reference)(hidden_layer_sizes=HIDDEN, max_iter=20,
                                                random_state=0)
                run_accuracy(run, key, loaded, cls, ref, args, opacus, caught)
    cli.print_warnings(caught)
    run.save()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
