"""Numerical robustness: clipping keeps the sensitivity bound for rows of any size, float64
input, empty Poisson batches, and stable predictions."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch

from skdp._engine._glm import GLMLoss, LinearModel
from skdp._engine._mlp import Activation, MLPModel
from skdp._engine._sampling import PoissonSampler, StepBatches
from skdp.neural_network import DPMLPClassifier, DPMLPRegressor
from tests._inventory import CLASSIFIERS, ESTIMATORS

CLIP = 0.7
F32_MAX = float(np.finfo(np.float32).max)
HUGE_ROWS = [1e4, 1e15, 1e30, 3e38]  # the last is near the float32 maximum


def models():
    yield "logistic", LinearModel(4, 1, GLMLoss.LOGISTIC, True), "binary"
    yield "softmax", LinearModel(4, 3, GLMLoss.SOFTMAX, True), "multiclass"
    yield "squared", LinearModel(4, 2, GLMLoss.SQUARED, False), "regression2"
    for activation in ("relu", "tanh", "logistic"):
        mlp = MLPModel((4, 5, 3), Activation(activation), GLMLoss.SOFTMAX)
        yield f"mlp_{activation}", mlp, "multiclass"
    yield "mlp_squared", MLPModel((4, 6, 1), Activation.RELU, GLMLoss.SQUARED), "regression1"


MODELS = list(models())


def targets(kind: str, n: int, gen: torch.Generator) -> torch.Tensor:
    if kind == "binary":
        return torch.randint(0, 2, (n,), generator=gen).float()
    if kind == "multiclass":
        return torch.randint(0, 3, (n,), generator=gen)
    width = 2 if kind == "regression2" else 1
    return torch.randn(n, width, generator=gen).squeeze(1) if width == 1 else torch.randn(
        n, width, generator=gen
    )


def clipped_sum(model, params, X, y):
    out = torch.empty_like(params)
    aux = model.example_aux(X)
    return model.clipped_grad_sum(params, X, y, aux, CLIP, out=out).clone()


@pytest.mark.parametrize("name, model, kind", MODELS, ids=[m[0] for m in MODELS])
@pytest.mark.parametrize("huge", HUGE_ROWS)
def test_one_huge_row_moves_the_clipped_sum_by_at_most_the_bound(name, model, kind, huge):
    """Add/remove one row of any magnitude: the clipped sum moves by <= C, and stays finite;
    replacing a row moves it by <= 2C."""
    gen = torch.Generator().manual_seed(0)
    params = model.init_params(torch.device("cpu"), np.random.default_rng(0))
    if isinstance(model, LinearModel):
        params = torch.randn(model.n_params, generator=gen)
    X = torch.randn(16, 4, generator=gen)
    y = targets(kind, 17, gen)
    row = torch.randn(1, 4, generator=gen)
    row = row / torch.linalg.vector_norm(row) * min(huge, F32_MAX / 2)
    X_add = torch.cat([X, row])
    base = clipped_sum(model, params, X, y[:16])
    added = clipped_sum(model, params, X_add, y)
    assert torch.isfinite(base).all() and torch.isfinite(added).all()
    assert float(torch.linalg.vector_norm((added - base).double())) <= CLIP * (1 + 1e-4)
    X_rep = X.clone()
    X_rep[0] = row[0]
    replaced = clipped_sum(model, params, X_rep, y[:16])
    assert torch.isfinite(replaced).all()
    assert float(torch.linalg.vector_norm((replaced - base).double())) <= 2 * CLIP * (1 + 1e-4)


@pytest.mark.parametrize("name, model, kind", MODELS, ids=[m[0] for m in MODELS])
def test_empty_batch_sums_to_zero(name, model, kind):
    gen = torch.Generator().manual_seed(1)
    params = model.init_params(torch.device("cpu"), np.random.default_rng(0))
    X = torch.empty(0, 4)
    y = targets(kind, 0, gen)
    out = clipped_sum(model, params, X, y)
    assert torch.equal(out, torch.zeros_like(out))


SMALL = {
    DPMLPClassifier: {"hidden_layer_sizes": (4,)},
    DPMLPRegressor: {"hidden_layer_sizes": (4,)},
}
ESTIMATOR_PARAMS = [(Estimator, SMALL.get(Estimator, {})) for Estimator in ESTIMATORS]
IDS = [E.__name__ for E, _ in ESTIMATOR_PARAMS]


def data(Estimator, n=40, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    if Estimator in CLASSIFIERS:
        return X, (X[:, 0] > 0).astype(int)
    return X, X[:, 0] / 3


pytestmark = pytest.mark.usefixtures("quiet_privacy_warnings")


@pytest.mark.parametrize("Estimator, params", ESTIMATOR_PARAMS, ids=IDS)
def test_empty_poisson_batches_are_noise_only_steps(monkeypatch, Estimator, params):
    """With every Poisson batch empty, the released model is a function of the noise alone:
    the same for any data, and not the initial model (the noise was added)."""
    monkeypatch.setattr(PoissonSampler, "sample", lambda self: np.empty(0, dtype=np.int64))
    # The training loop draws an epoch of batches at once.
    monkeypatch.setattr(PoissonSampler, "sample_steps",
                        lambda self, k: StepBatches.concatenate([self.sample()] * k))
    X, y = data(Estimator)
    X2 = np.random.default_rng(9).normal(size=X.shape) * 100
    kwargs = dict(privacy=(1.0, 1e-5), batch_size=4, max_iter=1, random_state=3, **params)
    first = Estimator(**kwargs).fit(X, y)
    second = Estimator(**kwargs).fit(X2, y)
    assert first.n_steps_ == 10 and first.batch_size_ == 4
    state = first.coef_ if hasattr(first, "coef_") else first.coefs_[-1]
    other = second.coef_ if hasattr(second, "coef_") else second.coefs_[-1]
    np.testing.assert_array_equal(state, other)
    assert np.all(np.isfinite(state))
    if hasattr(first, "coef_"):  # linear models start at 0
        assert np.any(state != 0)
    probe = np.random.default_rng(1).normal(size=(5, 3))
    np.testing.assert_array_equal(first.predict(probe), second.predict(probe))


@pytest.mark.parametrize("Estimator, params", ESTIMATOR_PARAMS, ids=IDS)
def test_float64_and_float32_input(Estimator, params):
    X, y = data(Estimator)
    kwargs = dict(privacy=(2.0, 1e-5), max_iter=2, random_state=0, **params)
    from_64 = Estimator(**kwargs).fit(X.astype(np.float64), y)
    from_32 = Estimator(**kwargs).fit(X.astype(np.float32), y)
    # Compute is float32 either way: the same data gives the same model.
    probe = X[:10]
    np.testing.assert_allclose(
        np.asarray(from_64.predict(probe), dtype=float),
        np.asarray(from_32.predict(probe), dtype=float),
        rtol=1e-5,
        atol=1e-6,
    )


@pytest.mark.parametrize("Estimator, params", ESTIMATOR_PARAMS, ids=IDS)
@pytest.mark.parametrize("scale", [1e-30, 1e10, 1e30, 1e38])
def test_huge_feature_scales_train_and_predict_finitely(Estimator, params, scale):
    X, y = data(Estimator)
    X = X * scale / np.abs(X).max()  # largest entry = scale (<= float32 max)
    est = Estimator(privacy=(1.0, 1e-5), max_iter=2, random_state=0, **params).fit(X, y)
    for probe in (X, X[:1] * 0.0, np.full((2, 3), 1e38)):
        with warnings.catch_warnings():
            warnings.simplefilter("error", RuntimeWarning)  # no overflow inside predict
            prediction = np.asarray(est.predict(probe))
            if hasattr(est, "predict_proba"):
                proba = est.predict_proba(probe)
                assert np.all(np.isfinite(proba))
        if prediction.dtype.kind == "f":
            assert np.all(np.isfinite(prediction))


@pytest.mark.parametrize("Estimator, params", ESTIMATOR_PARAMS, ids=IDS)
def test_predictions_are_deterministic(Estimator, params):
    X, y = data(Estimator)
    kwargs = dict(privacy=(1.0, 1e-5), max_iter=2, random_state=7, **params)
    a = Estimator(**kwargs).fit(X, y)
    b = Estimator(**kwargs).fit(X, y)
    np.testing.assert_array_equal(a.predict(X), b.predict(X))
    np.testing.assert_array_equal(a.predict(X), a.predict(X.copy()))
    if hasattr(a, "predict_proba"):
        np.testing.assert_array_equal(a.predict_proba(X), b.predict_proba(X))
