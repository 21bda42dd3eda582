"""The factored per-example kernels of adaclip and diff2 against materialised per-example
gradients (``per_example_gradients``, itself checked against torch.func elsewhere), and the
sensitivity bounds they must keep whatever a row holds."""

from __future__ import annotations

import pytest
import torch

from skdp._engine._factored import (
    clip_factors,
    difference_sq_norms,
    gradient_sq_norms,
    transformed_sq_norms,
    weighted_difference_sum,
    weighted_gradient_sum,
)
from skdp._engine._glm import LinearModel
from skdp._engine._losses import OutputLoss
from skdp._engine._mlp import Activation, MLPModel

CPU = torch.device("cpu")


def glm(loss, n_outputs, intercept):
    return LinearModel(5, n_outputs, loss, intercept)


def mlp(loss, n_outputs, hidden):
    return MLPModel((5, *hidden, n_outputs), Activation.TANH, loss)


MODELS = {
    "glm-logistic": lambda: glm(OutputLoss.LOGISTIC, 1, True),
    "glm-softmax-nointercept": lambda: glm(OutputLoss.SOFTMAX, 3, False),
    "glm-squared2": lambda: glm(OutputLoss.SQUARED, 2, True),
    "mlp1-logistic": lambda: mlp(OutputLoss.LOGISTIC, 1, (6,)),
    "mlp2-softmax": lambda: mlp(OutputLoss.SOFTMAX, 3, (6, 4)),
    "mlp1-squared": lambda: mlp(OutputLoss.SQUARED, 2, (4,)),
}


def problem(model, n=20, seed=0, scale=1.0):
    gen = torch.Generator().manual_seed(seed)
    X = torch.randn(n, 5, generator=gen) * scale
    if model.loss is OutputLoss.LOGISTIC:
        y = torch.randint(0, 2, (n,), generator=gen).float()
    elif model.loss is OutputLoss.SOFTMAX:
        y = torch.randint(0, 3, (n,), generator=gen)
    else:
        y = torch.randn(n, 2, generator=gen)
    params = torch.randn(model.n_params, generator=gen) * 0.5
    return X, y, params


@pytest.fixture(params=list(MODELS), ids=list(MODELS))
def model(request):
    return MODELS[request.param]()


def test_gradient_norms_and_weighted_sum(model):
    X, y, params = problem(model)
    G = model.per_example_gradients(params, X, y).double()
    blocks = model.gradient_blocks(params, X, y)
    torch.testing.assert_close(gradient_sq_norms(blocks).double(), G.square().sum(1), rtol=1e-4,
                               atol=1e-6)
    c = torch.rand(X.shape[0], generator=torch.Generator().manual_seed(1))
    out = torch.empty(model.n_params)
    weighted_gradient_sum(blocks, c, model.param_blocks(out))
    torch.testing.assert_close(out.double(), (c.double()[:, None] * G).sum(0), rtol=1e-4,
                               atol=1e-5)


def test_transformed_norms_bound_the_true_norms_tightly(model):
    X, y, params = problem(model)
    G = materialise(model.gradient_blocks(params, X, y))
    gen = torch.Generator().manual_seed(2)
    a = torch.randn(model.n_params, generator=gen) * 0.3
    b = torch.rand(model.n_params, generator=gen) + 0.2
    w = 1.0 / b.square()
    true = ((G - a.double()) / b.double()).square().sum(1)
    est = transformed_sq_norms(
        model.gradient_blocks(params, X, y),
        model.param_blocks(w),
        model.param_blocks(a),
        float((w.double() * a.double().square()).sum()),
    ).double()
    assert torch.all(est >= true)  # an upper bound ...
    torch.testing.assert_close(est, true, rtol=1e-3, atol=1e-4)  # ... and a tight one


def materialise(blocks):
    """Per-example gradients in float64 from the (float32) factors: what the kernels sum."""
    parts = []
    for b in blocks:
        h, d = b.h.double(), b.delta.double()
        parts.append((h.unsqueeze(2) * d.unsqueeze(1)).reshape(h.shape[0], -1))
        if b.has_bias:
            parts.append(d)
    return torch.cat(parts, dim=1)


def test_difference_norms_and_sums(model):
    X, y, params = problem(model)
    step = torch.randn(model.n_params, generator=torch.Generator().manual_seed(3))
    previous = params + 0.05 * step
    cur, prev = model.gradient_blocks(params, X, y), model.gradient_blocks(previous, X, y)
    # What is summed: the difference of the float32 factors, computed exactly.
    D = materialise(cur) - materialise(prev)
    est = difference_sq_norms(cur, prev).double()
    true = D.square().sum(1)
    assert torch.all(est >= true)  # an upper bound of what is summed ...
    torch.testing.assert_close(est, true, rtol=1e-3, atol=1e-7)  # ... and a tight one
    # ... and close to the mathematical difference (float64 gradients).
    exact = model.per_example_gradients(params.double(), X.double(), y.double() if
                                        y.is_floating_point() else y)
    exact = exact - model.per_example_gradients(previous.double(), X.double(),
                                                y.double() if y.is_floating_point() else y)
    torch.testing.assert_close(est, exact.square().sum(1), rtol=1e-3, atol=1e-6)
    c = torch.rand(X.shape[0], generator=torch.Generator().manual_seed(4))
    out = torch.empty(model.n_params)
    weighted_difference_sum(cur, prev, c, model.param_blocks(out))
    torch.testing.assert_close(out.double(), (c.double()[:, None] * D).sum(0), rtol=1e-3,
                               atol=1e-6)


EXTREME_ROWS = [1e30, 1e15, -1e20, 1e-30, 0.0]


@pytest.mark.parametrize("value", EXTREME_ROWS)
def test_one_extreme_row_moves_each_clipped_sum_by_at_most_its_bound(model, value):
    """Sensitivity: replace one row by an extreme one; each released sum (before noise) moves
    by at most 2 x its bound (replace = remove + add), and the row alone contributes <= bound."""
    X, y, params = problem(model)
    X2 = X.clone()
    X2[0] = value
    previous = params + 0.1
    gen = torch.Generator().manual_seed(5)
    a = torch.randn(model.n_params, generator=gen)
    w = 1.0 / (torch.rand(model.n_params, generator=gen) + 0.1).square()
    a_sq = float((w.double() * a.double().square()).sum())

    def sums(Xs, ys=y):
        cur, prev = model.gradient_blocks(params, Xs, ys), model.gradient_blocks(previous, Xs, ys)
        grad = torch.zeros(model.n_params)
        c = clip_factors(gradient_sq_norms(cur), 0.7)
        weighted_gradient_sum(cur, c, model.param_blocks(grad))
        diff = torch.zeros(model.n_params)
        c = clip_factors(difference_sq_norms(cur, prev), 0.3)
        weighted_difference_sum(cur, prev, c, model.param_blocks(diff))
        trans = torch.zeros(model.n_params)
        c = clip_factors(
            transformed_sq_norms(cur, model.param_blocks(w), model.param_blocks(a), a_sq), 1.0
        )
        weighted_gradient_sum(cur, c, model.param_blocks(trans))
        trans = (trans - a * c.sum()) * w.sqrt()  # sum_i c_i (g_i - a) / b
        return grad, diff, trans

    for s1, s2, bound in zip(sums(X), sums(X2), (0.7, 0.3, 1.0), strict=True):
        assert torch.isfinite(s2).all()
        assert float(torch.linalg.vector_norm((s1 - s2).double())) <= 2 * bound * (1 + 1e-5)
    # The extreme row alone.
    for s, bound in zip(sums(X2[:1], y[:1]), (0.7, 0.3, 1.0), strict=True):
        assert float(torch.linalg.vector_norm(s.double())) <= bound * (1 + 1e-5)


def test_zero_radius_gives_zero_factors():
    assert torch.equal(clip_factors(torch.tensor([0.0, 4.0, float("nan")]), 0.0),
                       torch.zeros(3))
    f = clip_factors(torch.tensor([0.0, 4.0, float("inf"), float("nan")]), 1.0)
    assert f[0] == 1.0 and 0.49 < f[1] <= 0.5 and f[2] == 0.0 and f[3] == 0.0
