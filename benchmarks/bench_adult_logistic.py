"""Benchmark: DP logistic regression on Adult -- skdp vs Opacus vs diffprivlib vs scikit-learn.

All competitors run side by side in one process on the same preprocessed data
(``adult_preprocessor()``, official train/test split). For each epsilon (delta = 1e-5):

- skdp ``DPLogisticRegression(privacy=(eps, 1e-5), random_state=seed)`` with its defaults;
- Opacus DP-SGD configured from the fitted skdp estimator (same epochs, steps per epoch,
  expected batch size, clip norm, learning rate, L2 penalty, zero init, (eps, delta)), PRV
  accountant, Poisson sampling; its last iterate is evaluated (Opacus does not average);
- diffprivlib ``LogisticRegression(epsilon=eps, data_norm=<public bound>)`` (pure eps-DP);
- scikit-learn ``LogisticRegression(max_iter=1000)``, the non-private reference.

It also measures the per-epoch cost of skdp's engine, DP vs non-private, calibration excluded.

Usage::

    python benchmarks/bench_adult_logistic.py            # full run (~10 min on 2 cores)
    python benchmarks/bench_adult_logistic.py --quick    # smoke run: eps=1, one seed
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

import numpy as np
from sklearn.linear_model import LogisticRegression

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
from skdp.datasets import ADULT_NUMERIC_SCALING, adult_preprocessor, load_adult  # noqa: E402
from skdp.linear_model import DPLogisticRegression  # noqa: E402

EPSILONS = (0.1, 0.5, 1.0, 2.0, 4.0)

# Public domain ranges of Adult's numeric columns (raw units), from the documented meaning of
# each column -- never from the records. Used only for diffprivlib's data_norm.
ADULT_PUBLIC_RANGES = {
    "age": (17.0, 90.0),  # the extraction kept people over 16; the census top-codes age at 90
    "fnlwgt": (1e4, 1.5e6),  # census sampling weight, documented as about 1e4..1.5e6
    "education_num": (1.0, 16.0),  # coded 1..16
    "capital_gain": (0.0, 99_999.0),  # dollars, top-coded at 99,999
    "capital_loss": (0.0, 1e5),  # dollars; same public cap as capital_gain
    "hours_per_week": (1.0, 99.0),  # 1..99
}
N_CATEGORICAL = 8  # one-hot blocks: at most one 1 each (missing/unknown -> all zeros)


def scaled_abs_max(kind: str, center: float, scale: float, lo: float, hi: float) -> float:
    f = {"linear": lambda v: v, "log": math.log, "log1p": math.log1p}[kind]
    return max(abs((f(lo) - center) / scale), abs((f(hi) - center) / scale))


def public_data_norm() -> tuple[float, dict[str, float]]:
    """sqrt(8 one-hot ones + sum over numeric columns of the max squared scaled value)."""
    per_column = {
        name: scaled_abs_max(kind, center, scale, *ADULT_PUBLIC_RANGES[name])
        for name, (kind, center, scale) in ADULT_NUMERIC_SCALING.items()
    }
    return math.sqrt(N_CATEGORICAL + sum(v * v for v in per_column.values())), per_column


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

    X_train_raw, X_test_raw, y_train, y_test = load_adult(return_X_y=True)
    pre = adult_preprocessor().fit(X_train_raw)  # data-independent: fit only records shapes
    X_train, X_test = pre.transform(X_train_raw), pre.transform(X_test_raw)
    n, d = X_train.shape
    data_norm, per_column = public_data_norm()
    row_norms = np.linalg.norm(X_train, axis=1)

    print_header(
        "Adult: DP logistic regression -- skdp vs Opacus vs diffprivlib vs scikit-learn",
        [
            f"Data: Adult, official split, {n} train / {X_test.shape[0]} test rows, {d} features "
            "after adult_preprocessor() (public constants; fitted on train, learns nothing).",
            f"Epsilons: {args.epsilons}, delta = {DELTA:g} (diffprivlib: delta = 0, pure eps-DP).",
            f"Seeds: skdp and diffprivlib {seeds}; Opacus {opacus_seeds} only "
            f"(--opacus-seeds={args.opacus_seeds}: Opacus is much slower); scikit-learn is "
            "deterministic (timed over the same number of repetitions as --seeds).",
            "skdp: DPLogisticRegression(privacy=(eps, 1e-5), random_state=seed), all defaults. "
            "Fit time includes noise calibration: skdp.accounting.calibrate (an lru_cache) is "
            "cleared before every timed fit, since Opacus calibrates in every fit too; "
            "'skdp warm' re-fits the same seed with the cache warm (training only).",
            "Opacus: nn.Linear(d, 1), zero init, BCEWithLogitsLoss(mean), SGD(lr=skdp eta0, "
            "weight_decay=1/(C n) on the weight only -- the same L2 gradient skdp adds after the "
            "noise), PrivacyEngine(accountant='prv').make_private_with_epsilon(poisson_sampling="
            "True, max_grad_norm=skdp max_grad_norm, epochs=skdp n_iter_, target (eps, 1e-5)) "
            "over DataLoader(TensorDataset, batch_size=ceil(n / skdp steps per epoch)), which "
            "gives Opacus the same steps per epoch and expected batch size. Last iterate "
            "(Opacus has no iterate averaging). Fit time includes make_private_with_epsilon.",
            f"diffprivlib: LogisticRegression(epsilon=eps, data_norm={data_norm:.4f}, "
            "random_state=seed) (objective perturbation; rows are clipped to data_norm).",
            "scikit-learn: LogisticRegression(max_iter=1000), non-private.",
            "Preprocessing is done once, outside every timing.",
            f"skdp defaults in effect: DPLogisticRegression({DPLogisticRegression().get_params()})",
        ],
    )
    print("### Public data_norm for diffprivlib\n")
    print("Bound on ||x|| after adult_preprocessor(), from public ranges of the raw columns "
          "(not from the data): sqrt(8 one-hot ones + sum of squared max |scaled value|).\n")
    print(markdown_table(
        ["column", "public raw range", "(f, center, scale)", "max |scaled|"],
        [[name, f"[{lo:g}, {hi:g}]", str(ADULT_NUMERIC_SCALING[name]), f"{per_column[name]:.3f}"]
         for name, (lo, hi) in ADULT_PUBLIC_RANGES.items()],
    ))
    print(f"\ndata_norm = sqrt({N_CATEGORICAL} + {sum(v * v for v in per_column.values()):.3f})"
          f" = {data_norm:.4f}. Diagnostic only (data-dependent, not used by any model): "
          f"max row norm in train = {row_norms.max():.4f}, rows above data_norm = "
          f"{int((row_norms > data_norm).sum())}.")
    for note in (dpl.notes if dpl else []):
        print(f"\nNOTE: {note}")
    print(flush=True)

    caught: dict[str, int] = {}

    # scikit-learn reference --------------------------------------------------------------
    sk_times = []
    for _ in seeds:
        with collect_warnings(caught, "sklearn"):
            sk, t = timed(lambda: LogisticRegression(max_iter=1000).fit(X_train, y_train))
        sk_times.append(t)
    sk_acc = sk.score(X_test, y_test)
    sk_time = mean_or_nan(sk_times)
    print(f"scikit-learn LogisticRegression(max_iter=1000): test accuracy {sk_acc:.4f}, "
          f"fit {sk_time:.3f} s (mean of {len(sk_times)}), n_iter_={int(sk.n_iter_[0])}\n",
          flush=True)

    results = {}
    config_rows = []
    for eps in args.epsilons:
        r = {key: [] for key in ("skdp_acc", "skdp_last_acc", "skdp_time", "skdp_warm_time",
                                 "skdp_eps", "opacus_acc", "opacus_time", "opacus_mp_time",
                                 "opacus_eps", "dpl_acc", "dpl_time", "paired_diff")}
        skdp_by_seed = {}
        for seed in seeds:
            calibrate.cache_clear()
            est = DPLogisticRegression(privacy=(eps, DELTA), random_state=seed)
            with collect_warnings(caught, "skdp"):
                _, t = timed(lambda est=est: est.fit(X_train, y_train))
            r["skdp_time"].append(t)
            acc = est.score(X_test, y_test)
            r["skdp_acc"].append(acc)
            skdp_by_seed[seed] = acc
            r["skdp_eps"].append(est.privacy_spent_[0])
            warm = DPLogisticRegression(privacy=(eps, DELTA), random_state=seed)
            with collect_warnings(caught, "skdp"):
                _, t = timed(lambda warm=warm: warm.fit(X_train, y_train))
            r["skdp_warm_time"].append(t)
            last = DPLogisticRegression(privacy=(eps, DELTA), random_state=seed, average=False)
            with collect_warnings(caught, "skdp"):
                last.fit(X_train, y_train)
            r["skdp_last_acc"].append(last.score(X_test, y_test))
        steps_per_epoch = est.n_steps_ // est.n_iter_
        r["skdp_sigma"] = est.noise_multiplier_

        if opacus is not None:
            for seed in opacus_seeds:
                with collect_warnings(caught, "opacus"):
                    res = fit_opacus(
                        X_train, y_train, loss="logistic", epochs=est.n_iter_,
                        loader_batch_size=opacus_loader_batch_size(n, steps_per_epoch),
                        max_grad_norm=est.max_grad_norm, lr=est.eta0,
                        l2=0.0 if math.isinf(est.C) else 1.0 / (est.C * n),
                        epsilon=eps, delta=DELTA, seed=seed,
                    )
                acc = float(((res.predict_logits(X_test) > 0).astype(int) == y_test).mean())
                r["opacus_acc"].append(acc)
                r["paired_diff"].append(skdp_by_seed[seed] - acc)
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
                model = dpl.LogisticRegression(epsilon=eps, data_norm=data_norm,
                                               random_state=seed)
                with collect_warnings(caught, "diffprivlib"):
                    _, t = timed(lambda model=model: model.fit(X_train, y_train))
                r["dpl_time"].append(t)
                r["dpl_acc"].append(model.score(X_test, y_test))
        r["load"] = load_average()
        results[eps] = r
        print(f"eps={eps:g}: skdp {mean_std(r['skdp_acc'])} ({mean_or_nan(r['skdp_time']):.2f} s)"
              f", Opacus {mean_std(r['opacus_acc'])} ({mean_or_nan(r['opacus_time']):.2f} s), "
              f"diffprivlib {mean_std(r['dpl_acc'])}; load average {r['load']}", flush=True)

    # Tables ------------------------------------------------------------------------------
    print("\n## Configuration shared by skdp and Opacus (read from the fitted skdp estimator)\n")
    print(markdown_table(
        ["eps", "epochs", "skdp B", "skdp q", "skdp steps", "clip", "lr", "Opacus q",
         "Opacus E[batch]", "Opacus steps"], config_rows) if config_rows else "(Opacus skipped)")

    print("\n## Test accuracy (mean ± std over seeds)\n")
    rows = []
    for eps, r in results.items():
        rows.append([
            fmt(eps, 2), mean_std(r["skdp_acc"]), mean_std(r["skdp_last_acc"]),
            mean_std(r["opacus_acc"]), mean_std(r["dpl_acc"]), f"{sk_acc:.4f}",
            mean_std(r["paired_diff"], scale=100, digits=2),
            f"{(sk_acc - mean_or_nan(r['skdp_acc'])) * 100:.2f}",
        ])
    print(markdown_table(
        ["eps", f"skdp (n={len(seeds)})", "skdp last iterate (average=False)",
         f"Opacus (n={len(opacus_seeds)})", f"diffprivlib (n={len(seeds)}, delta=0)",
         "sklearn (non-private)", "skdp - Opacus, points (paired seeds)",
         "sklearn - skdp, points"], rows))

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
            mean_min(r["dpl_time"]), mean_min(sk_times, 3),
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
            return DPLogisticRegression(privacy=privacy, max_iter=max_iter, batch_size=batch,
                                        random_state=0)

        with collect_warnings(caught, "skdp"):
            epoch_ratio, epoch_ratio_long = report_epoch_cost(make, X_train, y_train, batch,
                                                              steps_per_epoch)

    # Targets ---------------------------------------------------------------------------------
    print("\n## Targets (reported, not tuned for; MET/MISSED judged on means)\n")
    checks = []
    for eps, r in results.items():
        if r["opacus_acc"]:
            diff = mean_or_nan(r["paired_diff"]) * 100
            checks.append((f"eps={eps:g}: skdp accuracy >= Opacus (paired mean diff "
                           f"{diff:+.2f} points)", diff >= 0))
            speedup = mean_or_nan(r["opacus_time"]) / mean_or_nan(r["skdp_time"])
            speedup_min = min_or_nan(r["opacus_time"]) / min_or_nan(r["skdp_time"])
            checks.append((f"eps={eps:g}: skdp fit >= 10x faster than Opacus ({speedup:.1f}x on "
                           f"means, {speedup_min:.1f}x on mins)", speedup >= 10))
        rel = mean_or_nan(r["skdp_time"]) / sk_time
        rel_min = min_or_nan(r["skdp_time"]) / min(sk_times)
        checks.append((f"eps={eps:g}: skdp fit not slower than sklearn ({rel:.2f}x sklearn on "
                       f"means, {rel_min:.2f}x on mins)", rel <= 1.0))
    if 1.0 in results:
        gap = (sk_acc - mean_or_nan(results[1.0]["skdp_acc"])) * 100
        checks.append((f"eps=1: skdp within 0.5 points of sklearn (gap {gap:.2f} points)",
                       gap <= 0.5))
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
