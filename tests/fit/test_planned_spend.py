"""planned_spend: a fit's spend, known before the fit, with nothing charged or trained."""

import numpy as np
import pytest

from skdp import PrivacyBudget
from skdp._fit.planned import planned_spend
from skdp.linear_model import DPLogisticRegression, DPRidge
from skdp.neural_network import DPMLPClassifier


@pytest.fixture
def binary_data():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 4))
    return X, (X[:, 0] > 0).astype(int)


@pytest.mark.parametrize(
    "estimator",
    [
        DPLogisticRegression(privacy=(1.0, 1e-5), random_state=0),
        DPRidge(privacy=(2.0, 1e-5), random_state=0),
        DPMLPClassifier(privacy=(1.0, 1e-5), hidden_layer_sizes=(4,), max_iter=2, random_state=0),
    ],
)
def test_planned_spend_matches_the_fit(estimator, binary_data, tmp_path):
    X, y = binary_data
    budget = PrivacyBudget(10.0, 1e-5, tmp_path / "ledger.db")
    estimator.set_params(budget=budget)
    planned = planned_spend(estimator, X, y)
    assert budget.history() == []  # nothing charged
    assert not hasattr(estimator, "n_features_in_")  # estimator untouched
    estimator.fit(X, y)
    assert planned.calibration.noise_multiplier == estimator.noise_multiplier_
    assert (planned.calibration.epsilon, planned.calibration.delta) == estimator.privacy_spent_
    assert planned.spend == estimator.dp_event_
    assert len(budget.history()) == 1


def test_planned_spend_validates_like_fit(binary_data):
    X, y = binary_data
    with pytest.raises(ValueError):
        planned_spend(DPLogisticRegression(privacy=(-1.0, 1e-5)), X, y)
