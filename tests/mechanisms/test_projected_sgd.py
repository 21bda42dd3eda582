"""accountant='last_iterate' on DPLogisticRegression and DPRidge: the training loop the bound
needs (fixed-size batches, projection after every step, last iterate only), the constants it
is computed with, saturation with epochs, refusals before anything is charged, and the
record a ledger composes.

The bound itself (Altschuler & Talwar 2022) is tested against the spec in
``tests/accounting/test_last_iterate.py``; here the estimators and the engine are.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from dp_accounting.rdp import rdp_privacy_accountant
from scipy import stats
from sklearn.base import clone
from sklearn.datasets import make_classification
from sklearn.linear_model import LogisticRegression

from skdp import PrivacyBudget
from skdp._engine._device import FitRandomness
from skdp._engine._sampling import FixedSizeSampler
from skdp._engine.rows.host import rescale_rows
from skdp._engine.rows.training_data import TrainingData
from skdp.accounting import LastIterateCalibration, LastIterateRun, last_iterate_guarantee
from skdp.accounting._last_iterate import composition_rdp
from skdp.budget import RdpCurve
from skdp.linear_model import DPLogisticRegression, DPRidge
from skdp.mechanisms._noisy_sgd import NoisySGD
from skdp.mechanisms._projected_sgd import ProjectedNoisySGD
from skdp.mechanisms._registry import make_optimizer
from skdp.mechanisms._sgd.settings import SGDSettings
from skdp.neural_network import DPMLPClassifier

CPU = torch.device("cpu")
DELTA = 1e-5

# A configuration whose burn-in is short, so that saturation shows within a few epochs:
# rows of norm <= 1 and no intercept (R = 1, M = 1/4 for logistic), eta = 4 <= 2/M = 8,
# batches of 10 rows, a ball of radius 0.25: burn-in D b / (L eta) = 1.25 epochs.
FAST_LOGISTIC = dict(
    accountant="last_iterate",
    projection_radius=0.25,
    max_row_norm=1.0,
    fit_intercept=False,
    C=np.inf,
    eta0=4.0,
    batch_size=10,
    average=False,
    random_state=0,
)


@pytest.fixture(scope="module")
def binary_data():
    X, y = make_classification(
        n_samples=1000, n_features=4, n_informative=3, n_redundant=1, random_state=0
    )
    return X / 3, y


@pytest.fixture(scope="module")
def regression_data(binary_data):
    X, _ = binary_data
    rng = np.random.default_rng(0)
    y = X @ np.array([0.5, -0.3, 0.2, 0.1]) + 0.05 * rng.normal(size=X.shape[0])
    return X, y


def last_iterate_logistic(**params):
    return DPLogisticRegression(**{**FAST_LOGISTIC, **params})


def released_norm(est) -> float:
    return float(np.linalg.norm(np.r_[np.ravel(est.coef_), np.ravel(est.intercept_)]))


# --- the sampler ------------------------------------------------------------------------------


def test_fixed_size_batches_are_exactly_b_distinct_rows():
    n, b = 300, 17
    sampler = FixedSizeSampler(n, b, np.random.default_rng(0))
    assert sampler.expected_batch_size == b
    for _ in range(500):
        batch = sampler.sample()
        assert batch.size == b and np.unique(batch).size == b
        assert batch.min() >= 0 and batch.max() < n


def test_fixed_size_inclusion_is_uniform_and_independent_across_steps():
    n, b, draws = 100, 10, 4000
    q = b / n
    sampler = FixedSizeSampler(n, b, np.random.default_rng(1))
    counts = np.zeros(n)
    overlaps = []
    previous = None
    for _ in range(draws):
        batch = sampler.sample()
        counts[batch] += 1
        if previous is not None:
            overlaps.append(np.intersect1d(batch, previous).size)
        previous = batch
    # Each row is in a batch with probability b/n, independently of the other steps: its count
    # is Binomial(draws, b/n), and the chi-square statistic over rows is about n.
    chi2 = float((((counts - draws * q) ** 2) / (draws * q * (1 - q))).sum())
    assert stats.chi2.ppf(1e-4, n) < chi2 < stats.chi2.ppf(1 - 1e-4, n)
    # Consecutive batches are independent: their overlap is hypergeometric, mean b^2 / n = 1
    # (per-epoch shuffling would give overlaps of 0 within an epoch).
    mean = b * b / n
    var = mean * (1 - q) * (n - b) / (n - 1)
    assert abs(np.mean(overlaps) - mean) < 5 * math.sqrt(var / len(overlaps))
    assert np.var(overlaps) == pytest.approx(var, rel=0.15)


def test_fixed_size_sampler_refuses_impossible_sizes():
    with pytest.raises(ValueError, match="batch_size"):
        FixedSizeSampler(10, 11, np.random.default_rng(0))


# --- the training loop ------------------------------------------------------------------------


class RecordingModel:
    """Gradient of each example = its row (1 column): the step moves by the batch mean of the
    rows; records the batch rows and the parameters each step starts from."""

    def __init__(self, n_params: int):
        self.n_params = n_params
        self.batches: list[np.ndarray] = []
        self.iterates: list[torch.Tensor] = []
        self.max_norms: list[float | None] = []

    def init_params(self, device, rng):
        return torch.zeros(self.n_params, dtype=torch.float32, device=device)

    def penalty_mask(self, device):
        return torch.ones(self.n_params, dtype=torch.float32, device=device)

    def clipped_grad_sum(self, params, Xb, yb, aux_b, max_norm, out):
        self.batches.append(Xb[:, 0].numpy().astype(int).copy())
        self.iterates.append(params.clone())
        self.max_norms.append(max_norm)
        return out.fill_(float(Xb[:, 1].sum()))


def run_projected(model, *, n, batch_size, epochs, lr, radius, sigma, clip=1.0, seed=0):
    settings = SGDSettings(
        n_samples=n,
        batch_size=batch_size,
        epochs=epochs,
        learning_rate=lr,
        max_grad_norm=clip,
        average=0.0,
        projection_radius=radius,
        smoothness=1.0,
    )
    engine = make_optimizer("noisy_sgd", settings, "last_iterate")
    assert isinstance(engine, ProjectedNoisySGD)
    run = engine.plan().run
    assert isinstance(run, LastIterateRun)
    if sigma > 0:
        guarantee = last_iterate_guarantee(run, sigma, DELTA)
        calibration = LastIterateCalibration(run, guarantee)
    else:
        calibration = LastIterateCalibration.non_private(run)
    X = torch.stack([torch.arange(n, dtype=torch.float32), torch.ones(n)], dim=1)
    data = TrainingData(X, torch.zeros(n), None)
    params = engine.train(model, data, calibration, FitRandomness(seed, CPU))
    return params, settings


def test_every_step_uses_exactly_b_distinct_rows_and_clips():
    n, b = 200, 16
    model = RecordingModel(3)
    _, settings = run_projected(model, n=n, batch_size=b, epochs=5, lr=0.1, radius=10.0,
                                sigma=1.0, clip=2.0)
    assert len(model.batches) == settings.n_steps == 5 * round(n / b)
    for batch in model.batches:
        assert batch.size == b and np.unique(batch).size == b
    assert set(model.max_norms) == {2.0}
    # Batches are not an epoch-wise permutation: some rows appear twice within one epoch.
    first_epoch = np.concatenate(model.batches[: round(n / b)])
    assert np.unique(first_epoch).size < first_epoch.size


def test_noisy_sum_is_divided_by_b_and_the_last_iterate_is_released():
    # Non-private, gradient = batch size per coordinate: each step moves by exactly -lr (the
    # sum of b ones divided by b), so the last iterate is -lr * T; an average would differ.
    model = RecordingModel(2)
    params, settings = run_projected(model, n=50, batch_size=5, epochs=3, lr=0.01,
                                     radius=100.0, sigma=0.0)
    assert set(model.max_norms) == {None}  # non-private: no clipping
    np.testing.assert_allclose(params.numpy(), -0.01 * settings.n_steps, rtol=1e-5)


def test_every_iterate_is_projected_onto_the_ball():
    # Noise alone (zero data gradient would also do) pushes the iterates far outside a ball of
    # radius 0.5: every step starts from, and the run releases, a point inside it.
    radius = 0.5
    model = RecordingModel(500)
    params, _ = run_projected(model, n=100, batch_size=10, epochs=3, lr=1.0, radius=radius,
                              sigma=50.0)
    norms = [float(torch.linalg.vector_norm(p)) for p in model.iterates[1:]]
    assert max(norms) <= radius
    assert min(norms) > 0.99 * radius  # the projection was active at every step
    assert float(torch.linalg.vector_norm(params)) <= radius
    # The released point is the projection of the last step: last iterate, not an average.
    last = model.iterates[-1]
    assert not torch.allclose(params, last)


def test_noise_has_the_calibrated_scale_on_the_mean():
    # Zero-mean gradients and no projection in reach: the iterate is -lr * sum_t N(0, (zC)^2)/b.
    class Silent(RecordingModel):
        def clipped_grad_sum(self, params, Xb, yb, aux_b, max_norm, out):
            return out.zero_()

    n, b, epochs, lr, clip, z = 100, 20, 4, 0.5, 3.0, 2.0
    params, settings = run_projected(Silent(20_000), n=n, batch_size=b, epochs=epochs, lr=lr,
                                     radius=1e6, sigma=z, clip=clip)
    expected = lr * z * clip * math.sqrt(settings.n_steps) / b
    assert params.double().std().item() == pytest.approx(expected, rel=0.03)


def test_engine_refuses_runs_the_bound_does_not_cover():
    base = dict(n_samples=100, batch_size=10, epochs=2, learning_rate=1.0, max_grad_norm=1.0,
                average=0.0, projection_radius=1.0, smoothness=1.0)
    ProjectedNoisySGD(SGDSettings(**base))  # valid
    for change, message in [
        ({"smoothness": None}, "convex model"),
        ({"projection_radius": None}, "radius"),
        ({"average": 0.1}, "average"),
        ({"learning_rate": 2.5}, "smoothness bound"),
        ({"learning_rate": 2.0, "strong_convexity": 0.5}, "strict contraction"),
    ]:
        with pytest.raises(ValueError, match=message):
            ProjectedNoisySGD(SGDSettings(**{**base, **change}))
    with pytest.raises(ValueError, match="optimizer='noisy_sgd'"):
        make_optimizer("adaclip", SGDSettings(**base), "last_iterate")
    # The standard accountants keep the standard optimizer.
    assert type(make_optimizer("noisy_sgd", SGDSettings(**base), "pld")) is NoisySGD


# --- estimators: what is computed and proven --------------------------------------------------


def test_reported_epsilon_is_the_bound_at_the_public_constants(binary_data, regression_data):
    X, y = binary_data
    C = 2.0
    est = DPLogisticRegression(
        privacy=(1.0, DELTA), accountant="last_iterate", projection_radius=3.0,
        max_row_norm=1.5, C=C, eta0=1.0, batch_size=20, max_iter=3, average=False,
        random_state=0,
    ).fit(X, y)
    n = X.shape[0]
    # Logistic with intercept: M = (max_row_norm^2 + 1) / 4 + 1 / (C n); unpenalised intercept,
    # so no strong convexity.
    run = LastIterateRun(n_samples=n, batch_size=20, n_steps=3 * 50, learning_rate=1.0,
                         max_grad_norm=1.0, smoothness=(1.5**2 + 1) / 4 + 1 / (C * n),
                         radius=3.0)
    guarantee = last_iterate_guarantee(run, est.noise_multiplier_, DELTA)
    assert est.privacy_spent_ == (pytest.approx(guarantee.epsilon, rel=1e-12), DELTA)
    assert 0.995 <= est.privacy_spent_[0] <= 1.0
    assert est.n_steps_ == 150 and est.batch_size_ == 20

    X, y = regression_data
    alpha = 50.0
    est = DPRidge(
        privacy=(1.0, DELTA), accountant="last_iterate", projection_radius=2.0,
        max_row_norm=1.0, alpha=alpha, fit_intercept=False, eta0=1.0, batch_size=20,
        max_iter=3, average=False, random_state=0,
    ).fit(X, y)
    # Ridge without intercept: M = max_row_norm^2 + alpha / n, strongly convex with m = alpha/n.
    run = LastIterateRun(n_samples=n, batch_size=20, n_steps=150, learning_rate=1.0,
                         max_grad_norm=1.0, smoothness=1.0 + alpha / n, radius=2.0,
                         strong_convexity=alpha / n)
    guarantee = last_iterate_guarantee(run, est.noise_multiplier_, DELTA)
    assert est.privacy_spent_[0] == pytest.approx(guarantee.epsilon, rel=1e-12)
    assert "eq. B.3, strongly convex" in est.privacy_report()


def test_noise_does_not_depend_on_the_data_values(binary_data):
    X, y = binary_data
    a = last_iterate_logistic(privacy=(1.0, DELTA), max_iter=2).fit(X, y)
    b = last_iterate_logistic(privacy=(1.0, DELTA), max_iter=2).fit(X[::-1] * 5, 1 - y)
    assert a.noise_multiplier_ == b.noise_multiplier_
    assert a.privacy_spent_ == b.privacy_spent_


def test_noise_stops_growing_with_epochs_past_the_burn_in(binary_data):
    X, y = binary_data
    noise = {}
    for epochs in (1, 10, 20, 40):
        est = last_iterate_logistic(privacy=(1.0, DELTA), max_iter=epochs).fit(X, y)
        noise[epochs] = est.noise_multiplier_
        assert est.privacy_spent_[0] <= 1.0
    standard = {
        epochs: DPLogisticRegression(privacy=(1.0, DELTA), batch_size=10, max_iter=epochs,
                                     random_state=0).fit(X, y).noise_multiplier_
        for epochs in (10, 40)
    }
    # Past the burn-in the calibrated noise is flat (calibration lands within 0.5% of the
    # target epsilon, hence the tolerance) ...
    assert noise[20] == pytest.approx(noise[10], rel=0.01)
    assert noise[40] == pytest.approx(noise[10], rel=0.01)
    assert noise[1] < noise[10]
    # ... while the standard accountant needs ever more noise (about sqrt(epochs)). (Its
    # add/remove relation needs about half the noise of replace-one at equal epsilon, so the
    # two noise levels are not compared here; the benchmark compares accuracies.)
    assert standard[40] > 1.6 * standard[10]


def test_privacy_spent_at_a_fixed_noise_saturates_with_epochs(binary_data):
    # What a fixed noise buys as epochs grow: the estimator's run at its public constants.
    n = binary_data[0].shape[0]

    def epsilon(epochs, z=3.0):
        run = LastIterateRun(n_samples=n, batch_size=10, n_steps=epochs * 100,
                             learning_rate=4.0, max_grad_norm=1.0, smoothness=0.25,
                             radius=0.25)
        return last_iterate_guarantee(run, z, DELTA)

    eps = {epochs: epsilon(epochs) for epochs in (1, 10, 100, 1000)}
    assert eps[100].epsilon == pytest.approx(eps[10].epsilon, rel=1e-9)
    assert eps[1000].epsilon == pytest.approx(eps[10].epsilon, rel=1e-9)
    assert eps[1000].composition_epsilon > 5 * eps[1000].epsilon
    assert eps[1].epsilon < eps[10].epsilon


def test_before_the_burn_in_it_is_the_standard_replace_one_bound(binary_data):
    # A large ball (burn-in of 500 epochs): after one epoch the reported epsilon is exactly the
    # composition of the steps, each a sampled Gaussian with noise ratio z / 2 (replace-one).
    X, y = binary_data
    est = last_iterate_logistic(privacy=(1.0, DELTA), projection_radius=100.0,
                                max_iter=1).fit(X, y)
    report = est.privacy_report()
    assert "binding bound: the standard composition" in report
    accountant = rdp_privacy_accountant.RdpAccountant()
    from dp_accounting import GaussianDpEvent, PoissonSampledDpEvent, SelfComposedDpEvent

    accountant.compose(SelfComposedDpEvent(
        PoissonSampledDpEvent(10 / 1000, GaussianDpEvent(est.noise_multiplier_ / 2)), 100))
    assert est.privacy_spent_[0] == pytest.approx(accountant.get_epsilon(DELTA), rel=1e-9)
    # Past the burn-in the last-iterate bound is the binding one, and says so.
    est = last_iterate_logistic(privacy=(1.0, DELTA), max_iter=20).fit(X, y)
    assert "binding bound: the last-iterate bound" in est.privacy_report()


def test_report_names_the_bound_the_relation_and_the_release(binary_data):
    X, y = binary_data
    est = last_iterate_logistic(privacy=(1.0, DELTA), max_iter=20).fit(X, y)
    report = est.privacy_report()
    for text in (
        "Altschuler & Talwar (2022), eq. B.2",
        "neighbouring datasets: replace one row",
        "binding bound: the last-iterate bound",
        "exactly 10 distinct rows",
        "radius 0.25",
        "smoothness M=0.25",
        "ONLY the last iterate is covered",
        "max_row_norm=1",
    ):
        assert text in report, text


# --- estimators: the training loop ------------------------------------------------------------


@pytest.mark.parametrize("privacy", [(1.0, DELTA), (float("inf"), 0)])
def test_fitted_parameters_lie_in_the_ball(binary_data, regression_data, privacy):
    X, y = binary_data
    clf = last_iterate_logistic(privacy=privacy, fit_intercept=True, max_row_norm=1.0,
                                eta0=2.0, projection_radius=0.3, max_iter=3).fit(X, y)
    assert released_norm(clf) <= 0.3
    assert released_norm(clf) > 0.29  # the unconstrained model lies outside this ball
    X, y = regression_data
    reg = DPRidge(privacy=privacy, accountant="last_iterate", projection_radius=0.2,
                  max_row_norm=1.0, eta0=0.5, batch_size=10, max_iter=3, average=False,
                  random_state=0).fit(X, y)
    assert released_norm(reg) <= 0.2


def test_rows_are_rescaled_to_max_row_norm(binary_data):
    X, y = binary_data
    norms = np.linalg.norm(X, axis=1)
    bound = float(np.median(norms))
    scaled = rescale_rows(X, bound)
    new_norms = np.linalg.norm(scaled, axis=1)
    assert new_norms.max() <= bound
    np.testing.assert_array_equal(scaled[norms <= bound * (1 - 1e-6)],
                                  X[norms <= bound * (1 - 1e-6)])
    # Training sees the rescaled rows: the same fit on pre-rescaled rows (and a bound they
    # already meet, with the same smoothness) is identical.
    params = dict(privacy=(1.0, DELTA), max_iter=2, eta0=4.0 / (bound * bound))
    a = last_iterate_logistic(max_row_norm=bound, **params).fit(X, y)
    b = last_iterate_logistic(max_row_norm=bound, **params).fit(scaled, y)
    c = last_iterate_logistic(max_row_norm=bound, **params).fit(X * 0.999, y)
    np.testing.assert_allclose(a.coef_, b.coef_, rtol=1e-6, atol=1e-7)
    assert not np.allclose(a.coef_, c.coef_)


def test_reproducible_with_random_state(binary_data):
    X, y = binary_data
    a = last_iterate_logistic(privacy=(1.0, DELTA), max_iter=2).fit(X, y)
    b = clone(a).fit(X, y)
    c = last_iterate_logistic(privacy=(1.0, DELTA), max_iter=2, random_state=1).fit(X, y)
    np.testing.assert_array_equal(a.coef_, b.coef_)
    assert not np.array_equal(a.coef_, c.coef_)


def test_last_iterate_model_is_useful(binary_data):
    X, y = binary_data
    est = last_iterate_logistic(privacy=(1.0, DELTA), projection_radius=2.0, max_iter=10,
                                fit_intercept=True, eta0=2.0, batch_size=100).fit(X, y)
    reference = LogisticRegression().fit(X, y).score(X, y)  # 0.722 on this hard problem
    assert est.score(X, y) > reference - 0.05


def test_multiclass_needs_clipping_to_be_inactive():
    X, y = make_classification(
        n_samples=600, n_features=4, n_informative=3, n_redundant=1, n_classes=3, random_state=0
    )
    X = X / 3
    params = dict(privacy=(1.0, DELTA), max_row_norm=1.0, fit_intercept=True, eta0=1.0,
                  projection_radius=1.0, max_iter=2)
    # R = sqrt(2) with the intercept: gradients have norm < sqrt(2) R = 2, and
    # M = R^2 / 2 = 1 (eta0 <= 2).
    with pytest.raises(ValueError, match=r"never clipped.*max_grad_norm >= 2\.00002"):
        last_iterate_logistic(**params).fit(X, y)
    est = last_iterate_logistic(max_grad_norm=2.001, **params).fit(X, y)
    assert est.coef_.shape == (3, 4)
    assert "smoothness M=1 " in est.privacy_report()
    with pytest.raises(ValueError, match="smoothness bound"):
        last_iterate_logistic(max_grad_norm=2.001, **{**params, "eta0": 2.1}).fit(X, y)


def test_projection_and_row_bound_also_work_with_the_standard_accountant(binary_data):
    X, y = binary_data
    est = DPLogisticRegression(privacy=(1.0, DELTA), projection_radius=0.3, max_row_norm=1.0,
                               max_iter=2, random_state=0).fit(X, y)
    assert released_norm(est) <= 0.3
    report = est.privacy_report()
    assert "projected onto the L2 ball of radius 0.3" in report
    assert "add or remove one row" in report


# --- refusals: before anything is charged or trained -------------------------------------------


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"projection_radius": None}, "needs projection_radius"),
        ({"max_row_norm": None}, "needs max_row_norm"),
        ({"average": True}, "set average=False"),
        ({"average": 0.5}, "set average=False"),
        ({"verbose": 1}, "set verbose=0"),
        ({"learning_rate": "invscaling"}, "constant step size and constant noise"),
        ({"noise_schedule": "exp_decay", "noise_decay": 0.5}, "constant noise"),
        ({"eta0": 8.5}, r"2 / M = 8\b.*eta0 <= 8\b"),
        ({"eta0": 2.0, "max_row_norm": 3.0}, r"M = 0\.25 R\^2 \+ l2 = 2\.25"),
        ({"optimizer": "adaclip"}, "optimizer='noisy_sgd' only"),
        ({"fit_intercept": True, "C": 1.0, "eta0": 6.0}, r"R = 1\.41"),
    ],
)
def test_unmet_conditions_are_refused_before_charging(binary_data, tmp_path, monkeypatch, change,
                                                      message):
    X, y = binary_data

    def no_training(*args, **kwargs):
        raise AssertionError("training must not start")

    monkeypatch.setattr(NoisySGD, "run", no_training)
    budget = PrivacyBudget(10.0, DELTA, path=tmp_path / "ledger.skdp",
                           neighboring_relation="replace_one")
    est = last_iterate_logistic(privacy=(1.0, DELTA), max_iter=2, budget=budget, **change)
    with pytest.raises(ValueError, match=message):
        est.fit(X, y)
    assert budget.history() == []
    assert not hasattr(est, "coef_")


def test_ridge_step_size_refusal_says_which_step_is_allowed(regression_data):
    X, y = regression_data
    est = DPRidge(privacy=(1.0, DELTA), accountant="last_iterate", projection_radius=1.0,
                  max_row_norm=2.0, eta0=0.5, average=False)  # 0.5 > 2 / (4 + 1 + 1/n)
    with pytest.raises(ValueError, match=r"M = 1 R\^2 \+ l2 = 5\.001 .*eta0 <= 0\.39992"):
        est.fit(X, y)


def test_multi_output_ridge(regression_data):
    # Clipping a vector residual to a ball is the gradient of a Huber function: allowed.
    X, y = regression_data
    Y = np.c_[y, -y]
    est = DPRidge(privacy=(1.0, DELTA), accountant="last_iterate", projection_radius=1.0,
                  max_row_norm=1.0, eta0=0.9, batch_size=20, max_iter=3, average=False,
                  random_state=0).fit(X, Y)
    assert est.coef_.shape == (2, 4)
    assert released_norm(est) <= 1.0
    assert est.privacy_spent_[0] <= 1.0


def test_mlps_do_not_offer_the_last_iterate_accountant(binary_data):
    X, y = binary_data
    with pytest.raises(ValueError, match="accountant"):
        DPMLPClassifier(accountant="last_iterate", max_iter=1).fit(X, y)


# --- the record and the ledger -----------------------------------------------------------------


def test_dp_event_is_the_proven_rdp_curve(binary_data):
    X, y = binary_data
    est = last_iterate_logistic(privacy=(1.0, DELTA), max_iter=20).fit(X, y)
    curve = est.dp_event_
    assert isinstance(curve, RdpCurve)
    epsilon, _ = rdp_privacy_accountant.compute_epsilon(curve.orders, curve.rdp, DELTA)
    assert epsilon <= est.privacy_spent_[0] * (1 + 1e-12)
    assert epsilon == pytest.approx(est.privacy_spent_[0], rel=1e-9)
    # The standard bound's curve at the same noise is far larger: dp_event_ is not it.
    run = LastIterateRun(n_samples=1000, batch_size=10, n_steps=2000, learning_rate=4.0,
                         max_grad_norm=1.0, smoothness=0.25, radius=0.25)
    standard = composition_rdp(run, est.noise_multiplier_, curve.orders)
    assert np.all(np.asarray(curve.rdp) <= standard + 1e-12)
    assert np.any(np.asarray(curve.rdp) < 0.5 * standard)


def test_replace_one_ledger_records_the_curve(binary_data, tmp_path):
    X, y = binary_data
    budget = PrivacyBudget(3.0, DELTA, path=tmp_path / "ledger.skdp",
                           neighboring_relation="replace_one")
    est = last_iterate_logistic(privacy=(1.0, DELTA), max_iter=20, budget=budget).fit(X, y)
    (record,) = budget.history()
    assert record.event == est.dp_event_
    assert record.epsilon <= est.privacy_spent_[0] * (1 + 1e-9)
    assert budget.spent()[0] == pytest.approx(est.privacy_spent_[0], rel=1e-6)
    assert budget.spent()[0] <= est.privacy_spent_[0] * (1 + 1e-9)
    # Two such fits compose per order (less than twice the epsilon).
    last_iterate_logistic(privacy=(1.0, DELTA), max_iter=20, budget=budget,
                          random_state=1).fit(X, y)
    assert est.privacy_spent_[0] < budget.spent()[0] < 2 * est.privacy_spent_[0]


def test_add_or_remove_ledger_refuses_before_training(binary_data, tmp_path, monkeypatch):
    X, y = binary_data

    def no_training(*args, **kwargs):
        raise AssertionError("training must not start")

    monkeypatch.setattr(NoisySGD, "run", no_training)
    budget = PrivacyBudget(3.0, DELTA, path=tmp_path / "ledger.skdp")  # add/remove
    est = last_iterate_logistic(privacy=(1.0, DELTA), max_iter=2, budget=budget)
    with pytest.raises(ValueError, match="neighboring_relation='replace_one'"):
        est.fit(X, y)
    assert budget.history() == []
    assert not hasattr(est, "coef_")
    # And the other way round: a standard fit cannot be charged to a replace-one ledger.
    budget = PrivacyBudget(3.0, DELTA, path=tmp_path / "other.skdp",
                           neighboring_relation="replace_one")
    with pytest.raises(ValueError, match="add_or_remove_one"):
        DPLogisticRegression(max_iter=1, budget=budget).fit(X, y)
    assert budget.history() == []


def test_non_private_last_iterate_fit(binary_data):
    X, y = binary_data
    est = last_iterate_logistic(privacy=(float("inf"), 0), max_iter=3).fit(X, y)
    assert est.noise_multiplier_ == 0.0
    assert est.privacy_spent_ == (math.inf, 0.0)
    assert "guarantee: NONE" in est.privacy_report()
    assert released_norm(est) <= 0.25
