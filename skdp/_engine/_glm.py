"""Generalised linear models with closed-form per-example gradients.

For a linear predictor ``z_i = x_i W + b`` and a loss whose derivative in ``z`` is the residual
``r_i``, the per-example gradient is the outer product ``[x_i, 1] r_i``. Its norm is therefore
``||r_i|| * sqrt(||x_i||^2 + 1)`` and the clipped sum over a batch is one matrix product,
``[X, 1]^T (c * r)``: no per-example gradient is ever materialised and no autograd is needed.
"""

from __future__ import annotations

import numpy as np
import torch

from ._losses import OutputLoss, output_residuals

__all__ = ["GLMLoss", "LinearModel", "CLIP_SAFETY"]

# Clip to a hair below the bound so that float32 rounding of the norm can never push a clipped
# contribution above the sensitivity the accountant assumes.
CLIP_SAFETY = 1.0 - 1e-5


# The GLM losses are the shared output losses (kept under this name for readability).
GLMLoss = OutputLoss


class LinearModel:
    """``z = X W + b`` with all parameters in one flat vector ``[W.ravel(), b]``.

    Parameters
    ----------
    n_features, n_outputs : int
        Shape of ``W``.
    loss : GLMLoss
        The per-example loss.
    fit_intercept : bool
        Whether ``b`` exists (it is never penalised).
    """

    def __init__(self, n_features: int, n_outputs: int, loss: GLMLoss, fit_intercept: bool):
        self.n_features = n_features
        self.n_outputs = n_outputs
        self.loss = GLMLoss(loss)
        self.fit_intercept = fit_intercept
        self.n_weights = n_features * n_outputs
        self.n_params = self.n_weights + (n_outputs if fit_intercept else 0)

    # --- parameters -------------------------------------------------------------------------
    def init_params(self, device: torch.device, rng: np.random.Generator) -> torch.Tensor:
        # Zero is the natural start of a convex problem; ``rng`` is unused.
        return torch.zeros(self.n_params, dtype=torch.float32, device=device)

    def coef(self, params: torch.Tensor) -> torch.Tensor:
        return params[: self.n_weights].view(self.n_features, self.n_outputs)

    def intercept(self, params: torch.Tensor) -> torch.Tensor | None:
        return params[self.n_weights :] if self.fit_intercept else None

    def penalty_mask(self, device: torch.device) -> torch.Tensor:
        """1 for penalised coordinates (weights), 0 for the intercept."""
        mask = torch.zeros(self.n_params, dtype=torch.float32, device=device)
        mask[: self.n_weights] = 1.0
        return mask

    # --- data-independent precomputation ---------------------------------------------------
    def example_scales(self, X: torch.Tensor) -> torch.Tensor:
        """``sqrt(||x_i||^2 + 1)`` (or ``||x_i||`` without intercept): fixed during a fit.

        Computed in float64 so that rows with huge values get a large but exact scale; a scale
        beyond the float32 range becomes ``inf``, and such a row then contributes zero.
        """
        norms = torch.linalg.vector_norm(X, dim=1, dtype=torch.float64)
        if self.fit_intercept:
            norms = torch.hypot(norms, torch.ones_like(norms))
        return norms.to(X.dtype)

    # --- per-step kernels -------------------------------------------------------------------
    def decision(self, params: torch.Tensor, Xb: torch.Tensor) -> torch.Tensor:
        z = Xb @ self.coef(params)
        b = self.intercept(params)
        return z + b if b is not None else z

    def example_aux(self, X: torch.Tensor) -> torch.Tensor:
        """The per-example auxiliary of :class:`DPModel`: the fixed row scales."""
        return self.example_scales(X)

    def residuals(self, z: torch.Tensor, yb: torch.Tensor) -> torch.Tensor:
        """d loss / d z for every example, shape (batch, n_outputs)."""
        return output_residuals(self.loss, z, yb)

    def per_example_norms(self, r: torch.Tensor, scales_b: torch.Tensor) -> torch.Tensor:
        """Per-example gradient norms ``||r_i|| * scale_i`` in closed form."""
        if r.shape[1] == 1:
            return r.view(-1).abs().mul_(scales_b)
        return torch.linalg.vector_norm(r, dim=1).mul_(scales_b)

    def weighted_grad_sum(
        self, Xb: torch.Tensor, weighted_r: torch.Tensor, out: torch.Tensor
    ) -> torch.Tensor:
        """``sum_i w_i g_i`` into the flat buffer ``out``, given ``weighted_r = w * r``."""
        torch.mm(Xb.T, weighted_r, out=out[: self.n_weights].view(self.n_features, self.n_outputs))
        if self.fit_intercept:
            torch.sum(weighted_r, dim=0, out=out[self.n_weights :])
        return out

    def clipped_grad_sum(
        self,
        params: torch.Tensor,
        Xb: torch.Tensor,
        yb: torch.Tensor,
        scales_b: torch.Tensor,
        max_norm: float | None,
        out: torch.Tensor,
    ) -> torch.Tensor:
        """Sum over the batch of per-example gradients, each clipped to ``max_norm``.

        ``max_norm=None`` gives the plain (unclipped) sum, for non-private training.
        """
        r = self.residuals(self.decision(params, Xb), yb)
        if max_norm is not None:
            r = self.clip_residuals(r, scales_b, max_norm * CLIP_SAFETY)
        return self.weighted_grad_sum(Xb, r, out)

    @staticmethod
    def clip_residuals(r: torch.Tensor, scales_b: torch.Tensor, bound: float) -> torch.Tensor:
        """Residuals rescaled so that every per-example gradient has norm at most ``bound``.

        ``||g_i|| = ||r_i|| * scale_i``, so clipping ``g_i`` to ``bound`` is clipping ``r_i`` to
        ``bound / scale_i``. Written this way it is robust: an infinite residual is clipped to
        the cap, an infinite scale gives a zero contribution, and a NaN residual (from
        overflowing products in a row with huge values) contributes zero. Whatever one row
        holds, its contribution has norm at most ``bound``.
        """
        caps = torch.reciprocal(scales_b).mul_(bound)
        if r.shape[1] == 1:
            caps = caps.unsqueeze(1)
            return r.clamp_(min=caps.neg(), max=caps).nan_to_num_(nan=0.0)
        r = r.nan_to_num_(nan=0.0)
        norms = torch.linalg.vector_norm(r, dim=1, keepdim=True)
        # factor = min(1, cap / ||r||) = cap / max(||r||, cap); inf norms give a zero factor.
        factors = caps.unsqueeze(1).div_(torch.maximum(norms, caps.unsqueeze(1)))
        return r.mul_(factors).nan_to_num_(nan=0.0)

    def per_example_gradients(self, params: torch.Tensor, Xb: torch.Tensor, yb: torch.Tensor):
        """Materialised per-example gradients, shape (batch, n_params): for tests only."""
        r = self.residuals(self.decision(params, Xb), yb)
        grads = (Xb.unsqueeze(2) * r.unsqueeze(1)).reshape(Xb.shape[0], -1)
        if self.fit_intercept:
            grads = torch.cat([grads, r], dim=1)
        return grads
