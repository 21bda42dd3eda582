"""adp_sgd, step-size schedules and noise schedules in the engine and the estimators:
reductions to noisy_sgd, exact accounting of the non-uniform noise that is run, and the noise
actually injected at each step."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from dp_accounting.pld import PLDAccountant
from sklearn.datasets import make_classification

from skdp._engine._device import FitRandomness
from skdp._engine.rows.training_data import TrainingData
from skdp.accounting import PrivacyPlan, calibrate
from skdp.linear_model import DPLogisticRegression, DPRidge
from skdp.mechanisms._adp_sgd import ADPSGD
from skdp.mechanisms._noisy_sgd import NoisySGD
from skdp.mechanisms._sgd.settings import SGDSettings
from skdp.mechanisms._sgd.step_sizes import AdaGradNorm, fixed_learning_rates
from skdp.neural_network import DPMLPClassifier

CPU = torch.device("cpu")


@pytest.fixture(scope="module")
def binary_data():
    X, y = make_classification(n_samples=3000, n_features=8, random_state=0)
    return X / 3, y


def settings(**overrides):
    base = dict(n_samples=3000, batch_size=100, epochs=4, learning_rate=0.5, max_grad_norm=1.0)
    return SGDSettings(**{**base, **overrides})


# --- reductions ---------------------------------------------------------------------------------
def test_constant_schedules_give_the_foundation_plan():
    s = settings()
    assert NoisySGD(s).plan() == PrivacyPlan.constant(s.n_steps, s.sampling_rate)
    assert ADPSGD(s).plan() == NoisySGD(s).plan()
    # noise_decay is ignored by the constant schedule, and decay 1 is constant
    assert NoisySGD(settings(noise_decay=0.3)).plan() == NoisySGD(s).plan()
    assert NoisySGD(settings(noise_schedule="exp_decay", noise_decay=1.0)).plan() == (
        NoisySGD(s).plan()
    )


@pytest.mark.parametrize("Estimator", [DPLogisticRegression, DPRidge])
def test_adp_sgd_with_constant_steps_is_noisy_sgd_bit_for_bit(Estimator, binary_data):
    X, y = binary_data
    # With constant steps chosen explicitly (learning_rate='auto' decays them for adp_sgd).
    kwargs = dict(max_iter=3, random_state=7, learning_rate="constant")
    a = Estimator(optimizer="noisy_sgd", **kwargs).fit(X, y)
    b = Estimator(optimizer="adp_sgd", **kwargs).fit(X, y)
    np.testing.assert_array_equal(a.coef_, b.coef_)
    np.testing.assert_array_equal(a.intercept_, b.intercept_)
    assert a.noise_multiplier_ == b.noise_multiplier_
    assert a.dp_event_ == b.dp_event_


def test_adp_sgd_mlp_with_constant_steps_is_noisy_sgd_bit_for_bit(binary_data):
    X, y = binary_data
    kwargs = dict(hidden_layer_sizes=(8,), max_iter=2, random_state=3, learning_rate="constant")
    a = DPMLPClassifier(optimizer="noisy_sgd", **kwargs).fit(X, y)
    b = DPMLPClassifier(optimizer="adp_sgd", **kwargs).fit(X, y)
    for wa, wb in zip(a.coefs_, b.coefs_, strict=True):
        np.testing.assert_array_equal(wa, wb)


# --- shapes -------------------------------------------------------------------------------------
def test_adp_noise_follows_the_inverse_square_root_of_the_step_size():
    s = settings(learning_rate_schedule="invscaling", power_t=0.5)
    levels = ADPSGD(s).noise_levels
    rates = s.learning_rates()
    ideal = np.sqrt(rates[0] / rates)
    ideal /= ideal.max()  # levels are relative to the largest
    assert np.all(np.diff(levels) >= 0)  # smaller steps, more noise
    ratio = (ideal.max() / ideal.min()) ** (1 / 15)
    assert np.all(levels <= ideal + 1e-12) and np.all(levels >= ideal / ratio - 1e-12)
    # noisy_sgd ignores the step sizes: constant noise
    assert np.all(NoisySGD(s).noise_levels == 1.0)


def test_invscaling_rates():
    rates = fixed_learning_rates("invscaling", 2.0, n_steps=60, steps_per_epoch=20, power_t=0.5)
    assert rates[0] == 2.0
    assert rates[20] == pytest.approx(2.0 / np.sqrt(2))  # one epoch in
    assert fixed_learning_rates("adagrad_norm", 2.0, 60, 20, 0.5) is None
    with pytest.raises(ValueError, match="learning_rate must be one of"):
        fixed_learning_rates("adaptive", 2.0, 60, 20, 0.5)


_SLOW = pytest.mark.slow  # re-accounting with a PLD 10x finer than the calibration's: ~40 s


@pytest.mark.parametrize(
    "kwargs, interval",
    [
        (dict(optimizer="noisy_sgd", noise_schedule="exp_decay", noise_decay=0.3), 1e-4),
        pytest.param(dict(optimizer="adp_sgd", learning_rate="invscaling"), 1e-5, marks=_SLOW),
        pytest.param(dict(optimizer="noisy_sgd", noise_schedule="exp_decay", noise_decay=0.3),
                     1e-5, marks=_SLOW),
        pytest.param(dict(optimizer="adp_sgd", learning_rate="invscaling",
                          noise_schedule="step_decay"), 1e-5, marks=_SLOW),
        pytest.param(dict(optimizer="adp_sgd", learning_rate="adagrad_norm"), 1e-5, marks=_SLOW),
    ],
    ids=["exp-decay-sentinel", "adp-invscaling", "exp-decay", "adp-and-step-decay",
         "adp-adagrad"],
)
def test_heterogeneous_runs_spend_exactly_the_budget(kwargs, interval, binary_data):
    X, y = binary_data
    clf = DPLogisticRegression(privacy=(1.0, 1e-5), max_iter=3, random_state=0, **kwargs)
    clf.fit(X, y)
    epsilon = clf.privacy_spent_[0]
    assert 0.995 * 1.0 <= epsilon <= 1.0
    # dp_event_ describes the real heterogeneous run; re-accounting it gives at most epsilon.
    assert len(clf.dp_event_.events) > 1
    fine = PLDAccountant(value_discretization_interval=interval).compose(clf.dp_event_)
    assert fine.get_epsilon(1e-5) <= epsilon * (1 + 1e-3)
    assert clf.score(X, y) > 0.7


@pytest.mark.slow  # ~6 s; the default run's schedule sentinel checks the same bracket
def test_calibrated_noise_of_a_decaying_schedule_brackets_the_constant_one():
    s = settings(noise_schedule="exp_decay", noise_decay=0.25)
    optimizer = NoisySGD(s)
    calibration = calibrate(optimizer.plan(), 1.0, 1e-5, "pld")
    constant = calibrate(NoisySGD(settings()).plan(), 1.0, 1e-5, "pld")
    first = calibration.noise_multiplier * optimizer.noise_levels[0]
    last = calibration.noise_multiplier * optimizer.noise_levels[-1]
    assert first > constant.noise_multiplier > last
    assert last / first == pytest.approx(optimizer.noise_levels[-1], rel=1e-12)


# --- the noise that is run ----------------------------------------------------------------------
class ZeroModel:
    """Zero gradients: every parameter change is noise (times the step size)."""

    n_params = 4000

    def init_params(self, device, rng):
        return torch.zeros(self.n_params, device=device)

    def penalty_mask(self, device):
        return torch.zeros(self.n_params, device=device)

    def example_aux(self, X):
        return None

    def clipped_grad_sum(self, params, Xb, yb, aux_b, max_norm, out):
        return out.zero_()


def test_injected_noise_follows_the_schedule_step_by_step():
    s = settings(noise_schedule="exp_decay", noise_decay=0.2, epochs=1, batch_size=300,
                 average=0.0)
    optimizer = NoisySGD(s)
    calibration = calibrate(optimizer.plan(), 2.0, 1e-5, "pld")
    data = TrainingData(torch.zeros(3000, 1), torch.zeros(3000))
    trajectory = []

    class Recorder(ZeroModel):
        def clipped_grad_sum(self, params, Xb, yb, aux_b, max_norm, out):
            trajectory.append(params.clone())
            return out.zero_()

    final = optimizer.train(Recorder(), data, calibration, FitRandomness(0, CPU))
    trajectory.append(final)
    steps = torch.stack(trajectory).diff(dim=0)  # step t moves by -lr * noise_t / (q n)
    measured = steps.std(dim=1).numpy()
    expected = (s.learning_rate * calibration.noise_multiplier * s.max_grad_norm
                * optimizer.noise_levels / s.batch_size)
    np.testing.assert_allclose(measured, expected, rtol=0.05)  # 4000 coordinates per step
    assert measured[0] > 3 * measured[-1]


def test_adagrad_norm_reads_only_released_values():
    acc = AdaGradNorm(eta0=1.0)
    assert acc.rate() == 1.0
    released = torch.full((100,), 0.3)  # ||g~||^2 = 9
    acc.update(released, noise_variance=0.05)  # expected noise energy 100 * 0.05 = 5
    assert acc.b_sq == pytest.approx(1.0 + 9.0 - 5.0)
    acc.update(torch.zeros(100), noise_variance=0.05)  # negative estimate: only the floor
    assert acc.b_sq == pytest.approx(5.0 + AdaGradNorm.FLOOR)
    assert acc.rate() == pytest.approx(1 / np.sqrt(5.0))


def test_adagrad_norm_noisy_sgd_keeps_the_constant_plan(binary_data):
    X, y = binary_data
    a = DPLogisticRegression(max_iter=2, random_state=0).fit(X, y)
    b = DPLogisticRegression(max_iter=2, random_state=0, learning_rate="adagrad_norm").fit(X, y)
    assert a.dp_event_ == b.dp_event_  # the step sizes are post-processing
    assert not np.array_equal(a.coef_, b.coef_)


def test_schedules_work_for_mlps(binary_data):
    X, y = binary_data
    clf = DPMLPClassifier(hidden_layer_sizes=(8,), max_iter=2, optimizer="adp_sgd",
                          learning_rate="invscaling", noise_schedule="poly_decay",
                          random_state=0).fit(X, y)
    assert clf.privacy_spent_[0] <= 1.0


def test_last_iterate_accountant_refuses_schedules(binary_data):
    X, y = binary_data
    base = dict(accountant="last_iterate", projection_radius=5.0, max_row_norm=2.0, eta0=0.5,
                average=False, max_iter=1)
    with pytest.raises(ValueError, match="constant step size and constant noise"):
        DPLogisticRegression(**base, learning_rate="invscaling").fit(X, y)
    with pytest.raises(ValueError, match="constant step size and constant noise"):
        DPLogisticRegression(**base, noise_schedule="exp_decay").fit(X, y)


def test_adp_sgd_by_default_decays_its_steps_and_shapes_its_noise():
    # learning_rate='auto': ADP-SGD as its paper defines it, not DP-SGD in disguise. (A full fit
    # calibrates a 16-level plan, ~8 s: test_every_optimizer_fits_every_estimator does one.)
    from skdp._fit.sgd import schedule_settings

    assert DPLogisticRegression().learning_rate == "auto"

    def schedule(**params):
        return schedule_settings(DPLogisticRegression(**params))["learning_rate_schedule"]

    assert schedule(optimizer="adp_sgd") == "invscaling"
    assert schedule(optimizer="noisy_sgd") == "constant"
    assert schedule(optimizer="adp_sgd", learning_rate="adagrad_norm") == "adagrad_norm"
    shaped = ADPSGD(settings(learning_rate_schedule="invscaling")).noise_levels
    assert shaped[-1] > shaped[0]  # smaller late steps get more noise
