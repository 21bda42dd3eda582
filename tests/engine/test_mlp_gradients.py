"""Ghost clipping of MLPModel against torch.func per-example gradients, and the sensitivity of
the clipped sum that the privacy accounting assumes."""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from hypothesis import given, settings
from hypothesis import strategies as st

from skdp._engine._losses import OutputLoss
from skdp._engine._mlp import Activation, MLPModel

CPU = torch.device("cpu")
TORCH_ACTIVATIONS = {
    Activation.RELU: torch.relu,
    Activation.TANH: torch.tanh,
    Activation.LOGISTIC: torch.sigmoid,
    Activation.IDENTITY: lambda z: z,
}
# (loss, n_outputs)
LOSSES = [(OutputLoss.LOGISTIC, 1), (OutputLoss.SOFTMAX, 4), (OutputLoss.SQUARED, 2)]
LOSS_IDS = ["logistic", "softmax4", "squared2"]
HIDDEN = [(), (6,), (7, 3), (5, 4, 3)]
HIDDEN_IDS = ["depth0", "depth1", "depth2", "depth3"]


def make_problem(activation, loss, n_outputs, hidden, *, n=24, d=5, scale=1.0, seed=0):
    model = MLPModel((d, *hidden, n_outputs), activation, loss)
    params = model.init_params(CPU, np.random.default_rng(seed))
    gen = torch.Generator().manual_seed(seed)
    X = torch.randn(n, d, generator=gen) * scale
    if loss is OutputLoss.LOGISTIC:
        y = torch.randint(0, 2, (n,), generator=gen).float()
    elif loss is OutputLoss.SOFTMAX:
        y = torch.randint(0, n_outputs, (n,), generator=gen)
    else:
        y = torch.randn(n, n_outputs, generator=gen) * scale
    return model, params, X, y


def oracle_loss(model):
    """The per-example loss written with torch ops on the flat vector (independent of the
    hand-written backward pass)."""
    act = TORCH_ACTIVATIONS[model.activation]

    def per_example(params, x, y):
        h = x
        layers = model.layers(params)
        for index, (W, b) in enumerate(layers):
            h = h @ W + b
            if index < len(layers) - 1:
                h = act(h)
        if model.loss is OutputLoss.LOGISTIC:
            return F.binary_cross_entropy_with_logits(h[0], y)
        if model.loss is OutputLoss.SOFTMAX:
            return F.cross_entropy(h.unsqueeze(0), y.unsqueeze(0))
        return 0.5 * ((h - y) ** 2).sum()

    return per_example


def oracle_gradients(model, params, X, y):
    """Per-example gradients by torch.func.vmap(grad), in float64 on the same values."""
    y64 = y if y.dtype == torch.int64 else y.double()
    return torch.func.vmap(torch.func.grad(oracle_loss(model)), in_dims=(None, 0, 0))(
        params.double(), X.double(), y64
    )


def clipped_sum(model, params, X, y, max_norm):
    out = torch.empty_like(params)
    result = model.clipped_grad_sum(params, X, y, model.example_aux(X), max_norm, out=out)
    assert result is out
    return out


def assert_close(ours, oracle, rtol=2e-4, magnitude=None):
    """float32 against float64: ``magnitude`` is the size of the terms (sums cancel)."""
    magnitude = float(oracle.abs().max()) if magnitude is None else magnitude
    atol = rtol * magnitude + 1e-30
    torch.testing.assert_close(ours.double(), oracle, rtol=rtol, atol=atol)


@pytest.mark.parametrize("activation", list(Activation), ids=lambda a: a.value)
@pytest.mark.parametrize(("loss", "n_outputs"), LOSSES, ids=LOSS_IDS)
@pytest.mark.parametrize("hidden", HIDDEN, ids=HIDDEN_IDS)
def test_norms_and_clipped_sums_match_the_vmap_oracle(activation, loss, n_outputs, hidden):
    model, params, X, y = make_problem(activation, loss, n_outputs, hidden, scale=2.0)
    oracle = oracle_gradients(model, params, X, y)
    # Materialised per-example gradients (test helper) agree with autograd ...
    assert_close(model.per_example_gradients(params, X, y), oracle)
    # ... the ghost norms agree without materialising anything ...
    inputs, deltas = model.output_deltas(params, X, y)
    norms = model.per_example_sq_norms(inputs, deltas, model.example_aux(X)).sqrt()
    oracle_norms = torch.linalg.vector_norm(oracle, dim=1)
    assert_close(norms, oracle_norms)
    # ... and so do the clipped and unclipped sums, with a bound that clips some rows only.
    max_norm = float(oracle_norms.median())
    factors = torch.clamp(max_norm / oracle_norms, max=1.0)
    clipped = oracle * factors[:, None]
    magnitude = float(clipped.abs().sum(0).max())
    assert_close(clipped_sum(model, params, X, y, max_norm), clipped.sum(0), magnitude=magnitude)
    magnitude = float(oracle.abs().sum(0).max())
    assert_close(clipped_sum(model, params, X, y, None), oracle.sum(0), magnitude=magnitude)
    assert 0 < int((factors < 1).sum()) < X.shape[0]  # not vacuous: both regimes occur


def test_empty_batch_gives_a_zero_sum():
    model, params, X, y = make_problem(Activation.RELU, OutputLoss.SOFTMAX, 4, (6,))
    empty = torch.zeros(0, dtype=torch.int64)
    total = clipped_sum(model, params, X[empty], y[empty], 1.0)
    assert torch.equal(total, torch.zeros_like(total))


def test_layout_matches_scikit_learn_and_init_is_seeded():
    model = MLPModel((5, 7, 3), Activation.TANH, OutputLoss.SOFTMAX)
    assert model.n_params == 5 * 7 + 7 + 7 * 3 + 3
    params = model.init_params(CPU, np.random.default_rng(1))
    again = model.init_params(CPU, np.random.default_rng(1))
    assert torch.equal(params, again)
    (W1, b1), (W2, b2) = model.layers(params)
    assert W1.shape == (5, 7) and b1.shape == (7,) and W2.shape == (7, 3) and b2.shape == (3,)
    bound = np.sqrt(6 / (5 + 7))  # Glorot uniform, as scikit-learn's MLPs
    assert float(W1.abs().max()) <= bound and float(W1.abs().max()) > 0.8 * bound
    mask = model.penalty_mask(CPU)
    assert float(mask.sum()) == 5 * 7 + 7 * 3  # weights only, never biases


def removal_gap(model, params, X, y, max_norm, index):
    keep = torch.tensor([i for i in range(X.shape[0]) if i != index])
    with_row = clipped_sum(model, params, X, y, max_norm).double()
    without = clipped_sum(model, params, X[keep], y[keep], max_norm).double()
    return float(torch.linalg.vector_norm(with_row - without))


@pytest.mark.parametrize("activation", list(Activation), ids=lambda a: a.value)
def test_removing_a_row_moves_the_clipped_sum_by_at_most_the_bound(activation):
    gaps = []
    for seed in range(20):
        loss, n_outputs = LOSSES[seed % 3]
        model, params, X, y = make_problem(activation, loss, n_outputs, (6, 4), seed=seed)
        max_norm = [0.01, 0.3, 1.0, 10.0][seed % 4]
        gap = removal_gap(model, params, X, y, max_norm, seed % X.shape[0])
        assert gap <= max_norm * (1 + 1e-5), (seed, gap, max_norm)
        gaps.append(gap / max_norm)
    assert max(gaps) > 0.99  # not vacuous: clipped rows reach the bound


@settings(max_examples=30, deadline=None)
@given(
    activation=st.sampled_from(list(Activation)),
    case=st.sampled_from(LOSSES),
    hidden=st.sampled_from(HIDDEN),
    seed=st.integers(0, 10_000),
    scale=st.sampled_from([1e-3, 1.0, 1e3, 1e6]),
    max_norm=st.floats(1e-3, 1e3),
)
def test_sensitivity_property(activation, case, hidden, seed, scale, max_norm):
    loss, n_outputs = case
    model, params, X, y = make_problem(
        activation, loss, n_outputs, hidden, n=10, d=3, scale=scale, seed=seed
    )
    gap = removal_gap(model, params, X, y, max_norm, seed % X.shape[0])
    assert gap <= max_norm * (1 + 1e-5)


@pytest.mark.parametrize("activation", list(Activation), ids=lambda a: a.value)
@pytest.mark.parametrize(
    ("x0", "y0"),
    [(1e20, 0.0), (3e38, 0.0), (1.0, 1e39), (1e30, 1e39)],
    ids=["x_overflows_norm", "x_near_float32_max", "y_beyond_float32", "both_huge"],
)
def test_extreme_rows_keep_the_clipped_sum_finite_and_bounded(activation, x0, y0):
    model = MLPModel((2, 4, 1), activation, OutputLoss.SQUARED)
    params = model.init_params(CPU, np.random.default_rng(0))
    X = torch.tensor([[x0, -x0], [0.5, 0.5], [-0.3, 0.2]], dtype=torch.float32)
    y = torch.tensor([[y0], [1.0], [-1.0]], dtype=torch.float32)
    total = clipped_sum(model, params, X, y, 1.0)
    assert torch.isfinite(total).all()
    without = clipped_sum(model, params, X[1:], y[1:], 1.0)
    assert float(torch.linalg.vector_norm((total - without).double())) <= 1.0 + 1e-5
