"""Poisson sampling, the noise DP-SGD adds, reproducibility, and the non-private limit."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from scipy import stats
from sklearn.linear_model import LogisticRegression, Ridge

from skdp._engine._device import FitRandomness
from skdp._engine._sampling import FullBatchSampler, PoissonSampler
from skdp._engine.rows.training_data import TrainingData
from skdp.accounting import Calibration, PrivacyPlan, Sampling
from skdp.linear_model import DPLogisticRegression, DPRidge
from skdp.mechanisms._noisy_sgd import NoisySGD
from skdp.mechanisms._sgd.settings import SGDSettings, steps_per_epoch

CPU = torch.device("cpu")

# --- Poisson sampling -------------------------------------------------------------------------


def draw_batches(n, q, draws, seed=0):
    sampler = PoissonSampler(n, q, np.random.default_rng(seed))
    return [sampler.sample() for _ in range(draws)]


def test_poisson_batches_are_distinct_rows_in_range():
    n = 300
    for batch in draw_batches(n, 0.3, 200):
        assert batch.dtype.kind == "i"
        assert np.unique(batch).size == batch.size
        if batch.size:
            assert batch.min() >= 0 and batch.max() < n


def test_poisson_batch_size_is_binomial():
    n, q, draws = 1000, 0.05, 4000
    sizes = np.array([b.size for b in draw_batches(n, q, draws, seed=1)])
    mean, var = n * q, n * q * (1 - q)
    # The sample mean has standard error sqrt(var / draws) ~ 0.1; the variance ~ 2% relative.
    assert abs(sizes.mean() - mean) < 5 * math.sqrt(var / draws)
    assert sizes.var(ddof=1) == pytest.approx(var, rel=0.12)
    assert PoissonSampler(n, q, np.random.default_rng(0)).expected_batch_size == mean


def test_poisson_inclusion_is_uniform_and_independent():
    n, q, draws = 200, 0.1, 3000
    counts = np.zeros(n)
    pair = 0
    for batch in draw_batches(n, q, draws, seed=2):
        counts[batch] += 1
        pair += (0 in batch) and (1 in batch)
    # Each row's count is Binomial(draws, q): the standardised squares sum to a chi-square with
    # about n degrees of freedom.
    chi2 = float((((counts - draws * q) ** 2) / (draws * q * (1 - q))).sum())
    assert stats.chi2.ppf(1e-4, n) < chi2 < stats.chi2.ppf(1 - 1e-4, n)
    assert counts.mean() / draws == pytest.approx(q, rel=0.02)
    # Rows are included independently: a pair appears together with probability q^2.
    assert pair / draws == pytest.approx(q * q, abs=5 * math.sqrt(q * q / draws))


def test_poisson_sampling_produces_empty_batches_when_n_q_is_small():
    n, q, draws = 50, 0.02, 2000
    sizes = np.array([b.size for b in draw_batches(n, q, draws, seed=3)])
    p_empty = (1 - q) ** n  # ~0.364
    assert (sizes == 0).mean() == pytest.approx(p_empty, abs=0.05)


def test_poisson_sampler_is_reproducible_from_its_generator():
    a = draw_batches(100, 0.2, 20, seed=7)
    b = draw_batches(100, 0.2, 20, seed=7)
    c = draw_batches(100, 0.2, 20, seed=8)
    assert all(np.array_equal(x, y) for x, y in zip(a, b, strict=True))
    assert not all(np.array_equal(x, y) for x, y in zip(a, c, strict=True))


def test_full_batch_sampler_returns_every_row():
    sampler = FullBatchSampler(17)
    assert np.array_equal(sampler.sample(), np.arange(17))
    assert sampler.expected_batch_size == 17.0


@pytest.mark.parametrize("Estimator", [DPLogisticRegression, DPRidge])
def test_fit_survives_empty_batches(Estimator):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(50, 3)) / 2
    y = (X[:, 0] > 0).astype(int) if Estimator is DPLogisticRegression else X[:, 0]
    est = Estimator(privacy=(2.0, 1e-5), batch_size=1, max_iter=2, random_state=0).fit(X, y)
    assert est.batch_size_ == 1
    assert est.n_steps_ == 100  # 50 steps per epoch, about a third of them with an empty batch
    assert np.all(np.isfinite(est.coef_)) and np.all(np.isfinite(est.intercept_))


# --- the noise --------------------------------------------------------------------------------


class ZeroGradientModel:
    """A model whose clipped gradient sums are zero, so training moves the parameters by noise
    alone. Records the batches and clipping bounds it is given."""

    def __init__(self, n_params: int):
        self.n_params = n_params
        self.batch_sizes: list[int] = []
        self.max_norms: list[float | None] = []

    def init_params(self, device, rng):
        return torch.zeros(self.n_params, dtype=torch.float32, device=device)

    def penalty_mask(self, device):
        return torch.ones(self.n_params, dtype=torch.float32, device=device)

    def clipped_grad_sum(self, params, Xb, yb, aux_b, max_norm, out):
        self.batch_sizes.append(Xb.shape[0])
        self.max_norms.append(max_norm)
        return out.zero_()


class CountingModel(ZeroGradientModel):
    """Each example contributes a gradient of ones: the sum is the realised batch size."""

    def clipped_grad_sum(self, params, Xb, yb, aux_b, max_norm, out):
        super().clipped_grad_sum(params, Xb, yb, aux_b, max_norm, out)
        return out.fill_(float(Xb.shape[0]))


def tiny_data(n):
    X = torch.zeros(n, 2)
    return TrainingData(X, torch.zeros(n), torch.ones(n))


def run_engine(model, *, n, batch_size, epochs, lr, clip, sigma, seed=0, average=0.0, l2=0.0):
    settings = SGDSettings(
        n_samples=n,
        batch_size=batch_size,
        epochs=epochs,
        learning_rate=lr,
        max_grad_norm=clip,
        l2=l2,
        average=average,
    )
    engine = NoisySGD(settings)
    plan = engine.plan()
    if sigma > 0:
        calibration = Calibration(
            plan, noise_multiplier=sigma, epsilon=1.0, delta=1e-5, accountant="pld"
        )
    else:
        calibration = Calibration.non_private(plan)
    params = engine.train(model, tiny_data(n), calibration, FitRandomness(seed, CPU))
    return params, settings


@pytest.mark.parametrize(
    ("n", "batch_size", "epochs"),
    [(200, 20, 3), (64, 64, 25)],
    ids=["poisson", "full_batch"],
)
def test_noise_has_the_calibrated_scale(n, batch_size, epochs):
    lr, clip, sigma, n_params = 0.5, 3.0, 2.0, 20_000
    model = ZeroGradientModel(n_params)
    params, settings = run_engine(
        model, n=n, batch_size=batch_size, epochs=epochs, lr=lr, clip=clip, sigma=sigma
    )
    steps = settings.n_steps
    assert steps == epochs * steps_per_epoch(n, batch_size) == len(model.batch_sizes)
    # Clipping is on, at the bound the accounting assumes.
    assert model.max_norms == [clip] * steps
    expected_batch = settings.sampling_rate * n
    # params = -lr * sum_t N(0, (sigma C)^2) / (q n): independent noise in every step.
    expected_std = lr * sigma * clip * math.sqrt(steps) / expected_batch
    p = params.double().numpy()
    assert p.std() == pytest.approx(expected_std, rel=0.15)
    assert p.std() == pytest.approx(expected_std, rel=0.03)  # 20,000 draws: ~0.5% error
    assert abs(p.mean()) < 5 * expected_std / math.sqrt(n_params)
    # Gaussian: the kurtosis of a normal sample is 3.
    assert stats.kurtosis(p, fisher=False) == pytest.approx(3.0, abs=0.15)


def test_noise_differs_between_coordinates_and_steps():
    # The same noise draw repeated every step would give std ~ T instead of sqrt(T).
    model = ZeroGradientModel(5000)
    one, _ = run_engine(model, n=100, batch_size=100, epochs=1, lr=1.0, clip=1.0, sigma=1.0)
    model = ZeroGradientModel(5000)
    many, _ = run_engine(model, n=100, batch_size=100, epochs=16, lr=1.0, clip=1.0, sigma=1.0)
    ratio = many.double().std() / one.double().std()
    assert float(ratio) == pytest.approx(4.0, rel=0.1)


def test_non_private_run_adds_no_noise_and_does_not_clip():
    model = ZeroGradientModel(100)
    params, _ = run_engine(model, n=100, batch_size=10, epochs=2, lr=1.0, clip=1.0, sigma=0.0)
    assert torch.equal(params, torch.zeros(100))
    assert set(model.max_norms) == {None}


def test_noisy_sum_is_divided_by_the_expected_not_the_realised_batch_size():
    # Dividing by the realised batch size would leak it outside the accounting.
    n, batch_size, lr = 100, 10, 0.1
    model = CountingModel(3)
    params, settings = run_engine(
        model, n=n, batch_size=batch_size, epochs=3, lr=lr, clip=1.0, sigma=0.0
    )
    sizes = np.array(model.batch_sizes)
    assert sizes.std() > 0  # Poisson batches vary
    expected = -lr * sizes.sum() / (settings.sampling_rate * n)
    np.testing.assert_allclose(params.numpy(), expected, rtol=1e-5)


@pytest.mark.parametrize(("fraction", "first"), [(0.5, 6), (0.25, 8), (0.1, 10), (1.0, 1)])
def test_averaging_releases_the_mean_of_the_last_iterates(fraction, first):
    n, lr = 50, 1.0
    model = CountingModel(2)
    params, settings = run_engine(
        model, n=n, batch_size=n, epochs=10, lr=lr, clip=1.0, sigma=0.0, average=fraction
    )
    # Full batch: every step moves by -lr, so the iterates are -1, ..., -10; the last
    # round(fraction * 10) of them are averaged.
    assert settings.n_steps == 10
    np.testing.assert_allclose(params.numpy(), -np.mean(np.arange(first, 11)), rtol=1e-6)


def test_engine_plan_matches_its_sampling():
    poisson = NoisySGD(SGDSettings(1000, 50, 3, 0.1, 1.0)).plan()
    assert poisson == PrivacyPlan.constant(60, 0.05, Sampling.POISSON)
    full = NoisySGD(SGDSettings(1000, 5000, 3, 0.1, 1.0)).plan()
    assert full == PrivacyPlan.constant(3, 1.0, Sampling.FULL_BATCH)


# --- reproducibility --------------------------------------------------------------------------


def _data(n=400, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3)) / 2
    y = (X @ [1.0, -1.0, 0.5] > 0).astype(int)
    return X, y


def _fit(random_state):
    X, y = _data()
    return DPLogisticRegression(
        privacy=(1.0, 1e-5), batch_size=50, max_iter=2, random_state=random_state
    ).fit(X, y)


def test_same_random_state_gives_identical_models():
    a, b = _fit(3), _fit(3)
    assert np.array_equal(a.coef_, b.coef_)
    assert np.array_equal(a.intercept_, b.intercept_)


def test_different_random_states_give_different_models():
    assert not np.array_equal(_fit(3).coef_, _fit(4).coef_)


def test_random_state_none_is_not_replayable_through_numpy_seed():
    np.random.seed(0)  # noqa: NPY002 (the global state must not seed the noise)
    a = _fit(None)
    np.random.seed(0)  # noqa: NPY002 (the global state must not seed the noise)
    b = _fit(None)
    assert not np.array_equal(a.coef_, b.coef_)


def test_random_state_instances_are_reproducible():
    a = _fit(np.random.RandomState(5))
    b = _fit(np.random.RandomState(5))
    assert np.array_equal(a.coef_, b.coef_)


def test_fit_randomness_streams_are_independent_and_seeded():
    a, b = FitRandomness(11, CPU), FitRandomness(11, CPU)
    assert a.sampling.integers(2**62) == b.sampling.integers(2**62)
    assert torch.equal(torch.randn(4, generator=a.noise), torch.randn(4, generator=b.noise))
    # The noise stream does not depend on how many sampling draws were made before it.
    c = FitRandomness(11, CPU)
    c.sampling.random(1000)
    d = FitRandomness(11, CPU)
    assert torch.equal(torch.randn(4, generator=c.noise), torch.randn(4, generator=d.noise))
    # Generators are accepted by the engine too.
    e = FitRandomness(np.random.default_rng(5), CPU)
    f = FitRandomness(np.random.default_rng(5), CPU)
    assert torch.equal(torch.randn(4, generator=e.noise), torch.randn(4, generator=f.noise))
    with pytest.raises(ValueError):
        FitRandomness("seed", CPU)


# --- the non-private limit --------------------------------------------------------------------


@pytest.fixture(scope="module")
def well_conditioned():
    rng = np.random.default_rng(0)
    n = 200
    X = rng.normal(size=(n, 3))
    signal = X @ np.array([1.0, -0.5, 0.25])
    return X, signal + 0.5 + rng.normal(size=n), signal + 0.3 + 0.1 * rng.normal(size=n)


@pytest.mark.parametrize(
    ("labels", "C"),
    [("binary", 1.0), ("binary", 0.1), ("multinomial", 0.5)],
)
def test_non_private_logistic_matches_sklearn(well_conditioned, labels, C):
    X, latent, _ = well_conditioned
    y = (latent > 0).astype(int) if labels == "binary" else np.digitize(latent, [0.0, 1.0])
    ours = DPLogisticRegression(
        privacy=(math.inf, 0),
        C=C,
        batch_size=len(X),
        average=False,
        eta0=4.0,
        max_iter=1000,
        random_state=0,
    ).fit(X, y)
    ref = LogisticRegression(C=C, tol=1e-10, max_iter=10_000).fit(X, y)
    assert ours.coef_.shape == ref.coef_.shape
    np.testing.assert_allclose(ours.coef_, ref.coef_, atol=1e-4)
    np.testing.assert_allclose(ours.intercept_, ref.intercept_, atol=1e-4)


@pytest.mark.parametrize("alpha", [1.0, 10.0])
def test_non_private_ridge_matches_sklearn(well_conditioned, alpha):
    X, _, y = well_conditioned
    ours = DPRidge(
        privacy=(math.inf, 0),
        alpha=alpha,
        max_row_norm=None,  # the rows as given: full-batch GD must reach Ridge's solution
        batch_size=len(X),
        average=False,
        eta0=0.5,
        max_iter=300,
        random_state=0,
    ).fit(X, y)
    ref = Ridge(alpha=alpha).fit(X, y)
    np.testing.assert_allclose(ours.coef_, ref.coef_, atol=1e-4)
    assert ours.intercept_ == pytest.approx(ref.intercept_, abs=1e-4)
