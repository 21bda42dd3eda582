"""Missing and non-numeric input get errors that point to private preprocessing, in fit and in
predict, and a refused fit charges nothing to the budget."""

from __future__ import annotations

import inspect
import warnings

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import FunctionTransformer

from skdp import PrivacyBudget, PrivacyWarning
from skdp.linear_model import DPLogisticRegression, DPRidge
from skdp.neural_network import DPMLPClassifier, DPMLPRegressor
from skdp.pipeline import make_private_pipeline
from skdp.preprocessing import DPStandardScaler
from tests._inventory import ESTIMATORS

SMALL = {
    DPMLPClassifier: {"hidden_layer_sizes": (3,)},
    DPMLPRegressor: {"hidden_layer_sizes": (3,)},
}


@pytest.fixture
def binary_data():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 3)) / 2
    return X, (X[:, 0] > 0).astype(int)


def make(Estimator, **params):
    return Estimator(max_iter=1, random_state=0, **SMALL.get(Estimator, {}), **params)


@pytest.fixture
def budget(tmp_path):
    return PrivacyBudget(10.0, 1e-5, path=tmp_path / "ledger.skdp")


def _assert_nan_advice(error: Exception, estimator: str) -> None:
    message = str(error)
    assert message.startswith("Input X contains NaN.")
    assert estimator in message
    for pointer in ("skdp.preprocessing.DPSimpleImputer", "skdp.pipeline.make_private_pipeline",
                    "SimpleImputer(strategy='constant'"):
        assert pointer in message
    # scikit-learn's advice would learn from the private data.
    assert "HistGradientBoosting" not in message


@pytest.mark.parametrize("Estimator", ESTIMATORS)
@pytest.mark.parametrize("container", [np.asarray, sp.csr_matrix, pd.DataFrame])
def test_nan_in_fit_points_to_private_imputation(Estimator, container, binary_data, budget):
    X, y = binary_data
    X = X.copy()
    X[3, 1] = np.nan
    with pytest.raises(ValueError) as info:
        make(Estimator, budget=budget).fit(container(X), y)
    _assert_nan_advice(info.value, Estimator.__name__)
    assert budget.history() == []


@pytest.mark.parametrize("Estimator", ESTIMATORS)
def test_nan_and_infinity_in_predict(Estimator, binary_data):
    X, y = binary_data
    est = make(Estimator).fit(X, y)
    X_nan = X.copy()
    X_nan[0, 0] = np.nan
    with pytest.raises(ValueError) as info:
        est.predict(sp.csr_matrix(X_nan))
    _assert_nan_advice(info.value, Estimator.__name__)
    X_inf = X.copy()
    X_inf[0, 0] = -np.inf
    with pytest.raises(ValueError, match="infinity") as info:
        est.predict(X_inf)
    assert "public rule" in str(info.value)


def test_infinity_in_fit_is_refused_without_charge(binary_data, budget):
    X, y = binary_data
    X = X.copy()
    X[0, 2] = np.inf
    with pytest.raises(ValueError, match="Input X contains infinity.*public rule"):
        make(DPLogisticRegression, budget=budget).fit(X, y)
    assert budget.history() == []


def test_nan_in_y_keeps_scikit_learns_message(binary_data):
    X, _ = binary_data
    y = X[:, 0].copy()
    y[2] = np.nan
    with pytest.raises(ValueError, match="Input y contains NaN") as info:
        make(DPRidge).fit(X, y)
    assert "DPSimpleImputer" not in str(info.value)


def _frames(n: int = 40):
    rng = np.random.default_rng(1)
    numbers = rng.normal(size=n) / 2
    cities = rng.choice(["Paris", "Oslo"], size=n)
    yield "str", pd.DataFrame({"age": numbers, "city": cities}), ["city"]
    yield "category", pd.DataFrame({"age": numbers, "city": pd.Categorical(cities)}), ["city"]
    yield "string", pd.DataFrame({"age": numbers, "city": pd.array(cities, dtype="string"),
                                  "job": pd.Categorical(cities)}), ["city", "job"]


@pytest.mark.parametrize("Estimator", ESTIMATORS)
@pytest.mark.parametrize(("kind", "frame", "bad"), list(_frames()), ids=[f[0] for f in _frames()])
def test_non_numeric_columns_point_to_private_encoding(Estimator, kind, frame, bad, budget):
    y = np.arange(len(frame)) % 2
    with pytest.raises((ValueError, TypeError)) as info:
        make(Estimator, budget=budget).fit(frame, y)
    message = str(info.value)
    assert "needs numeric features" in message and str(bad) in message
    assert "skdp.preprocessing.DPOneHotEncoder" in message and "categories=" in message
    assert "age" not in message.split("(Conversion")[0]  # the numeric column is not blamed
    assert budget.history() == []


@pytest.mark.parametrize("Estimator", ESTIMATORS)
def test_string_arrays_in_fit_and_predict(Estimator, binary_data):
    X, y = binary_data
    strings = np.array([["a", "b", "c"]] * len(y))
    with pytest.raises(ValueError, match="needs numeric features.*DPOneHotEncoder"):
        make(Estimator).fit(strings, y)
    est = make(Estimator).fit(X, y)
    with pytest.raises(ValueError, match="needs numeric features.*could not convert"):
        est.predict(strings)


def test_object_arrays_keep_the_exception_type(binary_data):
    # scikit-learn's check_dtype_object expects this TypeError and its message.
    X, y = binary_data
    X = X.astype(object)
    X[0, 0] = {"foo": "bar"}
    with pytest.raises(TypeError, match="argument must be a string.* number"):
        make(DPLogisticRegression).fit(X, y)


def test_numeric_object_and_categorical_input_still_fit(binary_data):
    X, y = binary_data
    make(DPLogisticRegression).fit(X.astype(object), y)
    frame = pd.DataFrame({"a": X[:, 0], "b": pd.Categorical(np.arange(len(y)) % 3)})
    make(DPLogisticRegression).fit(frame, y)


@pytest.mark.parametrize("through_pipeline", [False, True])
def test_privacy_warnings_point_at_the_users_line(through_pipeline):
    # A warning attributed inside skdp or scikit-learn hides which line of the notebook
    # caused it; warn_user skips both packages' frames.
    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(60, 3)), rng.normal(size=60)
    model = DPRidge(privacy=(0.5, 1e-3), random_state=0, max_iter=2)
    if through_pipeline:
        model = make_pipeline(FunctionTransformer(), model)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        line = inspect.currentframe().f_lineno + 1
        model.fit(X, y)
    privacy = [w for w in caught if issubclass(w.category, PrivacyWarning)]
    assert privacy, "the tiny data set should trigger the scale-search and delta warnings"
    assert all((w.filename, w.lineno) == (__file__, line) for w in privacy)


def test_a_preprocessing_steps_warning_points_at_the_users_line():
    # A private pipeline fits its transformers through joblib's Memory: that frame is skipped
    # too, else the warning named joblib/memory.py.
    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(60, 3)), rng.normal(size=60)
    model = make_private_pipeline(DPStandardScaler(), DPRidge(max_iter=2, random_state=0),
                                  privacy=(0.5, 1e-3))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        line = inspect.currentframe().f_lineno + 1
        model.fit(X, y)
    scaler = [w for w in caught if "DPStandardScaler" in str(w.message)]
    assert scaler, "the tiny data set should trigger the scaler's bounds warning"
    assert all((w.filename, w.lineno) == (__file__, line) for w in scaler)
