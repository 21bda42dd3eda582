"""Notebook views (skdp/_utils/html.py and the budget and pipeline views): privacy tables,
budget bars, scikit-learn's fallback."""

from __future__ import annotations

import re

import dp_accounting
import numpy as np
import pandas as pd
import pytest
from sklearn import config_context
from sklearn.compose import ColumnTransformer
from sklearn.utils._repr_html.estimator import estimator_html_repr

from skdp import PrivacyBudget
from skdp._utils.html import privacy_html
from skdp.budget._html import MAX_LISTED_SPENDS, budget_html
from skdp.linear_model import DPLogisticRegression, DPRidge
from skdp.pipeline import make_private_pipeline
from skdp.preprocessing import DPOneHotEncoder, DPStandardScaler


@pytest.fixture(scope="module")
def binary_data():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(600, 3))
    y = (X[:, 0] + 0.3 * rng.normal(size=600) > 0).astype(int)
    return X, y


def _sklearn_html(estimator) -> str:
    return _no_ids(estimator_html_repr(estimator))


def _no_ids(html: str) -> str:
    # scikit-learn numbers the diagram's elements (sk-container-id-3); compare without them
    return re.sub(r"id-\d+", "id-N", html)


def _privacy_part(html: str) -> str:
    start = html.find('<div class="skdp-privacy">')
    assert start >= 0, "no privacy table"
    return html[start:]


def test_fitted_estimator_shows_its_numbers(binary_data):
    X, y = binary_data
    clf = DPLogisticRegression(privacy=(1.0, 1e-5), max_iter=2, random_state=0).fit(X, y)
    html = clf._repr_html_()
    table = _privacy_part(html)
    epsilon, delta = clf.privacy_spent_
    assert f"({epsilon:.4g}, {delta:.3g})-DP" in table
    assert f"{clf.noise_multiplier_:.4g}" in table
    assert f"<td>{clf.n_steps_} (batch {clf.batch_size_}, {clf.n_iter_} epochs)</td>" in table
    assert "add or remove one row" in table
    assert "DPLogisticRegression" in table and "noisy_sgd" in table
    # scikit-learn's diagram comes first, unchanged
    assert _no_ids(html).startswith(_sklearn_html(clf))
    bundle = clf._repr_mimebundle_()
    assert bundle["text/plain"] == repr(clf)
    assert _no_ids(bundle["text/html"]) == _no_ids(html)


def test_unfitted_estimator_keeps_scikit_learns_html():
    clf = DPRidge(privacy=(2.0, 1e-5))
    assert _no_ids(clf._repr_html_()) == _sklearn_html(clf)
    assert "skdp-privacy" not in clf._repr_mimebundle_()["text/html"]
    with config_context(display="text"):
        assert not hasattr(clf, "_repr_html_")
        assert "text/html" not in clf._repr_mimebundle_()


def test_text_is_escaped(binary_data):
    X, y = binary_data
    clf = DPLogisticRegression(privacy=(1.0, 1e-5), max_iter=1, random_state=0).fit(X, y)
    clf._privacy_report = "<script>alert('x')</script>, trained with <b>evil</b>"
    table = privacy_html(clf)
    assert "<script>" not in table and "<b>evil" not in table
    assert "&lt;script&gt;" in table and "&lt;b&gt;evil&lt;/b&gt;" in table


def test_non_private_fit_says_so(binary_data):
    X, y = binary_data
    clf = DPLogisticRegression(privacy=(float("inf"), 0.0), max_iter=1, random_state=0)
    assert "none: privacy=(inf, 0)" in _privacy_part(clf.fit(X, y)._repr_html_())


def test_pipeline_lists_its_steps():
    rng = np.random.default_rng(1)
    X = pd.DataFrame({"a": rng.normal(size=800), "c": rng.choice(["x", "y"], size=800)})
    y = (X["a"] > 0).astype(int)
    pre = ColumnTransformer([("num", DPStandardScaler(bounds=(-4, 4)), ["a"]),
                             ("cat", DPOneHotEncoder(), ["c"])])
    model = make_private_pipeline(pre, DPLogisticRegression(max_iter=2), privacy=(1.0, 1e-5),
                                  random_state=0)
    assert "skdp-privacy" not in model._repr_html_()
    table = _privacy_part(model.fit(X, y)._repr_html_())
    epsilon, delta = model.privacy_spent_
    assert f"({epsilon:.4g}, {delta:.3g})-DP" in table
    for path in model.step_noise_multipliers_:
        assert path in table
    assert "DPStandardScaler" in table and "DPOneHotEncoder" in table
    assert "DPLogisticRegression" in table


def test_budget_bar_empty_and_many_spends(tmp_path):
    budget = PrivacyBudget(epsilon=2.0, delta=1e-5, path=tmp_path / "b.skdp")
    html = budget._repr_html_()
    assert "width:0.0%" in html and "no spends recorded yet" in html
    step = dp_accounting.GaussianDpEvent(noise_multiplier=30.0)
    for i in range(MAX_LISTED_SPENDS + 7):
        budget.charge(step, estimator=f"fit<{i}>", mechanism="Gaussian & co")
    html = budget_html(budget)
    spent = budget.spent()[0]
    assert f"spent epsilon {spent:.4g} of 2 " in html
    assert f"width:{100 * spent / 2:.1f}%" in html
    assert "fit&lt;0&gt;" in html and f"fit&lt;{MAX_LISTED_SPENDS + 6}&gt;" in html
    assert "7 more spend(s)" in html
    assert "Gaussian &amp; co" in html and "fit<" not in html
    assert html.count("<tr><td>") == MAX_LISTED_SPENDS


def test_full_budget_is_marked(tmp_path):
    budget = PrivacyBudget(epsilon=0.5, delta=1e-5, path=tmp_path / "full.skdp")
    step = dp_accounting.GaussianDpEvent(noise_multiplier=10.0)
    while not budget.would_exceed(step):
        budget.charge(step, estimator="x")
    assert "skdp-bar" in budget._repr_html_()
