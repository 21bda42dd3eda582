"""Benchmark: DP logistic regression on Adult -- skdp vs Opacus vs diffprivlib vs scikit-learn.

All competitors run side by side in one process on the same preprocessed data
(``adult_preprocessor()``, official train/test split), driven by
``_bench_common.run_comparison`` (which also measures the per-epoch cost of skdp's engine).
For each epsilon (delta = 1e-5):

- skdp ``DPLogisticRegression(privacy=(eps, 1e-5), random_state=seed)`` with its defaults;
- Opacus DP-SGD configured from the fitted skdp estimator (same epochs, steps per epoch,
  expected batch size, clip norm, learning rate, L2 penalty, zero init, (eps, delta)), PRV
  accountant, Poisson sampling; its last iterate is evaluated (Opacus does not average);
- diffprivlib ``LogisticRegression(epsilon=eps, data_norm=<public bound>)`` (pure eps-DP);
- scikit-learn ``LogisticRegression(max_iter=1000)``, the non-private reference.

Usage::

    python benchmarks/bench_adult_logistic.py            # full run (~10 min on 2 cores)
    python benchmarks/bench_adult_logistic.py --quick    # smoke run: eps=1, one seed
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np
from sklearn.linear_model import LogisticRegression

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _bench_common as bench  # noqa: E402

from skdp.datasets import ADULT_NUMERIC_SCALING, adult_preprocessor, load_adult  # noqa: E402
from skdp.linear_model import DPLogisticRegression  # noqa: E402

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


def main(argv=None) -> int:
    args = bench.parse_args(__doc__.split("\n\n")[0], argv)
    opacus = bench.try_import("opacus")
    dpl = bench.import_diffprivlib()

    X_train_raw, X_test_raw, y_train, y_test = load_adult(return_X_y=True)
    pre = adult_preprocessor().fit(X_train_raw)  # data-independent: fit only records shapes
    X_train, X_test = pre.transform(X_train_raw), pre.transform(X_test_raw)
    n, d = X_train.shape
    data_norm, per_column = public_data_norm()
    row_norms = np.linalg.norm(X_train, axis=1)

    bench.print_header(
        "Adult: DP logistic regression -- skdp vs Opacus vs diffprivlib vs scikit-learn",
        [
            f"Data: Adult, official split, {n} train / {X_test.shape[0]} test rows, {d} features "
            "after adult_preprocessor() (public constants; fitted on train, learns nothing).",
            *bench.protocol_lines(args),
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
    print(bench.markdown_table(
        ["column", "public raw range", "(f, center, scale)", "max |scaled|"],
        [[name, f"[{lo:g}, {hi:g}]", str(ADULT_NUMERIC_SCALING[name]), f"{per_column[name]:.3f}"]
         for name, (lo, hi) in ADULT_PUBLIC_RANGES.items()],
    ))
    print(f"\ndata_norm = sqrt({N_CATEGORICAL} + {sum(v * v for v in per_column.values()):.3f})"
          f" = {data_norm:.4f}. Diagnostic only (data-dependent, not used by any model): "
          f"max row norm in train = {row_norms.max():.4f}, rows above data_norm = "
          f"{int((row_norms > data_norm).sum())}.")

    def eps1_check(gap: float) -> tuple[str, bool]:
        gap *= 100
        return f"eps=1: skdp within 0.5 points of sklearn (gap {gap:.2f} points)", gap <= 0.5

    task = bench.ComparisonTask(
        skdp_class=DPLogisticRegression,
        sklearn_name="LogisticRegression(max_iter=1000)",
        make_sklearn=lambda: LogisticRegression(max_iter=1000),
        make_diffprivlib=lambda dpl, eps, seed: dpl.LogisticRegression(
            epsilon=eps, data_norm=data_norm, random_state=seed),
        opacus_loss="logistic",
        opacus_l2=lambda est, n: 0.0 if math.isinf(est.C) else 1.0 / (est.C * n),
        opacus_score=lambda logits, y: float(((logits > 0).astype(int) == y).mean()),
        metric="accuracy",
        eps1_check=eps1_check,
        diff_scale=100,
        diff_digits=2,
        diff_unit="points",
        sklearn_time_digits=3,
        sklearn_extra=lambda sk: f", n_iter_={int(sk.n_iter_[0])}",
    )
    return bench.run_comparison(task, args, X_train, y_train, X_test, y_test, opacus, dpl)


if __name__ == "__main__":
    raise SystemExit(main())
