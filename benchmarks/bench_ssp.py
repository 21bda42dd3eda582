"""DPRidge by sufficient statistics (AdaSSP) against DP-SGD DPRidge and scikit-learn's Ridge.

For every regression set available offline, test R^2 (mean +- std over seeds) and fit time of

- ``DPRidge(optimizer='ssp')`` (AdaSSP, ``shared/specs/adassp.md``),
- ``DPRidge()`` with its default optimizer (``noisy_sgd``),
- scikit-learn's ``Ridge`` (non-private reference),

at epsilon in {0.1, 0.5, 1, 4, inf}, delta 1e-5. Public bounds only:

- diamonds: skdp's public preprocessor (fixed constants) and target scale
  (``log(price) - 7.8``). B_y = 2.1 from the documented price range of the data set
  (326 to 18,823 USD: -2.01 to 2.04 after scaling). B_x = sqrt(6 * 3^2 + 3): each of the 6
  numeric columns taken as at most 3 public units, each of the 3 one-hot blocks 1.
- rand_hie, ames (``shared/data/tabular``) and scikit-learn's bundled diabetes (raw features):
  the private pipeline of ``bench_pipeline.py`` (DP imputer, DP standard scaler, DP one-hot
  encoder, and a DP standard scaler on the target through ``TransformedTargetRegressor``;
  30% of the budget to the preprocessing, the model calibrated jointly with it). B_x =
  sqrt(3^2 * n_numeric + n_categorical): standardised columns taken as at most 3 units, one
  per one-hot block; B_y = 3 standardised units. Rows and targets beyond the bounds are clipped,
  which costs utility, never privacy.
- fertility and nass_cds are classification tables; California housing is not bundled.

Times: the whole fit that is compared (the model on diamonds; the whole pipeline elsewhere,
against scikit-learn's pipeline), median over seeds, on whatever this machine is.

Also a prototype, not shipped: logistic regression by SSP (spec §10.4 "skdp prototype without
AIM") on Adult: labels to +-1, the same three releases with B_y = 1, then
``theta = (a1 / (-2 a2)) (S^ + lambda I + alpha_L D)^-1 b^`` with the degree-2 Chebyshev fit of
``log sigmoid`` on [-6, 6] and ``alpha_L = 1 / (2 |a2| C)``, C = 1; against the default
``DPLogisticRegression`` and scikit-learn's ``LogisticRegression``.

Usage::

    OMP_NUM_THREADS=1 python benchmarks/bench_ssp.py              # ~10 min on 2 cores
    OMP_NUM_THREADS=1 python benchmarks/bench_ssp.py --seeds 1 --sets diamonds
"""

from __future__ import annotations

import argparse
import math
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.compose import TransformedTargetRegressor
from sklearn.datasets import load_diabetes
from sklearn.linear_model import LogisticRegression, Ridge
from sklearn.metrics import r2_score

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _bench_common as bench  # noqa: E402
import _datasets  # noqa: E402
from bench_pipeline import (  # noqa: E402
    Table,
    _split,
    load_table,
    private_preprocessor,
    sklearn_pipeline,
)
from sklearn.compose import ColumnTransformer  # noqa: E402
from sklearn.pipeline import make_pipeline  # noqa: E402

from skdp import PrivacyWarning  # noqa: E402
from skdp.linear_model import DPLogisticRegression, DPRidge  # noqa: E402
from skdp.pipeline import make_private_pipeline  # noqa: E402
from skdp.preprocessing import DPSimpleImputer, DPStandardScaler  # noqa: E402

DELTA = 1e-5
EPSILONS = (0.1, 0.5, 1.0, 4.0, math.inf)
COLUMN_CAP = 3.0  # public cap of a standardised column, in its units
DIAMONDS_BX = math.sqrt(6 * COLUMN_CAP**2 + 3)
# adult_preprocessor: 6 numeric columns on public unit-ish scales (taken as at most 3 units each)
# and 8 one-hot blocks (1 each)
ADULT_BX = math.sqrt(6 * COLUMN_CAP**2 + 8)
DIAMONDS_BY = 2.1
DEFAULT_DATA_DIR = Path(__file__).resolve().parents[2] / "shared" / "data"


def privacy(eps: float) -> tuple[float, float]:
    return (eps, DELTA) if math.isfinite(eps) else (math.inf, 0)


# --- regression ---------------------------------------------------------------------------------
def diabetes_table() -> Table:
    X, y = load_diabetes(return_X_y=True, as_frame=True, scaled=False)
    return _split("diabetes", X, np.asarray(y, dtype=float), "regression",
                  ["sklearn bundled, raw (unscaled) features"])


def fit_diamonds(method: str, eps: float, seed: int, data):
    X_train, X_test, y_train, y_test = data
    if method == "ridge":
        model = Ridge()
    elif method == "ssp":
        model = DPRidge(privacy(eps), optimizer="ssp", max_row_norm=DIAMONDS_BX,
                        target_bound=DIAMONDS_BY, random_state=seed)
    else:
        model = DPRidge(privacy(eps), random_state=seed)
    start = time.perf_counter()
    model.fit(X_train, y_train)
    return r2_score(y_test, model.predict(X_test)), time.perf_counter() - start


def table_row_bound(table: Table) -> float:
    """Public ``B_x`` of a raw table after its preprocessing: standardised columns taken as at
    most ``COLUMN_CAP`` units, one-hot blocks 1 each."""
    return math.sqrt(COLUMN_CAP**2 * len(table.numeric) + len(table.categorical))


def table_model(method: str, table: Table):
    if method == "ssp":
        ridge = DPRidge(optimizer="ssp", max_row_norm=table_row_bound(table),
                        target_bound=COLUMN_CAP)
    else:
        ridge = DPRidge()
    return TransformedTargetRegressor(ridge, transformer=DPStandardScaler(), check_inverse=False)


def preprocessor(table: Table) -> ColumnTransformer:
    """bench_pipeline's private preprocessor; without a one-hot branch when there are no
    categorical columns (an unfitted empty branch trips the pipeline's record check)."""
    if table.categorical:
        return private_preprocessor(table)
    return ColumnTransformer([
        ("num", make_pipeline(DPSimpleImputer(), DPStandardScaler()), table.numeric)])


def fit_table(method: str, eps: float, seed: int, table: Table):
    if method == "ridge":
        model = sklearn_pipeline(table)
    else:
        model = make_private_pipeline(preprocessor(table), table_model(method, table),
                                      privacy=privacy(eps), random_state=seed)
    start = time.perf_counter()
    model.fit(table.X_train, table.y_train)
    seconds = time.perf_counter() - start
    if method != "ridge" and math.isfinite(eps):
        assert model.privacy_spent_[0] <= eps, model.privacy_spent_
    return r2_score(table.y_test, model.predict(table.X_test)), seconds


def run_regression(args) -> list[list[str]]:
    rows = []
    sets = {}
    for name in args.sets:
        if name == "diamonds":
            sets[name] = (fit_diamonds, _datasets.diamonds())
        elif name == "diabetes":
            sets[name] = (fit_table, diabetes_table())
        else:
            sets[name] = (fit_table, load_table(name, args.data_dir))
    for name, (fit, data) in sets.items():
        ridge_r2, ridge_s = fit("ridge", math.inf, 0, data)
        n = len(data[0]) if name == "diamonds" else len(data.X_train)
        for eps in EPSILONS:
            cells = {}
            for method in ("ssp", "noisy_sgd"):
                scores, times = [], []
                for seed in range(args.seeds):
                    try:
                        r2, seconds = fit(method, eps, seed, data)
                    except FloatingPointError:  # a diverged fit counts, as NaN
                        r2, seconds = math.nan, math.nan
                    scores.append(r2)
                    times.append(seconds)
                cells[method] = (scores, float(np.nanmedian(times)))
            rows.append([
                name, str(n), f"{eps:g}",
                bench.mean_std(cells["ssp"][0], 3), bench.mean_std(cells["noisy_sgd"][0], 3),
                f"{ridge_r2:.3f}",
                f"{cells['ssp'][1]:.3f} ({cells['ssp'][1] / ridge_s:.1f}x)",
                f"{cells['noisy_sgd'][1]:.3f} ({cells['noisy_sgd'][1] / ridge_s:.1f}x)",
                f"{ridge_s:.3f}",
            ])
            print(" | ".join(rows[-1]), flush=True)
    return rows


# --- SSP logistic prototype (spec §10.4), not shipped -------------------------------------------
CHEB_R = 6.0


def chebyshev_quadratic(radius: float) -> tuple[float, float, float]:
    """Monomial coefficients (a0, a1, a2) of the degree-2 Chebyshev interpolant of log sigmoid
    on [-radius, radius] (3 Chebyshev nodes)."""
    nodes = radius * np.cos(np.pi * (np.arange(3) + 0.5) / 3)
    values = -np.logaddexp(0.0, -nodes)
    a2, a1, a0 = np.polyfit(nodes, values, 2)
    return a0, a1, a2


def ssp_logistic(X, y, eps: float, seed: int, row_bound: float, C: float = 1.0):
    """Fit by the three SSP releases on +-1 labels; returns (coef, intercept)."""
    _, a1, a2 = chebyshev_quadratic(CHEB_R)
    labels = np.where(y == 1, 1.0, -1.0)  # public classes {0, 1}
    reg = DPRidge(privacy(eps), optimizer="ssp", alpha=1.0 / (2 * abs(a2) * C),
                  max_row_norm=row_bound, target_bound=1.0, random_state=seed).fit(X, labels)
    scale = a1 / (-2 * a2)
    return scale * reg.coef_, scale * reg.intercept_


def run_logistic(args) -> list[list[str]]:
    X_train, X_test, y_train, y_test = _datasets.adult()
    row_bound = ADULT_BX
    sk = LogisticRegression(max_iter=1000).fit(X_train, y_train).score(X_test, y_test)
    rows = []
    _, a1, a2 = chebyshev_quadratic(CHEB_R)
    print(f"Chebyshev R={CHEB_R:g}: a1={a1:.5f}, a2={a2:.5f}, scale {a1 / (-2 * a2):.3f}")
    for eps in (0.1, 1.0, 4.0, math.inf):
        ssp_acc, dp_acc = [], []
        for seed in range(args.seeds):
            coef, intercept = ssp_logistic(X_train, y_train, eps, seed, row_bound)
            ssp_acc.append(np.mean(((X_test @ coef + intercept) > 0) == (y_test == 1)))
            clf = DPLogisticRegression(privacy(eps), random_state=seed).fit(X_train, y_train)
            dp_acc.append(clf.score(X_test, y_test))
        rows.append([f"{eps:g}", bench.mean_std(ssp_acc, 4), bench.mean_std(dp_acc, 4),
                     f"{sk:.4f}"])
        print(" | ".join(rows[-1]), flush=True)
    return rows


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--sets", nargs="+",
                        default=["diamonds", "rand_hie", "ames", "diabetes"])
    parser.add_argument("--data-dir", type=Path, default=DEFAULT_DATA_DIR)
    parser.add_argument("--no-logistic", action="store_true")
    args = parser.parse_args(argv)
    warnings.simplefilter("ignore", PrivacyWarning)
    bench.print_header("DPRidge by sufficient statistics (AdaSSP)", [
        f"delta={DELTA:g}; {args.seeds} seeds; R^2 on the test split, mean +- std",
        "times: median fit seconds (x scikit-learn's)",
    ])
    rows = run_regression(args)
    print()
    print(bench.markdown_table(
        ["set", "n train", "eps", "ssp R^2", "noisy_sgd R^2", "Ridge R^2", "ssp fit s",
         "noisy_sgd fit s", "Ridge fit s"], rows))
    if not args.no_logistic:
        print("\nSSP logistic prototype on Adult (accuracy; not shipped)")
        rows = run_logistic(args)
        print(bench.markdown_table(
            ["eps", "SSP logistic", "DPLogisticRegression", "LogisticRegression"], rows))


if __name__ == "__main__":
    pd.set_option("display.width", 200)
    main()
