"""The non-private fit's warning about columns on very different scales."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.feature_extraction.text import HashingVectorizer

from skdp._fit.column_scales import UNBALANCED_RATIO, column_scales
from skdp.linear_model import DPLogisticRegression, DPRidge
from skdp.neural_network import DPMLPRegressor

INF = (math.inf, 0.0)


def _data(big: float, n: int = 600):
    rng = np.random.default_rng(0)
    X = np.c_[rng.normal(size=(n, 4)), rng.uniform(0, big, size=n)]  # an ID-like last column
    y = X[:, :4] @ np.ones(4) + rng.normal(size=n)
    return X, y


def _scale_warnings(estimator, X, y) -> list[str]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        estimator.fit(X, y)
    return [str(w.message) for w in caught if "very different scales" in str(w.message)]


def test_column_scales_measure_the_nonzero_entries_dense_and_sparse():
    X = np.array([[0.0, 3.0, 0.0], [4.0, 0.0, 0.0], [0.0, 4.0, 0.0]])
    expected = [4.0, math.sqrt(12.5), 0.0]
    np.testing.assert_allclose(column_scales(X), expected)
    np.testing.assert_allclose(column_scales(sp.csr_array(X)), expected)


@pytest.mark.parametrize("make", [
    lambda: DPRidge(privacy=INF),
    lambda: DPRidge(privacy=INF, optimizer="ssp"),
    lambda: DPLogisticRegression(privacy=INF),
    lambda: DPMLPRegressor(privacy=INF, max_iter=2),
], ids=["ridge", "ssp", "logistic", "mlp"])
def test_a_dominating_column_warns_without_privacy(make):
    X, y = _data(6e5)
    if isinstance(make(), DPLogisticRegression):
        y = (y > 0).astype(int)
    messages = _scale_warnings(make(), X, y)
    assert len(messages) == 1 and "DPStandardScaler" in messages[0]
    assert _scale_warnings(make(), sp.csr_array(X), y) == messages  # sparse input alike


def test_balanced_columns_and_private_fits_do_not_warn():
    X, y = _data(6e5)
    # A private fit cannot look at the data for free: no check, whatever the data.
    assert _scale_warnings(DPRidge(privacy=(1.0, 1e-5), random_state=0), X, y) == []
    # Just below the threshold: no warning; just above: one.
    X_small, y_small = _data(1.0)
    median = np.median(column_scales(X_small))
    X_small[:, -1] *= 0.99 * UNBALANCED_RATIO * median / column_scales(X_small)[-1]
    assert _scale_warnings(DPRidge(privacy=INF), X_small, y_small) == []
    X_small[:, -1] *= 1.03
    assert len(_scale_warnings(DPRidge(privacy=INF), X_small, y_small)) == 1
    # Sparse unit-sized columns (hashed text, one-hot) are balanced however rare each one is.
    words = [f"w{i % 97} w{i % 13} w{i % 5}" for i in range(400)]
    hashed = HashingVectorizer(n_features=2**10).transform(words)
    labels = np.arange(400) % 2
    assert _scale_warnings(DPLogisticRegression(privacy=INF), hashed, labels) == []
