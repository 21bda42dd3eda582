"""Logistic regression by sufficient statistics (SSP) against DP-SGD and scikit-learn.

The issue: "Measure the SSP idea for logistic regression too (Ferrando & Sheldon, TMLR 2025) and
ship it only if it wins somewhere." This measures the spec's "skdp prototype without AIM"
(``shared/specs/adassp.md`` §10.4): AdaSSP's three releases (lambda_min(X^T X), X^T X, X^T y of
clipped rows) with the labels mapped to +-1 from the public classes (so ``B_y = 1``), then

    theta = (a1 / (-2 a2)) (S^ + lambda I + alpha_L D)^-1 b^,

with ``a0 + a1 s + a2 s^2`` the degree-2 Chebyshev interpolant of ``log sigmoid`` on [-R, R]
(R = 6: a1 = 0.5, a2 = -0.07076, scale 3.533) and ``alpha_L = 1 / (2 |a2| C)``, C = 1 (the
penalty of scikit-learn's default ``LogisticRegression``). The rescaling by ``a1 / (-2 a2)``
changes probabilities only: accuracy (threshold 0 of the decision) and ROC AUC are those of
``DPRidge(optimizer='ssp')`` fitted on the +-1 labels, which is what is run. Contenders:

- ``ssp auto``: ``DPRidge(optimizer='ssp', max_row_norm='auto')``. The public scale (row bound,
  the targets' centre and half-range) is found by skdp's DP search, composed with the three
  releases into the same (eps, delta); DPRidge has no way to declare ``B_y = 1`` public
  together with ``max_row_norm='auto'``, so a little budget goes to the targets' quantiles.
  Refused (``n/a``) where n is too small for the search (breast_cancer).
- ``ssp public``: ``DPRidge(optimizer='ssp', max_row_norm=B_x, target_bound=1)``, the whole
  budget to the releases. ``B_x`` from the preparation, never from the rows: adult, skdp's
  public preprocessing, ``sqrt(6 * 3^2 + 8)`` (6 numeric columns taken as at most 3 public
  units, 8 one-hot blocks); adult_rownorm, 1 (rows scaled to the unit
  ball by construction); nass_cds, fertility (StandardScaler + OneHotEncoder) and
  breast_cancer (StandardScaler), ``sqrt(3^2 n_numeric + n_categorical)``.
- ``DP-SGD``: ``DPLogisticRegression(privacy, random_state=seed)`` with all its defaults.
- ``LR``: scikit-learn's ``LogisticRegression(max_iter=1000)``, non-private reference.

Every private fit must report ``privacy_spent_ <= (eps, 1e-5)``; the script asserts it and
prints the spent epsilon of both private families. Data: the binary sets of the registry
(``harness/data.py``). Times: median fit seconds over seeds (the first fit at each epsilon also
calibrates the noise, which skdp caches after that).

Usage::

    python benchmarks/bench_ssp_logistic.py --threads 1            # ~2-3 min on 2 shared cores
    python benchmarks/bench_ssp_logistic.py --threads 1 --seeds 3 --datasets adult,nass_cds
"""

from __future__ import annotations

from harness.threads import pin_threads  # first: the thread counts before numpy loads

_THREADS = pin_threads()

import argparse  # noqa: E402
import math  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402

import numpy as np  # noqa: E402
from harness import cli, data  # noqa: E402
from harness.grids import privacy  # noqa: E402
from harness.results import Run, Study  # noqa: E402
from harness.tables import mean_std  # noqa: E402
from sklearn.linear_model import LogisticRegression  # noqa: E402
from sklearn.metrics import roc_auc_score  # noqa: E402

from skdp import PrivacyWarning  # noqa: E402
from skdp.linear_model import DPLogisticRegression, DPRidge  # noqa: E402

STUDY = Study(
    name="ssp_logistic",
    title="Logistic regression by sufficient statistics",
    script="benchmarks/bench_ssp_logistic.py",
    status="not shipped",
    measures="The SSP idea for logistic regression (Ferrando & Sheldon; the spec's prototype "
    "without AIM): AdaSSP's three releases on +-1 labels and a Chebyshev quadratic of log "
    "sigmoid, with the row scale found privately ('auto') or public, against "
    "DPLogisticRegression's defaults and scikit-learn, on five binary sets; test accuracy and "
    "ROC AUC.",
    conclusion="Not shipped: SSP never wins on accuracy beyond seed noise except +0.11 points "
    "on row-normalised Adult at epsilon 4, loses 2.6-7.8 points on Adult at epsilon <= 1 and "
    "collapses on nass_cds' rare class.",
)
DELTA = 1e-5
COLUMN_CAP = 3.0  # public cap of a standardised column, in its units
# adult_preprocessor: 6 numeric columns on public unit-ish scales (taken as at most 3 units each)
# and 8 one-hot blocks (1 each)
ADULT_BX = math.sqrt(6 * COLUMN_CAP**2 + 8)
CHEB_R = 6.0


def chebyshev_quadratic(radius: float) -> tuple[float, float, float]:
    """Monomial coefficients (a0, a1, a2) of the degree-2 Chebyshev interpolant of log sigmoid
    on [-radius, radius] (3 Chebyshev nodes)."""
    nodes = radius * np.cos(np.pi * (np.arange(3) + 0.5) / 3)
    values = -np.logaddexp(0.0, -nodes)
    a2, a1, a0 = np.polyfit(nodes, values, 2)
    return a0, a1, a2


def table_row_bound(table) -> float:
    """Public ``B_x`` of a raw table after its preprocessing: standardised columns taken as at
    most ``COLUMN_CAP`` units, one-hot blocks 1 each."""
    return math.sqrt(COLUMN_CAP**2 * len(table.numeric) + len(table.categorical))


EPSILONS = (0.1, 0.5, 1.0, 4.0, math.inf)
DATASETS = ("adult", "adult_rownorm", "nass_cds", "fertility", "breast_cancer")
C = 1.0
METHODS = ("ssp_auto", "ssp_public", "dpsgd", "lr")


_, A1, A2 = chebyshev_quadratic(CHEB_R)
SCALE = A1 / (-2 * A2)  # theta = SCALE * ridge solution on +-1 labels
ALPHA_L = 1.0 / (2 * abs(A2) * C)  # scikit-learn's C on the Chebyshev objective


def public_row_bound(name: str) -> float:
    """``B_x`` from how the set was prepared (public constants), never from its rows."""
    if name == "adult":
        return ADULT_BX
    if name == "adult_rownorm":
        return 1.0
    if name == "breast_cancer":
        return math.sqrt(30 * COLUMN_CAP**2)
    return table_row_bound(data.load_table(name))


def fit_one(method: str, loaded, eps: float, seed: int, row_bound: float, positive):
    """Fit one contender; returns (accuracy %, AUC, fit seconds, epsilon spent) or None when
    skdp refuses the fit (ValueError before anything is charged)."""
    X_train, X_test = loaded.X_train, loaded.X_test
    y_pos = np.asarray(loaded.y_test) == positive
    start = time.perf_counter()
    try:
        if method in ("ssp_auto", "ssp_public"):
            labels = np.where(np.asarray(loaded.y_train) == positive, 1.0, -1.0)  # public classes
            bounds = ({"max_row_norm": "auto"} if method == "ssp_auto"
                      else {"max_row_norm": row_bound, "target_bound": 1.0})
            model = DPRidge(privacy(eps), optimizer="ssp", alpha=ALPHA_L, random_state=seed,
                            **bounds).fit(X_train, labels)
            seconds = time.perf_counter() - start
            decision = SCALE * (X_test @ model.coef_ + model.intercept_)
        elif method == "dpsgd":
            model = DPLogisticRegression(privacy(eps), random_state=seed).fit(X_train,
                                                                              loaded.y_train)
            seconds = time.perf_counter() - start
            decision = model.decision_function(X_test)
            assert model.classes_[1] == positive
        else:
            model = LogisticRegression(max_iter=1000).fit(X_train, loaded.y_train)
            seconds = time.perf_counter() - start
            decision = model.decision_function(X_test)
    except ValueError as exc:
        print(f"    {method} eps={eps:g} seed={seed}: refused: {exc}", flush=True)
        return None
    spent = math.nan
    if method != "lr" and math.isfinite(eps):
        spent_eps, spent_delta = model.privacy_spent_
        assert spent_eps <= eps and spent_delta <= DELTA, (method, model.privacy_spent_)
        spent = float(spent_eps)
    accuracy = 100.0 * float(np.mean((decision > 0) == y_pos))
    return accuracy, float(roc_auc_score(y_pos, decision)), seconds, spent


def run_all(args, run: Run) -> list[dict]:
    records = []
    for name, loaded in data.load_available(args.datasets, skip=run.skip):
        classes = np.unique(loaded.y_train)
        if loaded.task != "classification" or len(classes) != 2:
            print(f"skip {name}: not binary classification")
            continue
        positive = classes[1]
        row_bound = public_row_bound(name)
        majority = 100.0 * max(np.mean(loaded.y_test == c) for c in classes)
        print(f"{name}: {loaded.shape[0]} x {loaded.shape[1]}, public B_x = {row_bound:.3f}, "
              f"test majority {majority:.2f}%", flush=True)
        for eps in args.epsilons:
            for method in METHODS:
                seeds = [0] if method == "lr" else list(range(args.seeds))
                results = [fit_one(method, loaded, eps, s, row_bound, positive) for s in seeds]
                ok = [r for r in results if r is not None]
                record = {
                    "set": name, "n": loaded.shape[0], "d": loaded.shape[1], "eps": eps,
                    "method": method, "majority": majority, "row_bound": row_bound,
                    "accuracy": [r[0] for r in ok], "auc": [r[1] for r in ok],
                    "seconds": [r[2] for r in ok], "spent": [r[3] for r in ok],
                    "refused": len(results) - len(ok),
                }
                records.append(record)
                print(f"  eps={eps:g} {method:10s} acc {mean_std(record['accuracy'], 2)} "
                      f"AUC {mean_std(record['auc'], 4)} "
                      f"time {np.median(record['seconds']) if ok else math.nan:.3f}s "
                      f"spent eps {max(record['spent'], default=math.nan):.6g}", flush=True)
    return records


def table(records: list[dict]) -> tuple[list[str], list[list[str]]]:
    by_cell: dict[tuple, dict[str, dict]] = {}
    for r in records:
        by_cell.setdefault((r["set"], r["eps"]), {})[r["method"]] = r
    rows = []
    for (name, eps), cell in by_cell.items():
        def acc(m, cell=cell):
            return mean_std(cell[m]["accuracy"], 2) if m in cell else "n/a"

        def auc(m, cell=cell):
            return mean_std(cell[m]["auc"], 3) if m in cell else "n/a"

        def sec(m, cell=cell):
            s = cell[m]["seconds"] if m in cell else []
            return f"{np.median(s):.3f}" if s else "n/a"

        rows.append([
            name, f"{eps:g}", *(acc(m) for m in METHODS), *(auc(m) for m in METHODS),
            " / ".join(sec(m) for m in METHODS),
        ])
    headers = ["set", "eps", "SSP auto acc %", "SSP public acc %", "DP-SGD acc %", "LR acc %",
               "SSP auto AUC", "SSP public AUC", "DP-SGD AUC", "LR AUC",
               "fit s (auto / public / DP-SGD / LR)"]
    return headers, rows


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--datasets", type=lambda s: s.split(","), default=list(DATASETS))
    parser.add_argument("--epsilons", type=lambda s: [float(v) for v in s.split(",")],
                        default=list(EPSILONS))
    cli.add_common_arguments(parser)
    args = parser.parse_args(argv)
    cli.setup(args)
    warnings.simplefilter("ignore", PrivacyWarning)
    run = Run(STUDY, args, results=args.results)
    run.header([
        f"delta={DELTA:g}; {args.seeds} seeds (LR: one deterministic fit); test accuracy % and "
        "ROC AUC, mean ± std over seeds; fit seconds: median over seeds",
        f"Chebyshev R={CHEB_R:g}: a1={A1:.5f}, a2={A2:.5f}, scale a1/(-2 a2)={SCALE:.3f}; "
        f"alpha_L=1/(2|a2|C)={ALPHA_L:.3f} (C={C:g})"])
    start = time.perf_counter()
    records = run_all(args, run)
    headers, rows = table(records)
    run.table("Test accuracy (%) and ROC AUC, mean ± std over seeds", headers, rows,
              key="ssp_logistic",
              notes=f"n/a: refused (the scale search needs more rows at that epsilon). Wall "
              f"time {time.perf_counter() - start:.0f} s.")
    run.raw = records
    run.save()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
