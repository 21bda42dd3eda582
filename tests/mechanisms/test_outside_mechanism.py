"""A mechanism defined outside the package plugs into the one fit flow, editing no file of skdp.

Noisy full-batch gradient descent, written here against the public protocol
(:class:`skdp.mechanisms.Mechanism`) and registered under a name, trains every estimator, is
planned, calibrated, charged to a ledger, composed in a private pipeline and reported like the
mechanisms skdp ships.
"""

from __future__ import annotations

import math

import dp_accounting
import numpy as np
import pytest
import torch
from sklearn.datasets import make_classification

from skdp import PrivacyBudget
from skdp.accounting import Calibration, PrivacyPlan, Sampling, calibrate, privacy_statement
from skdp.linear_model import DPLogisticRegression, DPRidge
from skdp.mechanisms import Mechanism, Release, _registry, register_optimizer
from skdp.neural_network import DPMLPClassifier
from skdp.pipeline import make_private_pipeline
from skdp.preprocessing import DPStandardScaler

NAME = "noisy_gd_outside"


class NoisyGD:
    """Full-batch gradient descent on clipped per-example gradients with Gaussian noise:
    ``max_iter`` steps, each over every row."""

    description = "noisy full-batch gradient descent (defined outside skdp)"

    def __init__(self, settings) -> None:
        self.settings = settings

    def plan(self) -> PrivacyPlan:
        return PrivacyPlan.constant(self.settings.epochs, 1.0, Sampling.FULL_BATCH)

    def calibrate(self, plan, epsilon, delta, accountant):
        if math.isinf(epsilon):
            return Calibration.non_private(plan)
        return calibrate(plan, epsilon, delta, accountant)

    def run(self, data, calibration) -> Release:
        s, model = self.settings, data.model
        X = torch.as_tensor(np.asarray(data.X), dtype=torch.float32)
        y = torch.as_tensor(np.asarray(data.targets), dtype=data.target_dtype)
        aux = model.example_aux(X)
        randomness = data.randomness()
        params = model.init_params(data.device, randomness.init)
        grad = torch.empty_like(params)
        clip = s.max_grad_norm if calibration.is_private else None
        std = calibration.noise_multiplier * s.max_grad_norm
        for _ in range(s.epochs):
            model.clipped_grad_sum(params, X, y, aux, clip, out=grad)
            if clip is not None:
                grad.add_(torch.randn(grad.shape, generator=randomness.noise) * std)
            params.sub_(grad.div_(X.shape[0]), alpha=s.learning_rate)
        return Release(params, attributes={"n_iter_": s.epochs, "n_steps_": s.epochs})

    def statement(self, calibration, release, facts) -> str:
        return privacy_statement(
            calibration, estimator=facts.estimator, mechanism=facts.label,
            clip_bound=self.settings.max_grad_norm, n_samples=facts.n_samples,
            public_facts=facts.public, training_facts=facts.training,
        )


@pytest.fixture
def registered():
    register_optimizer(NAME, NoisyGD)
    yield NAME
    _registry._AVAILABLE.pop(NAME)
    _registry.OPTIMIZER_NAMES.discard(NAME)


@pytest.fixture(scope="module")
def binary_data():
    X, y = make_classification(n_samples=1500, n_features=6, n_informative=4, n_redundant=0,
                               class_sep=2.0, flip_y=0.01, random_state=2)
    return X / 3.0, y  # rows of norm about 1


def test_the_outside_class_satisfies_the_protocol():
    assert isinstance(NoisyGD(None), Mechanism)


def test_an_outside_mechanism_trains_and_is_accounted(registered, binary_data):
    X, y = binary_data
    model = DPLogisticRegression(
        privacy=(2.0, 1e-5), optimizer=registered, eta0=4.0, max_iter=60, random_state=0
    ).fit(X, y)
    assert model.score(X, y) > 0.85  # chance is 0.5, scikit-learn's LogisticRegression 0.97
    epsilon, delta = model.privacy_spent_
    assert 0.99 * 2.0 < epsilon <= 2.0 and delta == 1e-5
    # The run is exactly its plan: 60 full-batch Gaussian steps at the calibrated noise.
    expected = dp_accounting.SelfComposedDpEvent(
        dp_accounting.GaussianDpEvent(model.noise_multiplier_), 60
    )
    assert model.dp_event_ == expected
    assert model.n_steps_ == 60
    report = model.privacy_report()
    assert f"optimizer='{registered}' ({NoisyGD.description})" in report
    assert "full batch (every row in every step)" in report


def test_an_outside_mechanism_is_seeded_and_non_private_reference_works(registered, binary_data):
    X, y = binary_data
    fit = [
        DPLogisticRegression(optimizer=registered, max_iter=5, random_state=3).fit(X, y).coef_
        for _ in range(2)
    ]
    np.testing.assert_array_equal(*fit)
    reference = DPLogisticRegression(
        privacy=(math.inf, 0), optimizer=registered, eta0=4.0, max_iter=100, random_state=0
    ).fit(X, y)
    assert reference.noise_multiplier_ == 0.0 and reference.score(X, y) > 0.95


def test_every_estimator_takes_it(registered, binary_data):
    X, y = binary_data
    DPMLPClassifier(optimizer=registered, hidden_layer_sizes=(4,), max_iter=3,
                    random_state=0).fit(X, y)
    ridge = DPRidge(optimizer=registered, max_iter=3, random_state=0).fit(X, y.astype(float))
    assert ridge.n_steps_ == 3


def test_it_is_charged_to_a_ledger_and_composed_in_a_pipeline(registered, binary_data, tmp_path):
    X, y = binary_data
    budget = PrivacyBudget(epsilon=5.0, delta=1e-5, path=tmp_path / "ledger.skdp")
    DPLogisticRegression(privacy=(1.0, 1e-6), optimizer=registered, max_iter=10,
                         budget=budget, random_state=0).fit(X, y)
    (record,) = budget.history()
    assert NoisyGD.description in record.mechanism
    pipeline = make_private_pipeline(
        DPStandardScaler(bounds=(-1.0, 1.0)),
        DPLogisticRegression(optimizer=registered, max_iter=10),
        privacy=(1.0, 1e-5), random_state=0,
    ).fit(X, y)
    assert pipeline.privacy_spent_[0] <= 1.0
    assert "preprocessing" in pipeline[-1].privacy_report()


def test_an_unregistered_name_is_refused(binary_data):
    X, y = binary_data
    with pytest.raises(ValueError, match="optimizer"):
        DPLogisticRegression(optimizer="noisy_gd_nowhere").fit(X, y)
