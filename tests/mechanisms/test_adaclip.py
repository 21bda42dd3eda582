"""adaclip: reductions to DP-SGD, sensitivity, noise law, Theorem 1, post-processing, and
robustness of the chosen initial values and bounds across dimensions."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from skdp._engine._glm import LinearModel
from skdp._engine._losses import OutputLoss
from skdp._engine._mlp import Activation, MLPModel
from skdp.accounting import epsilon_of
from skdp.linear_model import DPLogisticRegression, DPRidge
from skdp.mechanisms._adaclip import AdaClipMean, AdaClipParams, AdaClipState
from skdp.neural_network import DPMLPClassifier

CPU = torch.device("cpu")
FROZEN_UNIFORM = {"gamma": 1.0, "beta1": 1.0, "beta2": 1.0}  # a = 0, b = max_grad_norm, fixed


@pytest.fixture
def binary_data():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(400, 6))
    y = (X[:, 0] + 0.5 * X[:, 1] + rng.normal(scale=0.5, size=400) > 0).astype(int)
    return X, y


@pytest.mark.parametrize(
    "make",
    [
        lambda **kw: DPLogisticRegression(max_iter=3, max_grad_norm=0.5, **kw),
        lambda **kw: DPMLPClassifier(hidden_layer_sizes=(5,), max_iter=3, **kw),
    ],
    ids=["logistic", "mlp"],
)
def test_frozen_uniform_adaclip_is_noisy_sgd(make, binary_data):
    """a = 0 and b = C fixed: clip (g / C) to 1, noise sigma, times C = DP-SGD with clip C."""
    X, y = binary_data
    ref = make(privacy=(1.0, 1e-5), random_state=3).fit(X, y)
    ada = make(
        privacy=(1.0, 1e-5), random_state=3, optimizer="adaclip", optimizer_params=FROZEN_UNIFORM
    ).fit(X, y)
    assert ada.noise_multiplier_ == ref.noise_multiplier_
    assert ada.privacy_spent_ == ref.privacy_spent_
    for a, b in zip(_params(ada), _params(ref), strict=True):
        np.testing.assert_allclose(a, b, rtol=2e-3, atol=2e-5)


def _params(est):
    if hasattr(est, "coef_"):
        return [est.coef_, est.intercept_]
    return [*est.coefs_, *est.intercepts_]


def test_without_noise_adaclip_is_plain_sgd(binary_data):
    X, y = binary_data
    kw = dict(privacy=(float("inf"), 0.0), max_iter=3, random_state=1)
    ada = DPLogisticRegression(optimizer="adaclip", **kw).fit(X, y)
    ref = DPLogisticRegression(**kw).fit(X, y)
    np.testing.assert_array_equal(ada.coef_, ref.coef_)


def test_adaptivity_is_free_and_dp_event_reaccounts(binary_data):
    X, y = binary_data
    ada = DPLogisticRegression(optimizer="adaclip", max_iter=4, random_state=0).fit(X, y)
    ref = DPLogisticRegression(max_iter=4, random_state=0).fit(X, y)
    assert ada.privacy_spent_ == ref.privacy_spent_
    assert ada.dp_event_ == ref.dp_event_
    eps = epsilon_of(ada.dp_event_, 1e-5, "pld", pld_interval=1e-5)
    assert eps <= ada.privacy_spent_[0] * (1 + 1e-9)
    assert "adaclip" in ada.privacy_report()
    assert "(g - a) / b, each clipped to L2 norm 1" in ada.privacy_report()


def _privatizer(model, state, noise_std, batch, seed=0):
    gen = torch.Generator().manual_seed(seed)
    like = torch.zeros(model.n_params)
    return AdaClipMean(model, state, [noise_std] * 100, batch, gen, like)


def _random_state(model, seed=0, **params):
    state = AdaClipState(model.n_params, 1.0, AdaClipParams(**params), CPU)
    gen = torch.Generator().manual_seed(seed)
    state.m = torch.randn(model.n_params, generator=gen, dtype=torch.float64)
    state.s_sq = torch.rand(model.n_params, generator=gen, dtype=torch.float64) + 1e-3
    return state


MODELS = {
    "glm-softmax": lambda: LinearModel(4, 3, OutputLoss.SOFTMAX, True),
    "mlp-squared": lambda: MLPModel((4, 5, 2), Activation.RELU, OutputLoss.SQUARED),
}


def _data(model, n=30, seed=0):
    gen = torch.Generator().manual_seed(seed)
    X = torch.randn(n, 4, generator=gen)
    if model.loss is OutputLoss.SOFTMAX:
        y = torch.randint(0, 3, (n,), generator=gen)
    else:
        y = torch.randn(n, 2, generator=gen)
    return X, y


@pytest.mark.parametrize("name", list(MODELS))
@pytest.mark.parametrize("extreme", [None, 1e30, -1e12])
def test_one_row_moves_the_transformed_sum_by_at_most_one(name, extreme):
    """The released quantity before noise, sum_i clip((g_i - a) / b), changes by at most 1
    in L2 when one row is removed, whatever the row holds (add/remove sensitivity 1)."""
    model = MODELS[name]()
    X, y = _data(model)
    if extreme is not None:
        X[0] = extreme
    params = torch.randn(model.n_params, generator=torch.Generator().manual_seed(9))

    def transformed_sum(Xs, ys):
        state = _random_state(model)
        b = state.scale()
        out = torch.empty(model.n_params)
        centre = state.m.clone()
        _privatizer(model, state, 0.0, 10.0)(0, params, Xs, ys, None, out)
        return (out.double() - centre) * 10.0 / b  # invert g~ = a + b W / B

    full, without = transformed_sum(X, y), transformed_sum(X[1:], y[1:])
    assert torch.isfinite(full).all()
    assert float(torch.linalg.vector_norm(full - without)) <= 1.0 + 1e-5


def test_noise_law_on_the_transformed_sum():
    """Per coordinate, (g~ - a) B / b minus the clipped sum has std sigma and mean 0."""
    model = MODELS["glm-softmax"]()
    X, y = _data(model)
    params = torch.zeros(model.n_params)
    sigma, batch = 0.7, 12.0
    draws = []
    for seed in range(400):
        state = _random_state(model, beta1=1.0, beta2=1.0)
        b, a = state.scale(), state.m.clone()
        out = torch.empty(model.n_params)
        _privatizer(model, state, sigma, batch, seed=seed)(0, params, X, y, None, out)
        draws.append(((out.double() - a) * batch / b).numpy())
    clean = np.mean(draws, axis=0)  # the clipped sum (identical in every draw) + mean noise
    noise = np.asarray(draws) - clean
    assert abs(noise.std() - sigma) < 0.03 * sigma
    assert np.abs(np.asarray(draws).mean(axis=0) - clean).max() < 1e-6


def test_theorem_1_identities():
    state = _random_state(MODELS["mlp-squared"](), gamma=0.3)
    s = state.s_sq.sqrt()
    b = state.scale()
    assert torch.isclose((s.square() / b.square()).sum(), torch.tensor(0.3, dtype=torch.float64))
    assert torch.isclose(b.square().sum(), s.sum() ** 2 / 0.3)
    whitening = len(s) * s.square().sum() / s.sum() ** 2
    assert whitening >= 1.0  # whitening adds at least as much noise


def test_start_is_dp_sgd_with_the_clipping_bound():
    for gamma in (0.25, 1.0):
        state = AdaClipState(50, 2.0, AdaClipParams(gamma=gamma), CPU)
        torch.testing.assert_close(state.scale(), torch.full((50,), 2.0, dtype=torch.float64))


def test_state_is_post_processing_of_the_releases():
    """Rerunning the update on the logged releases alone reproduces m and s bit for bit."""
    model = MODELS["mlp-squared"]()
    X, y = _data(model, n=60)
    params = model.init_params(CPU, np.random.default_rng(0))
    state = AdaClipState(model.n_params, 1.0, AdaClipParams(), CPU)
    privatize = _privatizer(model, state, 0.8, 20.0)
    log = []
    for step in range(5):
        out = torch.empty(model.n_params)
        scale = state.scale()
        privatize(step, params, X[step * 12:(step + 1) * 12], y[step * 12:(step + 1) * 12],
                  None, out)
        log.append((out.clone(), scale))
        params = params - 0.1 * out
    replay = AdaClipState(model.n_params, 1.0, AdaClipParams(), CPU)
    for released, scale in log:
        torch.testing.assert_close(replay.scale(), scale, rtol=0, atol=0)
        replay.update(released, scale, 0.8, 20.0)
    assert torch.equal(replay.m, state.m) and torch.equal(replay.s_sq, state.s_sq)


def test_variance_estimates_recover_a_known_std_without_clipping():
    """Stationary gradients with known per-coordinate std, small gamma (clipping rare):
    sqrt(EMA s^2) converges to the true std within ~10% (the spec's test 5)."""
    d, batch, sigma = 8, 200, 0.3
    true_std = torch.linspace(0.05, 0.4, d, dtype=torch.float64)
    state = AdaClipState(
        d, 1.0, AdaClipParams(gamma=0.05, beta2=0.99, variance_cap=1e4), CPU
    )
    gen = torch.Generator().manual_seed(0)
    history = []
    for step in range(3000):
        b, a = state.scale(), state.m.clone()
        g = true_std * torch.randn(batch, d, generator=gen, dtype=torch.float64) + 1.0
        w = (g - a) / b
        w = w / torch.clamp(torch.linalg.vector_norm(w, dim=1, keepdim=True), min=1.0)
        noise = sigma * torch.randn(d, generator=gen, dtype=torch.float64)
        released = a + b * (w.sum(0) + noise) / batch
        state.update(released, b, sigma, float(batch))
        if step >= 2000:
            history.append(state.s_sq.clone())
    estimate = torch.stack(history).mean(0).sqrt()
    assert torch.all((estimate / true_std - 1).abs() < 0.1), (estimate / true_std)


def _synthetic_regression(d, n=1000, seed=0):
    """The paper's §4.1 problem as a model: an intercept-only regression with d outputs whose
    per-example gradient is theta - x_i, with x_i = (1 +/- 1, 0, ..., 0): theta* = e_1."""
    rng = np.random.default_rng(seed)
    Y = np.zeros((n, d))
    Y[:, 0] = 1.0 + np.where(np.arange(n) < n // 2, 1.0, -1.0)
    rng.shuffle(Y)
    return np.zeros((n, 1)), Y


@pytest.mark.parametrize("d", [1, 10, 100, 1000])
def test_no_cold_start_or_runaway_across_dimensions(d):
    """With the documented defaults adaclip neither gets stuck (the paper's s0 and gamma = 1
    leave it at the start: error ~0.6 at d = 10, measured) nor runs away with the dimension
    (the paper's absolute h1/h2 let the noise-only coordinates grow their scale with d). Its
    error stays within 1.3x DP-SGD's from d = 1 to 1000 (measured: 0.2-1.15x)."""
    X, Y = _synthetic_regression(d)
    common = dict(privacy=(2.0, 1e-5), alpha=0.0, max_iter=10, batch_size=50, eta0=0.2,
                  max_grad_norm=1.0, average=False)
    errors = {}
    for opt in ("noisy_sgd", "adaclip"):
        errs = []
        # Four seeds: the errors are heavy-tailed, and with two the ratio at d = 1 swung
        # from 0.17 to 1.33 between two equally valid samplers (40 seeds: 0.62 and 0.66).
        for seed in range(4):
            est = DPRidge(optimizer=opt, random_state=seed, **common).fit(X, Y)
            theta = est.intercept_
            errs.append(float(np.sum((theta - np.eye(d)[0]) ** 2)))
        errors[opt] = np.mean(errs)
    assert errors["adaclip"] < 0.2  # moved from distance 1 towards theta*
    assert errors["adaclip"] <= 1.3 * errors["noisy_sgd"]


def test_adaclip_composes_with_step_size_and_noise_schedules(binary_data):
    X, y = binary_data
    for kw in (dict(learning_rate="adagrad_norm"), dict(noise_schedule="exp_decay")):
        est = DPLogisticRegression(optimizer="adaclip", max_iter=3, random_state=0, **kw)
        assert np.isfinite(est.fit(X, y).coef_).all()
        assert est.privacy_spent_[0] <= 1.0


def test_no_collapse_at_small_noise_on_adult():
    """At small noise the downward bias of clipping on the variance estimates is no longer
    offset by noise, and at gamma = 0.5 the scale collapsed on Adult (0.837 vs DP-SGD's 0.849
    at eps = 8, measured); the default gamma = 0.25 must stay within half a point."""
    from skdp.datasets import adult_preprocessor, load_adult

    X_train, X_test, y_train, y_test = load_adult(return_X_y=True)
    pre = adult_preprocessor().fit(X_train)
    X_train, X_test = pre.transform(X_train), pre.transform(X_test)
    common = dict(privacy=(8.0, 1e-5), random_state=0)
    ada = DPLogisticRegression(optimizer="adaclip", **common).fit(X_train, y_train)
    ref = DPLogisticRegression(**common).fit(X_train, y_train)
    assert ada.score(X_test, y_test) >= ref.score(X_test, y_test) - 0.005
