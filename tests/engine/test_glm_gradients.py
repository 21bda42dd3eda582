"""The closed-form per-example gradients of LinearModel against autograd, and the sensitivity of
the clipped sum that the privacy accounting assumes."""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from hypothesis import given, settings
from hypothesis import strategies as st

from skdp._engine._glm import GLMLoss, LinearModel

CPU = torch.device("cpu")

# (loss, n_outputs)
CASES = [
    (GLMLoss.LOGISTIC, 1),
    (GLMLoss.SOFTMAX, 4),
    (GLMLoss.SQUARED, 1),
    (GLMLoss.SQUARED, 3),
]
CASE_IDS = ["logistic", "softmax4", "squared1", "squared3"]


def make_problem(loss, n_outputs, fit_intercept, *, n=64, d=5, scale=1.0, seed=0):
    """Random float32 parameters and data in the layouts the engine uses."""
    gen = torch.Generator().manual_seed(seed)
    model = LinearModel(d, n_outputs, loss, fit_intercept)
    params = torch.randn(model.n_params, generator=gen) * 0.5
    X = torch.randn(n, d, generator=gen) * scale
    if loss is GLMLoss.LOGISTIC:
        y = torch.randint(0, 2, (n,), generator=gen).float()
    elif loss is GLMLoss.SOFTMAX:
        y = torch.randint(0, n_outputs, (n,), generator=gen)
    else:
        y = torch.randn(n, n_outputs, generator=gen) * scale
    return model, params, X, y


def oracle_loss(loss, n_features, n_outputs, fit_intercept):
    """The per-example loss written from scratch on the flat parameter vector ``[W.ravel(), b]``."""
    n_weights = n_features * n_outputs

    def per_example(params, x, y):
        W = params[:n_weights].reshape(n_features, n_outputs)
        z = x @ W
        if fit_intercept:
            z = z + params[n_weights:]
        if loss is GLMLoss.LOGISTIC:
            return F.binary_cross_entropy_with_logits(z[0], y)
        if loss is GLMLoss.SOFTMAX:
            return F.cross_entropy(z.unsqueeze(0), y.unsqueeze(0))
        return 0.5 * ((z - y) ** 2).sum()

    return per_example


def oracle_gradients(model, params, X, y):
    """Per-example gradients by autograd, in float64 on the same (float32) values."""
    fn = oracle_loss(model.loss, model.n_features, model.n_outputs, model.fit_intercept)
    y64 = y if y.dtype == torch.int64 else y.double()
    return torch.func.vmap(torch.func.grad(fn), in_dims=(None, 0, 0))(
        params.double(), X.double(), y64
    )


def assert_close_to_oracle(ours, oracle, rtol=1e-4):
    atol = rtol * float(oracle.abs().max()) + 1e-30
    torch.testing.assert_close(ours.double(), oracle, rtol=rtol, atol=atol)


def residuals(model, params, X, y):
    return model.residuals(model.decision(params, X), y)


def clipped_sum(model, params, X, y, max_norm):
    out = torch.empty_like(params)
    result = model.clipped_grad_sum(params, X, y, model.example_scales(X), max_norm, out=out)
    assert result.data_ptr() == out.data_ptr()
    return result


@pytest.mark.parametrize("scale", [1.0, 100.0], ids=["unit", "x100"])
@pytest.mark.parametrize("fit_intercept", [True, False], ids=["intercept", "no_intercept"])
@pytest.mark.parametrize(("loss", "n_outputs"), CASES, ids=CASE_IDS)
def test_per_example_gradients_match_autograd(loss, n_outputs, fit_intercept, scale):
    model, params, X, y = make_problem(loss, n_outputs, fit_intercept, scale=scale)
    oracle = oracle_gradients(model, params, X, y)
    assert oracle.shape == (X.shape[0], model.n_params)
    ours = model.per_example_gradients(params, X, y)
    assert ours.shape == oracle.shape
    assert_close_to_oracle(ours, oracle)

    # The closed-form norms, which decide the clipping, are the autograd norms.
    norms = model.per_example_norms(residuals(model, params, X, y), model.example_scales(X))
    assert norms.shape == (X.shape[0],)
    assert_close_to_oracle(norms, torch.linalg.vector_norm(oracle, dim=1))


@pytest.mark.parametrize("scale", [1.0, 100.0], ids=["unit", "x100"])
@pytest.mark.parametrize("fit_intercept", [True, False], ids=["intercept", "no_intercept"])
@pytest.mark.parametrize(("loss", "n_outputs"), CASES, ids=CASE_IDS)
def test_clipped_grad_sum_matches_autograd(loss, n_outputs, fit_intercept, scale):
    model, params, X, y = make_problem(loss, n_outputs, fit_intercept, scale=scale, seed=1)
    oracle = oracle_gradients(model, params, X, y)
    norms = torch.linalg.vector_norm(oracle, dim=1)
    # A bound at the median norm: about half the examples are clipped, half are not.
    max_norm = float(norms.median())
    assert (norms > max_norm * 1.01).any() and (norms < max_norm * 0.99).any()
    factors = torch.clamp(max_norm / norms, max=1.0)
    expected = (oracle * factors.unsqueeze(1)).sum(dim=0)
    assert_close_to_oracle(clipped_sum(model, params, X, y, max_norm), expected)
    # Without a bound the plain sum comes back.
    assert_close_to_oracle(clipped_sum(model, params, X, y, None), oracle.sum(dim=0))


@pytest.mark.parametrize(("loss", "n_outputs"), CASES, ids=CASE_IDS)
def test_clipped_grad_sum_of_an_empty_batch_is_zero(loss, n_outputs):
    model, params, X, y = make_problem(loss, n_outputs, True, n=8)
    empty = torch.zeros(0, dtype=torch.int64)
    out = torch.full_like(params, 7.0)
    model.clipped_grad_sum(params, X[empty], y[empty], model.example_scales(X)[empty], 1.0, out)
    assert torch.equal(out, torch.zeros_like(params))


def test_parameter_layout():
    model = LinearModel(3, 2, GLMLoss.SQUARED, True)
    params = torch.arange(model.n_params, dtype=torch.float32)
    assert model.n_params == 8
    assert torch.equal(model.coef(params), torch.arange(6.0).view(3, 2))
    assert torch.equal(model.intercept(params), torch.tensor([6.0, 7.0]))
    assert torch.equal(model.penalty_mask(CPU), torch.tensor([1.0] * 6 + [0.0] * 2))
    no_b = LinearModel(3, 2, GLMLoss.SQUARED, False)
    assert no_b.n_params == 6 and no_b.intercept(params[:6]) is None
    assert torch.equal(no_b.penalty_mask(CPU), torch.ones(6))


# --- sensitivity ------------------------------------------------------------------------------


def sensitivity_gap(model, params, X, y, max_norm, index, replacement=None):
    """L2 distance (float64) between the clipped sums of neighbouring batches."""
    full = clipped_sum(model, params, X, y, max_norm).double()
    keep = torch.arange(X.shape[0]) != index
    if replacement is None:
        other = clipped_sum(model, params, X[keep], y[keep], max_norm).double()
    else:
        X2, y2 = X.clone(), y.clone()
        X2[index], y2[index] = replacement
        other = clipped_sum(model, params, X2, y2, max_norm).double()
    return float(torch.linalg.vector_norm(full - other))


def float_slack(n, max_norm):
    # The sums are float32: allow rounding of the n clipped terms (each of norm <= max_norm).
    return 4 * n * max_norm * float(torch.finfo(torch.float32).eps)


def random_neighbours(loss, n_outputs, seed):
    """A random batch with some extreme rows, and a random extreme replacement row."""
    rng = np.random.default_rng(seed)
    fit_intercept = bool(rng.integers(2))
    n, d = int(rng.integers(1, 40)), int(rng.integers(1, 6))
    model, params, X, y = make_problem(loss, n_outputs, fit_intercept, n=n, d=d, seed=seed)
    params = params * float(10.0 ** rng.integers(-2, 3))
    big = torch.from_numpy(rng.random(n) < 0.3)
    X[big] = X[big] * 1e6
    if loss is GLMLoss.SQUARED:
        y[torch.from_numpy(rng.random(n) < 0.3)] *= 1e6
    x_new = torch.from_numpy(rng.normal(size=d) * 10.0 ** rng.integers(0, 7)).float()
    y_new = y[int(rng.integers(n))].clone()
    if loss is GLMLoss.SQUARED:
        y_new = y_new * 1e6
    max_norm = float(10.0 ** rng.uniform(-2, 2))
    return model, params, X, y, int(rng.integers(n)), (x_new, y_new), max_norm


@pytest.mark.parametrize(("loss", "n_outputs"), CASES, ids=CASE_IDS)
def test_removing_or_replacing_a_row_moves_the_clipped_sum_by_at_most_the_bound(loss, n_outputs):
    removal_gaps = []
    for seed in range(60):
        model, params, X, y, index, replacement, max_norm = random_neighbours(loss, n_outputs, seed)
        n = X.shape[0]
        slack = float_slack(n, max_norm)
        removal = sensitivity_gap(model, params, X, y, max_norm, index)
        assert removal <= max_norm + slack, (seed, removal, max_norm)
        removal_gaps.append(removal / max_norm)
        # Replacement is a removal and an addition: up to twice the bound.
        replace = sensitivity_gap(model, params, X, y, max_norm, index, replacement)
        assert replace <= 2 * max_norm + slack, (seed, replace, max_norm)
        # Every clipped per-example contribution is within the bound.
        for i in range(min(n, 5)):
            single = clipped_sum(model, params, X[i : i + 1], y[i : i + 1], max_norm)
            assert float(torch.linalg.vector_norm(single.double())) <= max_norm * (1 + 1e-6)
    # Not vacuous: the bound is (nearly) reached by rows whose gradient is clipped.
    assert max(removal_gaps) > 0.99


@settings(max_examples=40, deadline=None)
@given(
    case=st.sampled_from(CASES),
    seed=st.integers(0, 2**31 - 1),
    feature_scale=st.sampled_from([1e-3, 1.0, 1e3, 1e6]),
    max_norm=st.floats(1e-3, 1e3),
)
def test_sensitivity_property(case, seed, feature_scale, max_norm):
    loss, n_outputs = case
    model, params, X, y = make_problem(loss, n_outputs, True, n=12, d=3, seed=seed % 10_000)
    X = X * feature_scale
    if loss is GLMLoss.SQUARED:
        y = y * feature_scale
    gap = sensitivity_gap(model, params, X, y, max_norm, seed % X.shape[0])
    assert gap <= max_norm + float_slack(X.shape[0], max_norm)


@pytest.mark.parametrize(
    ("x0", "y0"),
    [(1e20, 0.0), (3e38, 0.0), (1.0, 1e39), (1e30, 1e39)],
    ids=["x_overflows_norm", "x_near_float32_max", "y_beyond_float32", "both_huge"],
)
def test_extreme_rows_keep_the_clipped_sum_finite(x0, y0):
    model = LinearModel(2, 1, GLMLoss.SQUARED, True)
    params = model.init_params(CPU, None) + 0.5  # non-zero weights: the decision overflows too
    X64 = np.array([[x0, 0.0], [0.5, 0.5], [-0.3, 0.2]])
    y64 = np.array([[y0], [1.0], [-1.0]])
    # What the estimators do: validated float64 data cast to float32 on the device.
    X = torch.as_tensor(X64, dtype=torch.float32)
    y = torch.as_tensor(y64, dtype=torch.float32)
    total = clipped_sum(model, params, X, y, 1.0)
    assert torch.isfinite(total).all()
    without = clipped_sum(model, params, X[1:], y[1:], 1.0)
    assert float(torch.linalg.vector_norm((total - without).double())) <= 1.0 + 1e-5


@pytest.mark.parametrize("n_outputs", [3])
def test_extreme_rows_multi_output(n_outputs):
    model = LinearModel(2, n_outputs, GLMLoss.SQUARED, True)
    params = model.init_params(CPU, None) + 0.5
    X = torch.tensor([[1e20, -1e20], [0.5, 0.5], [-0.3, 0.2]], dtype=torch.float32)
    y = torch.tensor([[float("inf"), 0.0, -1.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]])
    total = clipped_sum(model, params, X, y, 1.0)
    without = clipped_sum(model, params, X[1:], y[1:], 1.0)
    assert torch.isfinite(total).all()
    assert float(torch.linalg.vector_norm((total - without).double())) <= 1.0 + 1e-5


@pytest.mark.parametrize("where", ["X", "y"])
def test_values_beyond_float32_are_refused_by_the_estimator(where):
    from skdp.linear_model import DPRidge

    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 3)) / 2
    y = X @ np.array([0.5, -0.3, 0.2])
    if where == "X":
        X[0] = [1e39, 0.0, 0.0]
    else:
        y[0] = -1e39
    with pytest.raises(ValueError, match="float32"):
        DPRidge(privacy=(1.0, 1e-5), max_iter=1, random_state=0).fit(X, y)


@pytest.mark.parametrize("scale", [1e15, 1e20, 1e30])
def test_one_extreme_row_does_not_make_a_private_fit_nan(scale):
    from skdp.linear_model import DPLogisticRegression, DPRidge

    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 3)) / 2
    y = X @ np.array([0.5, -0.3, 0.2])
    X[0] = [scale, -scale, 0.0]
    reg = DPRidge(privacy=(1.0, 1e-5), max_iter=1, random_state=0).fit(X, y)
    assert np.all(np.isfinite(reg.coef_))
    clf = DPLogisticRegression(privacy=(1.0, 1e-5), max_iter=1, random_state=0).fit(X, y > 0)
    assert np.all(np.isfinite(clf.coef_))
