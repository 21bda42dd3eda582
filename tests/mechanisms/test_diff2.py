"""diff2: reductions (DP-GD, GD), calibration and accounting, noise of the difference rounds,
simulated clients, and refusals."""

from __future__ import annotations

import math

import numpy as np
import pytest

from skdp.accounting import calibrate, epsilon_of
from skdp.linear_model import DPLogisticRegression, DPRidge
from skdp.mechanisms._diff2 import Diff2, client_weights
from skdp.mechanisms._sgd.settings import SGDSettings
from skdp.neural_network import DPMLPClassifier, DPMLPRegressor


@pytest.fixture
def binary_data():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 5))
    y = (X[:, 0] - X[:, 2] + rng.normal(scale=0.5, size=300) > 0).astype(int)
    return X, y


@pytest.fixture
def regression_data():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(300, 4))
    return X, X @ np.array([0.5, -1.0, 0.0, 0.3]) + 0.1 * rng.normal(size=300)


def _coefs(est):
    if hasattr(est, "coef_"):
        return [est.coef_, est.intercept_]
    return [*est.coefs_, *est.intercepts_]


MAKERS = {
    "logistic": lambda **kw: DPLogisticRegression(eta0=0.5, **kw),
    # The mechanism on the rows as given (DPRidge's default trains on a public scale it finds).
    "ridge": lambda **kw: DPRidge(max_row_norm=None, eta0=0.5, **kw),
    "mlp-classifier": lambda **kw: DPMLPClassifier(hidden_layer_sizes=(6,), activation="tanh",
                                                   learning_rate_init=0.3, **kw),
    "mlp-regressor": lambda **kw: DPMLPRegressor(hidden_layer_sizes=(6,), activation="tanh",
                                                 learning_rate_init=0.1, **kw),
}


def _data(name, binary, regression):
    return binary if name in ("logistic", "mlp-classifier") else regression


@pytest.mark.parametrize("name", list(MAKERS))
def test_restart_period_1_is_noisy_full_batch_gradient_descent(name, binary_data, regression_data):
    X, y = _data(name, binary_data, regression_data)
    make = MAKERS[name]
    common = dict(privacy=(2.0, 1e-5), max_iter=15, random_state=4)
    diff2 = make(optimizer="diff2", optimizer_params={"restart_period": 1}, **common).fit(X, y)
    dpgd = make(batch_size=len(X), **common).fit(X, y)
    assert diff2.noise_multiplier_ == dpgd.noise_multiplier_
    assert diff2.privacy_spent_ == dpgd.privacy_spent_
    for a, b in zip(_coefs(diff2), _coefs(dpgd), strict=True):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("name", list(MAKERS))
@pytest.mark.parametrize("period", [3, 7])
def test_without_noise_the_differences_telescope_to_gradient_descent(
    name, period, binary_data, regression_data
):
    X, y = _data(name, binary_data, regression_data)
    make = MAKERS[name]
    common = dict(privacy=(math.inf, 0.0), max_iter=20, random_state=2)
    diff2 = make(optimizer="diff2", optimizer_params={"restart_period": period}, **common)
    gd = make(batch_size=len(X), **common).fit(X, y)
    for a, b in zip(_coefs(diff2.fit(X, y)), _coefs(gd), strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5)


def _settings(n_rounds, period, split=0.8, n=1000):
    return SGDSettings(
        n_samples=n, batch_size=n, epochs=n_rounds, learning_rate=0.1, max_grad_norm=1.0,
        optimizer_params={"restart_period": period, "budget_split": split},
    )


@pytest.mark.parametrize("n_rounds,period", [(100, 10), (101, 10), (50, 1), (30, 100)])
def test_plan_counts_rounds_and_splits_the_budget(n_rounds, period):
    opt = Diff2(_settings(n_rounds, period))
    restarts = math.ceil(n_rounds / period)
    groups = opt.plan().groups
    assert groups[0].count == restarts and sum(g.count for g in groups) == n_rounds
    assert all(g.sampling_rate == 1.0 for g in groups)
    if restarts < n_rounds:
        ratio = groups[1].relative_noise
        restart_share = restarts / (restarts + (n_rounds - restarts) / ratio**2)
        assert restart_share == pytest.approx(0.8)
    else:
        assert len(groups) == 1


def test_calibration_is_at_least_as_tight_as_the_papers_closed_form():
    """Prop. 4.1 (with the add/remove sensitivity C/n that skdp states its guarantee under)
    gives a valid but loose noise; the real accountant must never need more."""
    n, R, T, u, eps, delta = 16510, 2000, 20, 1.25, 3.0, 1e-5
    cal = calibrate(Diff2(_settings(R, T, split=1 / u, n=n)).plan(), eps, delta, "pld")
    alpha = 1 + math.ceil(2 * math.log(1 / delta) / eps)
    k1 = math.ceil(R / T)
    paper_sigma1_mean = math.sqrt(u * alpha * k1 / (n**2 * eps))  # std / C1 on the mean
    ours_mean = cal.noise_multiplier / n
    assert ours_mean <= paper_sigma1_mean
    assert cal.epsilon <= eps


def test_dp_event_reaccounts_within_the_claim(regression_data):
    X, y = regression_data
    est = DPRidge(optimizer="diff2", max_iter=40, optimizer_params={"restart_period": 7},
                  random_state=0).fit(X, y)
    assert epsilon_of(est.dp_event_, 1e-5, "pld", pld_interval=1e-5) <= est.privacy_spent_[0]
    assert epsilon_of(est.dp_event_, 1e-5, "rdp") >= est.privacy_spent_[0] * 0.9
    report = est.privacy_report()
    assert "diff2" in report and "DIFF2" in report
    assert "6 restart rounds" in report and "34 difference rounds" in report


def test_difference_rounds_add_noise_sigma2_times_the_step_length():
    """Zero features and no intercept: every gradient is 0, so the iterates move by noise only.
    Replaying the fit's noise stream shows round 2 drew its noise with std
    sigma2 * C2 * ||x1 - x0|| (on the sum), where x1 is the released first iterate."""
    import torch

    from skdp._engine._device import FitRandomness

    n, d, C2, eta = 200, 40, 3.0, 0.7
    X, Y = np.zeros((n, 1)), np.zeros((n, d))
    est = DPRidge(
        privacy=(1.0, 1e-5), optimizer="diff2", fit_intercept=False, alpha=0.0, eta0=eta,
        max_iter=2, average=False, random_state=11, max_grad_norm=0.5, device="cpu",
        optimizer_params={"restart_period": 5, "diff_clip": C2},
    ).fit(X, Y)  # on the CPU: the replay below draws from the CPU noise stream
    sigma1 = est.noise_multiplier_
    sigma2 = sigma1 * Diff2(_settings(2, 5, n=n)).difference_noise_ratio
    gen = FitRandomness(11, torch.device("cpu")).noise
    estimate = torch.empty(d).normal_(0.0, sigma1 * 0.5, generator=gen) / n
    x1 = -eta * estimate
    radius = C2 * float(torch.linalg.vector_norm(x1, dtype=torch.float64))
    estimate = estimate + torch.empty(d).normal_(0.0, sigma2 * radius, generator=gen) / n
    x2 = x1 - eta * estimate
    np.testing.assert_allclose(est.coef_[:, 0], x2.numpy(), rtol=1e-5, atol=1e-9)
    assert sigma2 > sigma1  # 4/5 of the budget went to the single restart


def test_equal_clients_are_the_single_machine_algorithm(binary_data):
    X, y = binary_data  # 300 rows: 3 clients of 100
    common = dict(optimizer="diff2", max_iter=12, random_state=5)
    one = DPLogisticRegression(optimizer_params={"n_clients": 1}, **common).fit(X, y)
    three = DPLogisticRegression(optimizer_params={"n_clients": 3}, **common).fit(X, y)
    np.testing.assert_array_equal(one.coef_, three.coef_)


def test_unequal_clients_average_client_means():
    w, denominator = client_weights(10, 3, np.random.default_rng(0))  # sizes 4, 3, 3
    assert denominator == 9
    assert sorted(np.round(w, 6).tolist()) == [0.75] * 4 + [1.0] * 6
    # sum_i w_i v_i / (P n_min) with v = 1: every client mean is 1, so the average is 1.
    assert np.sum(w) / denominator == pytest.approx(1.0)
    X = np.random.default_rng(1).normal(size=(301, 3))
    y = (X[:, 0] > 0).astype(int)
    est = DPLogisticRegression(optimizer="diff2", max_iter=5, random_state=0,
                               optimizer_params={"n_clients": 3}).fit(X, y)
    assert np.isfinite(est.coef_).all()
    with pytest.raises(ValueError, match="n_clients"):
        DPLogisticRegression(optimizer="diff2", optimizer_params={"n_clients": 400}).fit(X, y)


@pytest.mark.parametrize(
    "kwargs,match",
    [
        (dict(batch_size=32), "full-batch"),
        (dict(noise_schedule="exp_decay"), "noise_schedule='constant'"),
        (dict(learning_rate="adagrad_norm"), "adagrad_norm"),
        (dict(optimizer_params={"budget_split": 1.0}, max_iter=20), "budget_split"),
        (dict(optimizer_params={"budget_split": 0.0}), "budget_split"),
        (dict(optimizer_params={"diff_clip": -1.0}), "diff_clip"),
        (dict(accountant="last_iterate", projection_radius=1.0, max_row_norm=1.0,
              average=False), "noisy_sgd"),
    ],
)
def test_refusals(kwargs, match, binary_data):
    X, y = binary_data
    with pytest.raises(ValueError, match=match):
        DPLogisticRegression(optimizer="diff2", **kwargs).fit(X, y)


def test_budget_split_one_is_fine_without_difference_rounds(binary_data):
    X, y = binary_data
    est = DPLogisticRegression(optimizer="diff2", max_iter=5, random_state=0,
                               optimizer_params={"restart_period": 1, "budget_split": 1.0})
    assert np.isfinite(est.fit(X, y).coef_).all()


def test_numpy_scalars_from_grids_are_accepted_and_non_numbers_refused():
    from skdp.mechanisms._adaclip import AdaClipParams
    from skdp.mechanisms._diff2 import Diff2Params

    assert Diff2Params(budget_split=np.float64(0.5), diff_clip=np.int64(3)).diff_clip == 3
    assert AdaClipParams(gamma=np.float32(0.3), variance_cap=np.int64(2)).variance_cap == 2
    for bad in ("a", True):
        with pytest.raises(ValueError, match="budget_split"):
            Diff2Params(budget_split=bad)
        with pytest.raises(ValueError, match="beta1"):
            AdaClipParams(beta1=bad)
