"""Benchmark: DP ridge regression on diamonds -- skdp vs Opacus vs diffprivlib vs scikit-learn.

All competitors run side by side in one process on the same data: ``diamonds_preprocessor()``
features, target ``scale_diamonds_target(price)`` (log price minus a public centre), and a fixed
split ``train_test_split(test_size=0.2, random_state=0)``. For each epsilon (delta = 1e-5):

- skdp ``DPRidge(privacy=(eps, 1e-5), random_state=seed)`` with its defaults;
- Opacus DP-SGD configured from the fitted skdp estimator (same epochs, steps per epoch,
  expected batch size, clip norm, learning rate, L2 penalty, zero init, (eps, delta)), loss
  ``0.5 * MSELoss`` so that per-example gradients equal skdp's ``residual * [x, 1]``, PRV
  accountant, Poisson sampling; its last iterate is evaluated (Opacus does not average);
- diffprivlib ``LinearRegression(epsilon=eps, bounds_X, bounds_y)`` with public bounds
  (pure eps-DP; no L2 penalty in diffprivlib);
- scikit-learn ``Ridge(alpha=1.0)``, the non-private reference.

It also measures the per-epoch cost of skdp's engine, DP vs non-private, calibration excluded.

Usage::

    python benchmarks/bench_diamonds_ridge.py            # full run (~10 min on 2 cores)
    python benchmarks/bench_diamonds_ridge.py --quick    # smoke run: eps=1, one seed
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

import numpy as np
from sklearn.linear_model import Ridge
from sklearn.metrics import r2_score
from sklearn.model_selection import train_test_split

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _bench_common import (  # noqa: E402
    DELTA,
    collect_warnings,
    fit_opacus,
    fmt,
    import_diffprivlib,
    load_average,
    markdown_table,
    mean_min,
    mean_or_nan,
    mean_std,
    min_or_nan,
    opacus_loader_batch_size,
    print_header,
    print_warnings,
    ratio,
    report_epoch_cost,
    timed,
    try_import,
)

from skdp.accounting import calibrate  # noqa: E402
from skdp.datasets import (  # noqa: E402
    DIAMONDS_LOG_PRICE_CENTER,
    DIAMONDS_NUMERIC_SCALING,
    diamonds_preprocessor,
    load_diamonds,
    scale_diamonds_target,
)
from skdp.linear_model import DPRidge  # noqa: E402

EPSILONS = (0.1, 0.5, 1.0, 2.0, 4.0)

# Public ranges of the raw numeric columns, from gemmological domain knowledge and the
# documented ranges in skdp.datasets -- never from the records. Used only for diffprivlib's
# bounds_X (diffprivlib clips every feature to its bounds). A round brilliant of 0.2 ct is
# about 3.8 mm across and one of 5 ct about 11 mm, with a depth of about 60% of the width.
DIAMONDS_PUBLIC_RANGES = {
    "carat": (0.2, 5.0),  # documented as about 0.2..5 carat
    "depth": (55.0, 70.0),  # total depth %, usually 58..66
    "table": (50.0, 70.0),  # table %, usually 52..63
    "x": (3.5, 11.0),  # length, mm
    "y": (3.5, 11.0),  # width, mm
    "z": (2.0, 7.0),  # depth, mm
}
# Public price range in USD: diamonds sold by the piece, a few hundred to about 20,000 USD.
PRICE_PUBLIC_RANGE = (300.0, 20_000.0)


def scaled(kind: str, center: float, scale: float, value: float) -> float:
    f = {"linear": lambda v: v, "log": math.log, "log1p": math.log1p}[kind]
    return (f(value) - center) / scale


def public_bounds(feature_names) -> tuple[np.ndarray, np.ndarray, tuple[float, float]]:
    """Per-feature (lower, upper) on the preprocessed scale, and the bounds of the target."""
    lower, upper = [], []
    for name in feature_names:
        if name in DIAMONDS_NUMERIC_SCALING:
            kind, center, scale = DIAMONDS_NUMERIC_SCALING[name]
            lo, hi = DIAMONDS_PUBLIC_RANGES[name]
            lower.append(scaled(kind, center, scale, lo))
            upper.append(scaled(kind, center, scale, hi))
        else:  # one-hot column
            lower.append(0.0)
            upper.append(1.0)
    bounds_y = tuple(float(v) for v in scale_diamonds_target(np.array(PRICE_PUBLIC_RANGE)))
    return np.array(lower), np.array(upper), bounds_y


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, default=5, help="seeds for skdp and diffprivlib")
    parser.add_argument("--opacus-seeds", type=int, default=2,
                        help="seeds for Opacus (the first ones of --seeds; Opacus is slow)")
    parser.add_argument("--epsilons", type=float, nargs="+", default=list(EPSILONS))
    parser.add_argument("--quick", action="store_true",
                        help="smoke run: one seed, eps=1 only")
    parser.add_argument("--skip-epoch-cost", action="store_true",
                        help="do not measure skdp's per-epoch cost")
    args = parser.parse_args(argv)
    if args.quick:
        args.seeds, args.opacus_seeds, args.epsilons = 1, 1, [1.0]
    args.opacus_seeds = min(args.opacus_seeds, args.seeds)
    return args


def main(argv=None) -> int:
    args = parse_args(argv)
    seeds = list(range(args.seeds))
    opacus_seeds = seeds[: args.opacus_seeds]
    opacus = try_import("opacus")
    dpl = import_diffprivlib()

    X_raw, price = load_diamonds(return_X_y=True)
    X_train_raw, X_test_raw, price_train, price_test = train_test_split(
        X_raw, price, test_size=0.2, random_state=0
    )
    pre = diamonds_preprocessor().fit(X_train_raw)  # data-independent
    X_train, X_test = pre.transform(X_train_raw), pre.transform(X_test_raw)
    y_train, y_test = scale_diamonds_target(price_train), scale_diamonds_target(price_test)
    n, d = X_train.shape
    names = [str(v) for v in pre.get_feature_names_out()]
    lower, upper, bounds_y = public_bounds(names)

    print_header(
        "diamonds: DP ridge regression -- skdp vs Opacus vs diffprivlib vs scikit-learn",
        [
            f"Data: diamonds, train_test_split(test_size=0.2, random_state=0): {n} train / "
            f"{X_test.shape[0]} test rows, {d} features after diamonds_preprocessor() (public "
            "constants); target scale_diamonds_target(price) = log(price) - "
            f"{DIAMONDS_LOG_PRICE_CENTER}. Metric: test R^2 on that target.",
            f"Epsilons: {args.epsilons}, delta = {DELTA:g} (diffprivlib: delta = 0, pure eps-DP).",
            f"Seeds: skdp and diffprivlib {seeds}; Opacus {opacus_seeds} only "
            f"(--opacus-seeds={args.opacus_seeds}: Opacus is much slower); scikit-learn is "
            "deterministic (timed over the same number of repetitions as --seeds).",
            "skdp: DPRidge(privacy=(eps, 1e-5), random_state=seed), all defaults. Fit time "
            "includes noise calibration: skdp.accounting.calibrate (an lru_cache) is cleared "
            "before every timed fit, since Opacus calibrates in every fit too; 'skdp warm' "
            "re-fits the same seed with the cache warm (training only).",
            "Opacus: nn.Linear(d, 1), zero init, loss 0.5 * MSELoss(mean) (per-example gradient "
            "residual * [x, 1], as skdp's half squared error), SGD(lr=skdp eta0, "
            "weight_decay=alpha/n on the weight only -- the same L2 gradient skdp adds after the "
            "noise), PrivacyEngine(accountant='prv').make_private_with_epsilon(poisson_sampling="
            "True, max_grad_norm=skdp max_grad_norm, epochs=skdp n_iter_, target (eps, 1e-5)) "
            "over DataLoader(TensorDataset, batch_size=ceil(n / skdp steps per epoch)), which "
            "gives Opacus the same steps per epoch and expected batch size. Last iterate "
            "(Opacus has no iterate averaging). Fit time includes make_private_with_epsilon.",
            "diffprivlib: LinearRegression(epsilon=eps, bounds_X=<public>, bounds_y=<public>, "
            "random_state=seed) (functional mechanism, no L2 penalty; X and y are clipped to "
            "the bounds).",
            "scikit-learn: Ridge(alpha=1.0), non-private.",
            "Preprocessing is done once, outside every timing.",
            f"skdp defaults in effect: DPRidge({DPRidge().get_params()})",
        ],
    )
    print("### Public bounds for diffprivlib\n")
    print("Per numeric feature, from public raw ranges mapped through the public scaling; "
          "one-hot features [0, 1]. Clipped share: diagnostic only (data-dependent, not used "
          "by any model).\n")
    rows = []
    for j, name in enumerate(names):
        if name in DIAMONDS_NUMERIC_SCALING:
            lo, hi = DIAMONDS_PUBLIC_RANGES[name]
            clipped = np.mean((X_train[:, j] < lower[j]) | (X_train[:, j] > upper[j]))
            rows.append([name, f"[{lo:g}, {hi:g}]", str(DIAMONDS_NUMERIC_SCALING[name]),
                         f"[{lower[j]:.3f}, {upper[j]:.3f}]", f"{clipped:.2%}"])
    clipped_y = np.mean((y_train < bounds_y[0]) | (y_train > bounds_y[1]))
    rows.append(["target (price)", f"[{PRICE_PUBLIC_RANGE[0]:g}, {PRICE_PUBLIC_RANGE[1]:g}] USD",
                 f"log(price) - {DIAMONDS_LOG_PRICE_CENTER}",
                 f"[{bounds_y[0]:.3f}, {bounds_y[1]:.3f}]", f"{clipped_y:.2%}"])
    print(markdown_table(["feature", "public raw range", "(f, center, scale)",
                          "bounds (scaled)", "train rows clipped"], rows))
    for note in (dpl.notes if dpl else []):
        print(f"\nNOTE: {note}")
    print(flush=True)

    caught: dict[str, int] = {}

    # scikit-learn reference --------------------------------------------------------------
    sk_times = []
    for _ in seeds:
        with collect_warnings(caught, "sklearn"):
            sk, t = timed(lambda: Ridge(alpha=1.0).fit(X_train, y_train))
        sk_times.append(t)
    sk_r2 = sk.score(X_test, y_test)
    sk_time = mean_or_nan(sk_times)
    print(f"scikit-learn Ridge(alpha=1.0): test R^2 {sk_r2:.4f}, fit {sk_time:.4f} s "
          f"(mean of {len(sk_times)})\n", flush=True)

    results = {}
    config_rows = []
    for eps in args.epsilons:
        r = {key: [] for key in ("skdp_r2", "skdp_last_r2", "skdp_time", "skdp_warm_time",
                                 "skdp_eps", "opacus_r2", "opacus_time", "opacus_mp_time",
                                 "opacus_eps", "dpl_r2", "dpl_time", "paired_diff")}
        skdp_by_seed = {}
        for seed in seeds:
            calibrate.cache_clear()
            est = DPRidge(privacy=(eps, DELTA), random_state=seed)
            with collect_warnings(caught, "skdp"):
                _, t = timed(lambda est=est: est.fit(X_train, y_train))
            r["skdp_time"].append(t)
            score = est.score(X_test, y_test)
            r["skdp_r2"].append(score)
            skdp_by_seed[seed] = score
            r["skdp_eps"].append(est.privacy_spent_[0])
            warm = DPRidge(privacy=(eps, DELTA), random_state=seed)
            with collect_warnings(caught, "skdp"):
                _, t = timed(lambda warm=warm: warm.fit(X_train, y_train))
            r["skdp_warm_time"].append(t)
            last = DPRidge(privacy=(eps, DELTA), random_state=seed, average=False)
            with collect_warnings(caught, "skdp"):
                last.fit(X_train, y_train)
            r["skdp_last_r2"].append(last.score(X_test, y_test))
        steps_per_epoch = est.n_steps_ // est.n_iter_
        r["skdp_sigma"] = est.noise_multiplier_

        if opacus is not None:
            for seed in opacus_seeds:
                with collect_warnings(caught, "opacus"):
                    res = fit_opacus(
                        X_train, y_train, loss="half_squared", epochs=est.n_iter_,
                        loader_batch_size=opacus_loader_batch_size(n, steps_per_epoch),
                        max_grad_norm=est.max_grad_norm, lr=est.eta0, l2=est.alpha / n,
                        epsilon=eps, delta=DELTA, seed=seed,
                    )
                pred = res.predict_logits(X_test)
                score = float(r2_score(y_test, pred)) if np.all(np.isfinite(pred)) else np.nan
                r["opacus_r2"].append(score)
                r["paired_diff"].append(skdp_by_seed[seed] - score)
                r["opacus_time"].append(res.fit_time)
                r["opacus_mp_time"].append(res.make_private_time)
                r["opacus_eps"].append(res.epsilon)
            r["opacus_sigma"] = res.noise_multiplier
            config_rows.append([
                fmt(eps, 2), str(est.n_iter_), str(est.batch_size_),
                f"{est.batch_size_ / n:.5f}", str(est.n_steps_), fmt(est.max_grad_norm, 2),
                fmt(est.eta0, 2), f"{res.sample_rate:.5f}",
                f"{res.sample_rate * n:.1f}", str(res.n_steps),
            ])

        if dpl is not None:
            for seed in seeds:
                model = dpl.LinearRegression(epsilon=eps, bounds_X=(lower, upper),
                                             bounds_y=bounds_y, random_state=seed)
                with collect_warnings(caught, "diffprivlib"):
                    _, t = timed(lambda model=model: model.fit(X_train, y_train))
                r["dpl_time"].append(t)
                r["dpl_r2"].append(model.score(X_test, y_test))
        r["load"] = load_average()
        results[eps] = r
        print(f"eps={eps:g}: skdp {mean_std(r['skdp_r2'])} ({mean_or_nan(r['skdp_time']):.2f} s)"
              f", Opacus {mean_std(r['opacus_r2'])} ({mean_or_nan(r['opacus_time']):.2f} s), "
              f"diffprivlib {mean_std(r['dpl_r2'])}; load average {r['load']}", flush=True)

    # Tables ------------------------------------------------------------------------------
    print("\n## Configuration shared by skdp and Opacus (read from the fitted skdp estimator)\n")
    print(markdown_table(
        ["eps", "epochs", "skdp B", "skdp q", "skdp steps", "clip", "lr", "Opacus q",
         "Opacus E[batch]", "Opacus steps"], config_rows) if config_rows else "(Opacus skipped)")

    print("\n## Test R^2 (mean ± std over seeds)\n")
    rows = []
    for eps, r in results.items():
        rows.append([
            fmt(eps, 2), mean_std(r["skdp_r2"]), mean_std(r["skdp_last_r2"]),
            mean_std(r["opacus_r2"]), mean_std(r["dpl_r2"], median=True, digits=3), f"{sk_r2:.4f}",
            mean_std(r["paired_diff"]), f"{sk_r2 - mean_or_nan(r['skdp_r2']):.4f}",
        ])
    print(markdown_table(
        ["eps", f"skdp (n={len(seeds)})", "skdp last iterate (average=False)",
         f"Opacus (n={len(opacus_seeds)})", f"diffprivlib (n={len(seeds)}, delta=0)",
         "sklearn (non-private)", "skdp - Opacus (paired seeds)", "sklearn - skdp"], rows))

    print("\n## Fit wall time, seconds: mean over seeds (min over seeds)\n")
    print("Ratios use the means (as asked) and, in brackets, the mins, which are the least "
          "affected by other processes on the machine (see the load column).\n")
    rows = []
    for eps, r in results.items():
        skdp_t, op_t = mean_or_nan(r["skdp_time"]), mean_or_nan(r["opacus_time"])
        skdp_m, op_m = min_or_nan(r["skdp_time"]), min_or_nan(r["opacus_time"])
        rows.append([
            fmt(eps, 2), mean_min(r["skdp_time"]), mean_min(r["skdp_warm_time"]),
            mean_min(r["opacus_time"], 2), fmt(mean_or_nan(r["opacus_mp_time"]), 2),
            mean_min(r["dpl_time"]), mean_min(sk_times, 4),
            f"{ratio(op_t, skdp_t)} ({ratio(op_m, skdp_m)})",
            f"{ratio(skdp_t, sk_time, 2)} ({ratio(skdp_m, min(sk_times), 2)})", r["load"],
        ])
    print(markdown_table(
        ["eps", "skdp (incl. calibration)", "skdp warm (calibration cached)",
         "Opacus (incl. make_private)", "of which make_private (mean)", "diffprivlib",
         "sklearn", "Opacus / skdp", "skdp / sklearn", "load avg after eps"], rows))

    print("\n## Privacy: epsilon proven by each library's own accountant (delta = 1e-5)\n")
    rows = []
    for eps, r in results.items():
        rows.append([
            fmt(eps, 2), mean_std(r["skdp_eps"], digits=4), fmt(r["skdp_sigma"], 4),
            mean_std(r["opacus_eps"], digits=4), fmt(r.get("opacus_sigma", float("nan")), 4),
            f"{eps:g} (delta=0)" if dpl is not None else "n/a",
        ])
    print(markdown_table(
        ["target eps", "skdp privacy_spent_[0] (PLD)", "skdp noise_multiplier_",
         "Opacus get_epsilon (PRV)", "Opacus noise_multiplier", "diffprivlib"], rows))

    # Per-epoch cost of skdp's engine --------------------------------------------------------
    epoch_ratio = epoch_ratio_long = float("nan")
    if not args.skip_epoch_cost:
        batch = est.batch_size_

        def make(privacy, max_iter):
            return DPRidge(privacy=privacy, max_iter=max_iter, batch_size=batch, random_state=0)

        with collect_warnings(caught, "skdp"):
            epoch_ratio, epoch_ratio_long = report_epoch_cost(make, X_train, y_train, batch,
                                                              steps_per_epoch)

    # Targets ---------------------------------------------------------------------------------
    print("\n## Targets (reported, not tuned for; MET/MISSED judged on means)\n")
    checks = []
    for eps, r in results.items():
        if r["opacus_r2"]:
            diff = mean_or_nan(r["paired_diff"])
            checks.append((f"eps={eps:g}: skdp R^2 >= Opacus (paired mean diff {diff:+.4f})",
                           diff >= 0))
            speedup = mean_or_nan(r["opacus_time"]) / mean_or_nan(r["skdp_time"])
            speedup_min = min_or_nan(r["opacus_time"]) / min_or_nan(r["skdp_time"])
            checks.append((f"eps={eps:g}: skdp fit >= 10x faster than Opacus ({speedup:.1f}x on "
                           f"means, {speedup_min:.1f}x on mins)", speedup >= 10))
        rel = mean_or_nan(r["skdp_time"]) / sk_time
        rel_min = min_or_nan(r["skdp_time"]) / min(sk_times)
        checks.append((f"eps={eps:g}: skdp fit not slower than sklearn ({rel:.2f}x sklearn on "
                       f"means, {rel_min:.2f}x on mins)", rel <= 1.0))
    if 1.0 in results:
        gap = sk_r2 - mean_or_nan(results[1.0]["skdp_r2"])
        checks.append((f"eps=1: skdp R^2 within 0.005 of sklearn (gap {gap:.4f}; the analogue "
                       "of 'within 0.5 accuracy points')", gap <= 0.005))
    if not math.isnan(epoch_ratio):
        checks.append((f"DP epoch <= 1.5x non-private epoch ({epoch_ratio:.2f}x with 20 vs 40 "
                       f"epochs; {epoch_ratio_long:.2f}x with 20 vs 120)", epoch_ratio <= 1.5))
    for text, ok in checks:
        print(f"- [{'MET' if ok else 'MISSED'}] {text}")
    print_warnings(caught)
    print(f"\nLoad average at the end (1/5/15 min): {load_average()}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
