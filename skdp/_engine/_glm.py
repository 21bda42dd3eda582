"""Generalised linear models with closed-form per-example gradients.

For a linear predictor ``z_i = x_i W + b`` and a loss whose derivative in ``z`` is the residual
``r_i``, the per-example gradient is the outer product ``[x_i, 1] r_i``. Its norm is therefore
``||r_i|| * sqrt(||x_i||^2 + 1)`` and the clipped sum over a batch is one matrix product,
``[X, 1]^T (c * r)``: no per-example gradient is ever materialised and no autograd is needed.
"""

from __future__ import annotations

import math

import numpy as np
import torch

from ._factored import Block, ParamBlock
from ._losses import OutputLoss, output_residuals
from ._safety import CLIP_SAFETY
from .rows.kernels import input_addmm, input_mm, input_t_mm, row_norms_float64
from .rows.sparse import SparseRows

__all__ = ["GLMLoss", "LinearModel", "CLIP_SAFETY"]


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

    needs_autograd = False  # closed-form gradients

    def __init__(self, n_features: int, n_outputs: int, loss: GLMLoss, fit_intercept: bool):
        self.n_features = n_features
        self.n_outputs = n_outputs
        self.loss = GLMLoss(loss)
        self.fit_intercept = fit_intercept
        self.n_weights = n_features * n_outputs
        self.n_params = self.n_weights + (n_outputs if fit_intercept else 0)
        self._view_cache: dict[int, tuple[torch.Tensor, ParamBlock]] = {}

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

    # --- curvature constants (the last-iterate accountant) --------------------------------
    def augmented_row_bound(self, max_row_norm: float) -> float:
        """``R``, a bound on ``||[x, 1]||`` (or ``||x||`` without intercept) when
        ``||x|| <= max_row_norm``: the intercept acts as a constant feature 1."""
        return float(np.hypot(max_row_norm, 1.0) if self.fit_intercept else max_row_norm)

    def smoothness(self, max_row_norm: float, l2: float) -> float:
        """Smoothness ``M`` of every per-example loss when rows have norm <= ``max_row_norm``.

        ``c R^2 + l2``, with ``c`` the loss's curvature in its output (1/4 logistic, 1/2
        softmax, 1 half squared error) and ``R`` from :meth:`augmented_row_bound`. It holds
        for the clipped losses too: for one output (binary logistic, single-target ridge) the
        clipped residual ``clamp(r(z), -c_i, c_i)`` is a nondecreasing function of ``z`` with no
        larger slope, i.e. the derivative of a convex "huberised" loss with no more curvature;
        for several squared-error outputs, clipping ``r`` to a ball is the gradient of the
        1-smooth convex Huber function of ``||z - y||``. (Softmax is the exception: see
        :meth:`clipping_keeps_convexity`.)
        """
        return self.loss.curvature * self.augmented_row_bound(max_row_norm) ** 2 + l2

    def strong_convexity(self, l2: float) -> float:
        """Strong convexity ``m`` of every per-example loss: ``l2`` when the penalty covers
        every parameter (no intercept, which is never penalised), else 0."""
        return 0.0 if self.fit_intercept else float(l2)

    @property
    def clipping_keeps_convexity(self) -> bool:
        """Whether clipped per-example gradients are still gradients of convex smooth losses.

        True except for softmax, where rescaling the residual vector ``p - e_y`` by its norm is
        in general not the gradient of any function; the last-iterate accountant then needs
        clipping to be inactive (:meth:`gradient_norm_bound` at most the clipping bound).
        """
        return self.loss is not OutputLoss.SOFTMAX

    def gradient_norm_bound(self, max_row_norm: float) -> float:
        """A bound on every unclipped per-example gradient norm (``inf`` for squared error):
        ``||r|| R`` with ``|r| <= 1`` (logistic) or ``||p - e_y|| <= sqrt(2)`` (softmax)."""
        residual = {
            OutputLoss.LOGISTIC: 1.0,
            OutputLoss.SOFTMAX: math.sqrt(2.0),
            OutputLoss.SQUARED: math.inf,
        }[self.loss]
        return residual * self.augmented_row_bound(max_row_norm)

    # --- data-independent precomputation ---------------------------------------------------
    def example_scales(self, X: torch.Tensor | SparseRows) -> torch.Tensor:
        """``sqrt(||x_i||^2 + 1)`` (or ``||x_i||`` without intercept): fixed during a fit.

        Computed in float64 so that rows with huge values get a large but exact scale; a scale
        beyond the float32 range becomes ``inf``, and such a row then contributes zero.
        """
        norms = row_norms_float64(X)
        if self.fit_intercept:
            norms = torch.hypot(norms, torch.ones_like(norms))
        return norms.to(X.dtype)

    # --- per-step kernels -------------------------------------------------------------------
    def decision(self, params: torch.Tensor, Xb: torch.Tensor | SparseRows) -> torch.Tensor:
        W, b = self._blocks(params)
        return input_mm(Xb, W) if b is None else input_addmm(b, Xb, W)

    def _blocks(self, flat: torch.Tensor) -> ParamBlock:
        """``(W, b)`` views of a flat parameter-shaped vector.

        The training loop passes the same two tensors (parameters, gradient buffer) at every
        step, so their views are kept rather than rebuilt (a few torch calls per step). The
        cache holds the tensor itself, so an entry can never answer for another tensor.
        """
        entry = self._view_cache.get(id(flat))
        if entry is not None and entry[0] is flat:
            return entry[1]
        if len(self._view_cache) >= 4:
            self._view_cache.clear()
        views = (self.coef(flat), self.intercept(flat))
        self._view_cache[id(flat)] = (flat, views)
        return views

    def example_aux(self, X: torch.Tensor | SparseRows) -> torch.Tensor:
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
        self, Xb: torch.Tensor | SparseRows, weighted_r: torch.Tensor, out: torch.Tensor
    ) -> torch.Tensor:
        """``sum_i w_i g_i`` into the flat buffer ``out``, given ``weighted_r = w * r``."""
        W, b = self._blocks(out)
        input_t_mm(Xb, weighted_r, W)
        if b is not None:
            torch.sum(weighted_r, dim=0, out=b)
        return out

    def clipped_grad_sum(
        self,
        params: torch.Tensor,
        Xb: torch.Tensor | SparseRows,
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
        if r.shape[1] == 1:
            # Clip the gradient norm r_i * scale_i itself, then divide the scale back out: an
            # infinite scale gives 0 (or NaN, zeroed), a NaN residual is zeroed.
            r.view(-1).mul_(scales_b).clamp_(-bound, bound).div_(scales_b)
            return r.nan_to_num_(nan=0.0)
        caps = torch.reciprocal(scales_b).mul_(bound)
        r = r.nan_to_num_(nan=0.0)
        norms = torch.linalg.vector_norm(r, dim=1, keepdim=True)
        # factor = min(1, cap / ||r||) = cap / max(||r||, cap); inf norms give a zero factor.
        factors = caps.unsqueeze(1).div_(torch.maximum(norms, caps.unsqueeze(1)))
        return r.mul_(factors).nan_to_num_(nan=0.0)

    # --- factored per-example gradients (skdp/_engine/_factored.py) ------------------------
    def param_blocks(self, flat: torch.Tensor) -> list[ParamBlock]:
        """The one dense block ``(W, b)`` of a parameter-shaped flat vector."""
        return [(self.coef(flat), self.intercept(flat))]

    def gradient_blocks(
        self, params: torch.Tensor, Xb: torch.Tensor | SparseRows, yb: torch.Tensor
    ) -> list[Block]:
        """Per-example gradients of the batch in factored form: input ``X``, residuals."""
        r = self.residuals(self.decision(params, Xb), yb)
        return [Block(Xb, r, self.fit_intercept, h_finite=True)]  # X is validated finite

    def per_example_gradients(self, params: torch.Tensor, Xb: torch.Tensor, yb: torch.Tensor):
        """Materialised per-example gradients, shape (batch, n_params): for tests only."""
        r = self.residuals(self.decision(params, Xb), yb)
        grads = (Xb.unsqueeze(2) * r.unsqueeze(1)).reshape(Xb.shape[0], -1)
        if self.fit_intercept:
            grads = torch.cat([grads, r], dim=1)
        return grads
