"""Benchmark: DP ridge regression on diamonds -- skdp vs Opacus vs diffprivlib vs scikit-learn.

All competitors run side by side in one process on the same data: ``diamonds_preprocessor()``
features, target ``scale_diamonds_target(price)`` (log price minus a public centre), and a fixed
split ``train_test_split(test_size=0.2, random_state=0)``. The driver, which also measures the
per-epoch cost of skdp's engine, is ``_bench_common.run_comparison``. For each epsilon
(delta = 1e-5):

- skdp ``DPRidge(privacy=(eps, 1e-5), random_state=seed)`` with its defaults;
- Opacus DP-SGD configured from the fitted skdp estimator (same epochs, steps per epoch,
  expected batch size, clip norm, learning rate, L2 penalty, zero init, (eps, delta)), loss
  ``0.5 * MSELoss`` so that per-example gradients equal skdp's ``residual * [x, 1]``, PRV
  accountant, Poisson sampling; its last iterate is evaluated (Opacus does not average);
- diffprivlib ``LinearRegression(epsilon=eps, bounds_X, bounds_y)`` with public bounds
  (pure eps-DP; no L2 penalty in diffprivlib);
- scikit-learn ``Ridge(alpha=1.0)``, the non-private reference.

Usage::

    python benchmarks/bench_diamonds_ridge.py            # full run (~10 min on 2 cores)
    python benchmarks/bench_diamonds_ridge.py --quick    # smoke run: eps=1, one seed
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np
from sklearn.linear_model import Ridge
from sklearn.metrics import r2_score
from sklearn.model_selection import train_test_split

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _bench_common as bench  # noqa: E402

from skdp.datasets import (  # noqa: E402
    DIAMONDS_LOG_PRICE_CENTER,
    DIAMONDS_NUMERIC_SCALING,
    diamonds_preprocessor,
    load_diamonds,
    scale_diamonds_target,
)
from skdp.linear_model import DPRidge  # noqa: E402

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


def main(argv=None) -> int:
    args = bench.parse_args(__doc__.split("\n\n")[0], argv)
    opacus = bench.try_import("opacus")
    dpl = bench.import_diffprivlib()

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

    bench.print_header(
        "diamonds: DP ridge regression -- skdp vs Opacus vs diffprivlib vs scikit-learn",
        [
            f"Data: diamonds, train_test_split(test_size=0.2, random_state=0): {n} train / "
            f"{X_test.shape[0]} test rows, {d} features after diamonds_preprocessor() (public "
            "constants); target scale_diamonds_target(price) = log(price) - "
            f"{DIAMONDS_LOG_PRICE_CENTER}. Metric: test R^2 on that target.",
            *bench.protocol_lines(args),
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
    print(bench.markdown_table(["feature", "public raw range", "(f, center, scale)",
                          "bounds (scaled)", "train rows clipped"], rows))

    def opacus_r2(pred: np.ndarray, y: np.ndarray) -> float:
        return float(r2_score(y, pred)) if np.all(np.isfinite(pred)) else np.nan

    def eps1_check(gap: float) -> tuple[str, bool]:
        return (f"eps=1: skdp R^2 within 0.005 of sklearn (gap {gap:.4f}; the analogue "
                "of 'within 0.5 accuracy points')", gap <= 0.005)

    task = bench.ComparisonTask(
        skdp_class=DPRidge,
        sklearn_name="Ridge(alpha=1.0)",
        make_sklearn=lambda: Ridge(alpha=1.0),
        make_diffprivlib=lambda dpl, eps, seed: dpl.LinearRegression(
            epsilon=eps, bounds_X=(lower, upper), bounds_y=bounds_y, random_state=seed),
        opacus_loss="half_squared",
        opacus_l2=lambda est, n: est.alpha / n,
        opacus_score=opacus_r2,
        metric="R^2",
        eps1_check=eps1_check,
        dpl_stats={"median": True, "digits": 3},
        sklearn_time_digits=4,
    )
    return bench.run_comparison(task, args, X_train, y_train, X_test, y_test, opacus, dpl)


if __name__ == "__main__":
    raise SystemExit(main())
