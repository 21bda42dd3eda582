"""The fused single-output clipping kernel of the GLMs: the same clipped residuals as clipping
to ``bound / scale``, with the same answers on extreme rows."""

from __future__ import annotations

import math

import torch

from skdp._engine._glm import LinearModel

INF, NAN = math.inf, math.nan


def reference(r: torch.Tensor, scales: torch.Tensor, bound: float) -> torch.Tensor:
    """Clip ``r_i`` to ``[-bound / s_i, bound / s_i]`` in float64; non-finite results are 0."""
    caps = bound / scales.double()
    out = torch.maximum(torch.minimum(r.double().view(-1), caps), -caps)
    return torch.nan_to_num(out, nan=0.0).view(-1, 1)


def test_single_output_clipping_matches_the_caps():
    g = torch.Generator().manual_seed(0)
    r = torch.randn(500, 1, generator=g) * 3
    scales = torch.rand(500, generator=g) * 4 + 0.01
    clipped = LinearModel.clip_residuals(r.clone(), scales, 0.7)
    torch.testing.assert_close(clipped.double(), reference(r, scales, 0.7), rtol=1e-6, atol=0)
    norms = clipped.view(-1).double().abs() * scales.double()
    assert float(norms.max()) <= 0.7 * (1 + 1e-6)


def test_single_output_clipping_of_extreme_rows():
    r = torch.tensor([[INF], [-INF], [NAN], [0.0], [2.0], [INF], [0.5]])
    scales = torch.tensor([2.0, 4.0, 1.0, INF, INF, 0.0, 0.0])
    clipped = LinearModel.clip_residuals(r.clone(), scales, 1.0).view(-1)
    # Infinite residuals are capped, NaN and infinite scales give nothing, and a zero row
    # (scale 0, no intercept) contributes zero whatever its residual.
    expected = torch.tensor([0.5, -0.25, 0.0, 0.0, 0.0, 0.0, 0.0])
    assert torch.equal(clipped, expected)
    assert torch.isfinite(clipped).all()


def test_glm_fits_under_inference_mode_equal_fits_with_autograd(monkeypatch):
    # The GLMs train under torch.inference_mode (needs_autograd = False): only autograd's
    # bookkeeping is skipped, so fits are the same tensors, dense and sparse, private or not.
    import numpy as np
    import scipy.sparse as sp

    from skdp.linear_model import DPLogisticRegression, DPRidge

    rng = np.random.default_rng(0)
    X = rng.normal(size=(600, 5)) * (rng.random((600, 5)) < 0.5)
    y = (X[:, 0] + 0.3 * rng.normal(size=600) > 0).astype(int)

    def fits():
        return [
            DPLogisticRegression(random_state=1, max_iter=3).fit(X, y).coef_,
            DPLogisticRegression(random_state=1, max_iter=3).fit(sp.csr_matrix(X), y).coef_,
            DPLogisticRegression(random_state=1, optimizer="adaclip", max_iter=3).fit(X, y).coef_,
            DPRidge(random_state=1, max_iter=3).fit(X, X[:, 1]).coef_,
            DPRidge(privacy=(math.inf, 0), random_state=1, max_iter=3).fit(X, X[:, 1]).coef_,
        ]

    assert LinearModel.needs_autograd is False
    fast = fits()
    monkeypatch.setattr(LinearModel, "needs_autograd", True)
    for a, b in zip(fast, fits(), strict=True):
        np.testing.assert_array_equal(a, b)
