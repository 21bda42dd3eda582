"""Property-based robustness of every estimator under bad input (hypothesis).

Each drawn input either fits, giving finite parameters and finite, deterministic predictions
and exactly one ledger record, or is refused with a ValueError/TypeError that says what is
wrong, leaving the ledger untouched. Sizes and max_iter are tiny so that nothing can hang.
"""

from __future__ import annotations

import tempfile
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from skdp import PrivacyBudget, PrivacyWarning
from skdp._engine.rows import sparse as _sparse
from skdp.neural_network import DPMLPClassifier, DPMLPRegressor
from tests._inventory import CLASSIFIERS, REGRESSORS

ESTIMATORS = CLASSIFIERS + REGRESSORS
SMALL = {
    DPMLPClassifier: {"hidden_layer_sizes": (4,)},
    DPMLPRegressor: {"hidden_layer_sizes": (4,)},
}
FLOAT32_MAX = float(np.finfo(np.float32).max)
SETTINGS = settings(
    max_examples=10,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


def make(Estimator, budget=None):
    return Estimator(
        privacy=(1.0, 1e-5), max_iter=2, random_state=0, budget=budget, **SMALL.get(Estimator, {})
    )


@st.composite
def feature_matrices(draw):
    """Small matrices with the pathologies of real data, in float32 or float64."""
    n = draw(st.integers(1, 12))
    d = draw(st.integers(1, 5))
    dtype = draw(st.sampled_from([np.float32, np.float64]))
    seed = draw(st.integers(0, 2**16))
    rng = np.random.default_rng(seed)
    scale = draw(st.sampled_from([1.0, 1e-30, 1e-300, 1e15, 1e30, 1e37, 1e300]))
    X = rng.normal(size=(n, d)) * scale
    if draw(st.booleans()):  # constant columns
        X[:, rng.integers(0, d)] = draw(st.sampled_from([0.0, 1.0, -3.5e20]))
    if draw(st.booleans()):  # one extreme row
        X[rng.integers(0, n)] = draw(st.sampled_from([1e38, -1e38, 1e200, 5e-324]))
    bad = draw(st.sampled_from([None, np.nan, np.inf, -np.inf]))
    if bad is not None:
        X[rng.integers(0, n), rng.integers(0, d)] = bad
    with np.errstate(over="ignore"):
        return X.astype(dtype)


@st.composite
def targets(draw, n: int, classifier: bool):
    rng = np.random.default_rng(draw(st.integers(0, 2**16)))
    if classifier:
        n_classes = draw(st.integers(1, 20))
        kind = draw(st.sampled_from(["int", "str", "float"]))
        labels = rng.integers(0, n_classes, size=n)
        if kind == "str":
            return np.array([f"class_{k}" for k in labels])
        # Float labels with integral values (scikit-learn reads 1.5 as a continuous target).
        return labels.astype(float) if kind == "float" else labels
    y = rng.normal(size=n) * draw(st.sampled_from([1.0, 1e-20, 1e20, 1e39]))
    bad = draw(st.sampled_from([None, None, np.nan, np.inf]))
    if bad is not None:
        y[rng.integers(0, n)] = bad
    if draw(st.booleans()):
        return np.column_stack([y, -y])  # multi-output regression
    return y


def fit_or_refuse(Estimator, X, y):
    """Fit with a fresh ledger; return (estimator or None, exception or None, records)."""
    with tempfile.TemporaryDirectory() as tmp:
        budget = PrivacyBudget(50.0, 1e-5, path=Path(tmp) / "ledger.skdp")
        est = make(Estimator, budget)
        error = None
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", PrivacyWarning)
            warnings.simplefilter("ignore", RuntimeWarning)
            try:
                est.fit(X, y)
            except (ValueError, TypeError) as exc:
                error = exc
        records = budget.history()
    if error is not None:
        assert len(str(error)) > 15, f"unhelpful message: {error!r}"
        assert records == [], "a refused input was charged to the ledger"
        return None, error, records
    assert len(records) == 1
    return est, None, records


def check_fitted(est, X):
    params = [getattr(est, name) for name in ("coef_", "intercept_") if hasattr(est, name)]
    params += list(getattr(est, "coefs_", [])) + list(getattr(est, "intercepts_", []))
    assert params and all(np.all(np.isfinite(p)) for p in params), "non-finite parameters"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        first = est.predict(X)
        again = est.predict(X)
    np.testing.assert_array_equal(first, again)
    if np.asarray(first).dtype.kind == "f":
        assert np.all(np.isfinite(first)), "non-finite predictions"
    if hasattr(est, "predict_proba"):
        proba = est.predict_proba(X)
        assert np.all(np.isfinite(proba)) and np.allclose(proba.sum(axis=1), 1.0)


@pytest.mark.parametrize("Estimator", ESTIMATORS)
@SETTINGS
@given(data=st.data())
def test_fits_or_refuses_clearly(Estimator, data):
    X = data.draw(feature_matrices(), label="X")
    classifier = Estimator in CLASSIFIERS
    y = data.draw(targets(X.shape[0], classifier), label="y")
    est, error, _ = fit_or_refuse(Estimator, X, y)
    non_finite = not np.all(np.isfinite(X))
    too_large = bool(np.isfinite(X).all()) and float(np.abs(X).max()) > FLOAT32_MAX
    if non_finite or too_large:
        assert error is not None and isinstance(error, ValueError)
        return
    if classifier and np.unique(y).size < 2:
        assert isinstance(error, ValueError) and "class" in str(error)
        return
    if not classifier and not np.all(np.isfinite(y)):
        assert isinstance(error, ValueError)
        return
    if not classifier and float(np.abs(y).max()) > FLOAT32_MAX:
        assert isinstance(error, ValueError) and "magnitude" in str(error)
        return
    assert error is None, f"refused valid input: {error!r}"
    check_fitted(est, X)


@pytest.mark.parametrize("Estimator", ESTIMATORS)
@SETTINGS
@given(
    columns=st.lists(
        st.sampled_from(["float", "int", "bool", "cat_num", "cat_str", "str", "float_nan"]),
        min_size=1,
        max_size=4,
    ),
    n=st.integers(2, 10),
)
def test_pandas_columns(Estimator, columns, n):
    rng = np.random.default_rng(n)
    frame = {}
    for i, kind in enumerate(columns):
        name = f"{kind}_{i}"
        if kind == "float":
            frame[name] = rng.normal(size=n)
        elif kind == "int":
            frame[name] = rng.integers(-3, 3, size=n)
        elif kind == "bool":
            frame[name] = rng.random(n) < 0.5
        elif kind == "cat_num":
            frame[name] = pd.Categorical(rng.integers(0, 3, size=n))
        elif kind == "cat_str":
            frame[name] = pd.Categorical(rng.choice(["a", "b"], size=n))
        elif kind == "str":
            frame[name] = rng.choice(["x", "y", "z"], size=n)
        else:
            values = rng.normal(size=n)
            values[0] = np.nan
            frame[name] = values
    X = pd.DataFrame(frame)
    classifier = Estimator in CLASSIFIERS
    y = pd.Series(np.arange(n) % 2) if classifier else pd.Series(rng.normal(size=n))
    est, error, _ = fit_or_refuse(Estimator, X, y)
    if {"cat_str", "str"} & set(columns):
        # skdp's pointer to private encoding, then scikit-learn's or pandas' message ("could
        # not convert string to float: 'x'" or "Cannot cast str dtype to float64").
        assert isinstance(error, ValueError) and "str" in str(error).lower()
        assert "numeric features" in str(error) and "DPOneHotEncoder" in str(error)
        bad = [f"{kind}_{i}" for i, kind in enumerate(columns) if kind in ("cat_str", "str")]
        assert all(name in str(error) for name in bad)
    elif "float_nan" in columns:
        assert isinstance(error, ValueError) and "NaN" in str(error)
        assert "DPSimpleImputer" in str(error) and "HistGradientBoosting" not in str(error)
    else:
        assert error is None, f"refused numeric data: {error!r}"
        check_fitted(est, X)
        assert list(est.feature_names_in_) == list(X.columns)


@pytest.mark.parametrize("Estimator", ESTIMATORS)
@pytest.mark.parametrize("fmt", ["csr", "csc", "coo"])
def test_sparse_input_fits_with_one_charge(Estimator, fmt):
    rng = np.random.default_rng(0)
    X = sp.random(20, 4, density=0.5, format=fmt, random_state=0)
    y = np.arange(20) % 2 if Estimator in CLASSIFIERS else rng.normal(size=20)
    est, error, records = fit_or_refuse(Estimator, X, y)
    assert error is None and len(records) == 1
    check_fitted(est, X)


@pytest.mark.parametrize("Estimator", ESTIMATORS)
@SETTINGS
@given(data=st.data())
def test_sparse_fits_or_refuses_like_dense(Estimator, data):
    X = data.draw(feature_matrices(), label="X")
    y = data.draw(targets(X.shape[0], Estimator in CLASSIFIERS), label="y")
    _, dense_error, _ = fit_or_refuse(Estimator, X, y)
    for limit in (_sparse.DENSE_BATCH_MAX_ELEMENTS, -1):  # batches densified, then sparse
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(_sparse, "DENSE_BATCH_MAX_ELEMENTS", limit)
            est, error, _ = fit_or_refuse(Estimator, sp.csr_matrix(X), y)
        assert type(error) is type(dense_error)
        if error is None:
            check_fitted(est, sp.csr_matrix(X))


@pytest.mark.parametrize("Estimator", CLASSIFIERS)
def test_many_classes(Estimator):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 3))
    y = np.arange(60) % 30  # 30 classes, 2 rows each
    est, error, _ = fit_or_refuse(Estimator, X, y)
    assert error is None
    check_fitted(est, X)
    assert est.predict_proba(X).shape == (60, 30)


@pytest.mark.parametrize("Estimator", REGRESSORS)
def test_single_row_regression(Estimator):
    X, y = np.array([[0.5, -1.0]]), np.array([0.3])
    est, error, _ = fit_or_refuse(Estimator, X, y)
    assert error is None
    check_fitted(est, X)
