"""Estimators charging a PrivacyBudget: before the data is touched, once per fit, everywhere
scikit-learn and joblib take an estimator (clone, GridSearchCV with worker processes)."""

from __future__ import annotations

import numpy as np
import pytest
from dp_accounting.pld import PLDAccountant
from sklearn.base import clone
from sklearn.datasets import make_classification
from sklearn.model_selection import GridSearchCV

from skdp import BudgetExceededError, PrivacyBudget
from skdp.linear_model import DPLogisticRegression, DPRidge
from skdp.mechanisms._noisy_sgd import NoisySGD
from skdp.neural_network import DPMLPClassifier, DPMLPRegressor
from tests._inventory import ESTIMATORS

FAST = {
    DPMLPClassifier: {"hidden_layer_sizes": (8,)},
    DPMLPRegressor: {"hidden_layer_sizes": (8,)},
}


@pytest.fixture(scope="module")
def binary_data():
    X, y = make_classification(n_samples=2000, n_features=6, random_state=0)
    return X / 2, y


def make(Estimator, **params):
    return Estimator(**{"max_iter": 2, "random_state": 0, **FAST.get(Estimator, {}), **params})


@pytest.mark.parametrize("Estimator", ESTIMATORS)
def test_fit_records_its_spend(Estimator, binary_data, tmp_path):
    X, y = binary_data
    budget = PrivacyBudget(3.0, 1e-5, path=tmp_path / "ledger.skdp")
    est = make(Estimator, privacy=(1.0, 1e-5), budget=budget).fit(X, y)
    (record,) = budget.history()
    assert record.estimator == Estimator.__name__
    assert record.event == est.dp_event_
    assert record.params["privacy"] == [1.0, 1e-05] or record.params["privacy"] == "(1.0, 1e-05)"
    assert "budget" not in record.params
    spent, delta = budget.spent()
    assert delta == 1e-5
    assert spent == pytest.approx(est.privacy_spent_[0], rel=1e-2)
    assert spent <= 1.0 + 1e-9


def test_spends_compose_tightly_and_a_refused_fit_records_nothing(binary_data, tmp_path):
    X, y = binary_data
    budget = PrivacyBudget(1.6, 1e-5, path=tmp_path / "ledger.skdp")
    fits = []
    for seed in range(3):  # three eps=0.9 fits compose to about 1.49, far under 2.7 ...
        fits.append(make(DPLogisticRegression, privacy=(0.9, 1e-5), budget=budget,
                         random_state=seed).fit(X, y))
    spent = budget.spent()[0]
    reference = PLDAccountant(value_discretization_interval=1e-4)
    for est in fits:
        reference.compose(est.dp_event_)
    assert spent == pytest.approx(reference.get_epsilon(1e-5), rel=1e-2)
    assert spent < 1.6 < 3 * 0.9
    # ... and a fourth (about 1.72 composed) does not fit: refused before training, nothing
    # recorded or fitted.
    est = make(DPLogisticRegression, privacy=(0.9, 1e-5), budget=budget)
    with pytest.raises(BudgetExceededError, match="may still fit"):
        est.fit(X, y)
    assert len(budget.history()) == 3
    assert budget.spent()[0] == pytest.approx(spent)
    assert not hasattr(est, "coef_")


def test_refused_input_is_not_charged(binary_data, tmp_path):
    X, y = binary_data
    budget = PrivacyBudget(3.0, 1e-5, path=tmp_path / "ledger.skdp")
    X_bad = X.copy()
    X_bad[0, 0] = np.nan
    bad_calls = [
        lambda: make(DPLogisticRegression, budget=budget).fit(X_bad, y),
        lambda: make(DPLogisticRegression, budget=budget, privacy=(0.0, 1e-5)).fit(X, y),
        lambda: make(
            DPLogisticRegression, budget=budget, optimizer="adaclip", optimizer_params={"x": 1}
        ).fit(X, y),
        lambda: make(DPMLPClassifier, budget=budget, hidden_layer_sizes=(0,)).fit(X, y),
        lambda: make(DPLogisticRegression, budget=budget).fit(X, np.zeros_like(y)),
    ]
    for call in bad_calls:
        with pytest.raises(ValueError):
            call()
    assert budget.history() == []


def test_a_fit_that_fails_after_the_charge_stays_charged(binary_data, tmp_path, monkeypatch):
    X, y = binary_data
    budget = PrivacyBudget(3.0, 1e-5, path=tmp_path / "ledger.skdp")

    def crash(self, *args, **kwargs):
        raise RuntimeError("simulated failure during training")

    monkeypatch.setattr(NoisySGD, "run", crash)
    with pytest.raises(RuntimeError, match="simulated"):
        make(DPLogisticRegression, budget=budget).fit(X, y)
    assert len(budget.history()) == 1  # the data may have been touched: the spend counts


def test_non_private_fit_cannot_be_charged(binary_data, tmp_path):
    X, y = binary_data
    budget = PrivacyBudget(3.0, 1e-5, path=tmp_path / "ledger.skdp")
    with pytest.raises(BudgetExceededError, match="without noise"):
        make(DPRidge, privacy=(float("inf"), 0), budget=budget).fit(X, y)
    assert budget.history() == []


def test_wrong_budget_type_is_refused_clearly(binary_data):
    X, y = binary_data
    with pytest.raises(TypeError, match="PrivacyBudget"):
        make(DPRidge, budget=(3.0, 1e-5)).fit(X, y)


def test_clone_shares_the_ledger(binary_data, tmp_path):
    budget = PrivacyBudget(3.0, 1e-5, path=tmp_path / "ledger.skdp")
    est = make(DPLogisticRegression, budget=budget)
    assert clone(est).budget is budget
    assert clone(est).get_params()["budget"] is budget


def test_grid_search_with_worker_processes_charges_every_fit(binary_data, tmp_path):
    X, y = binary_data
    budget = PrivacyBudget(50.0, 1e-5, path=tmp_path / "ledger.skdp")
    search = GridSearchCV(
        make(DPLogisticRegression, privacy=(0.5, 1e-5), budget=budget),
        {"max_grad_norm": [0.5, 1.0]},
        cv=2,
        n_jobs=2,
    ).fit(X, y)
    # 2 candidates x 2 folds in the workers, plus the refit in this process.
    records = budget.history()
    assert len(records) == 2 * 2 + 1
    assert {r.params["max_grad_norm"] for r in records} == {0.5, 1.0}
    assert search.best_estimator_.budget is budget


def test_with_budget_block_charges_estimators_without_budget(binary_data, tmp_path):
    X, y = binary_data
    budget = PrivacyBudget(3.0, 1e-5, path=tmp_path / "ledger.skdp")
    with budget:
        make(DPRidge).fit(X, y)
    make(DPRidge).fit(X, y)  # outside the block: no ledger
    assert len(budget.history()) == 1
