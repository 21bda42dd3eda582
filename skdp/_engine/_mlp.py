"""Multilayer perceptrons with fast, exact per-example gradient clipping ("ghost clipping").

For a dense layer ``z = h W + b`` the per-example gradient of ``W`` is the outer product
``h_i^T delta_i`` (``delta_i = d loss_i / d z_i``), so its squared norm is
``||h_i||^2 ||delta_i||^2`` and that of ``b`` is ``||delta_i||^2``. Summed over the layers this is
the squared norm of the whole per-example gradient, computed from quantities that one ordinary
forward and backward pass produce anyway. The clipped sum is then the ordinary weight-gradient
product with each example's ``delta`` rescaled: ``h^T (c * delta)``. No per-example gradient is
materialised and no autograd graph is built; backpropagation is written out by hand, which is
simple for dense layers and avoids autograd's bookkeeping on every step.
"""

from __future__ import annotations

import enum
import math
from collections.abc import Sequence

import numpy as np
import torch

from ._factored import (
    Block,
    ParamBlock,
    clip_factors,
    gradient_sq_norms,
    weighted_gradient_sum,
)
from ._losses import OutputLoss, output_residuals
from .rows.kernels import input_addmm, row_norms_float64
from .rows.sparse import SparseRows

__all__ = ["Activation", "MLPModel"]


class Activation(str, enum.Enum):
    RELU = "relu"
    TANH = "tanh"
    LOGISTIC = "logistic"
    IDENTITY = "identity"


def activate_(z: torch.Tensor, activation: Activation) -> torch.Tensor:
    """Apply the hidden activation in place."""
    if activation is Activation.RELU:
        return z.clamp_(min=0.0)
    if activation is Activation.TANH:
        return z.tanh_()
    if activation is Activation.LOGISTIC:
        return z.sigmoid_()
    return z


def backprop_activation_(delta: torch.Tensor, h: torch.Tensor, activation: Activation) -> None:
    """``delta *= activation'(z)``, written with the activation's output ``h`` (z is not kept)."""
    if activation is Activation.RELU:
        delta.masked_fill_(h <= 0, 0.0)
    elif activation is Activation.TANH:
        delta.mul_(1.0 - h * h)
    elif activation is Activation.LOGISTIC:
        delta.mul_(h * (1.0 - h))


class MLPModel:
    """A dense network ``input -> hidden layers -> output`` with parameters in one flat vector.

    The flat layout is ``[W_1.ravel(), b_1, W_2.ravel(), b_2, ...]`` with ``W_l`` of shape
    ``(fan_in, fan_out)``, the layout of scikit-learn's ``coefs_`` and ``intercepts_``.

    Parameters
    ----------
    layer_sizes : sequence of int
        ``(n_features, *hidden_layer_sizes, n_outputs)``.
    activation : Activation
        The hidden activation (the output activation follows from ``loss``).
    loss : OutputLoss
        The per-example loss on the output layer.
    """

    needs_autograd = True  # per-layer gradients by torch's backward pass

    def __init__(self, layer_sizes: Sequence[int], activation: Activation, loss: OutputLoss):
        if len(layer_sizes) < 2:
            raise ValueError("an MLP needs at least an input and an output size")
        self.layer_sizes = tuple(int(s) for s in layer_sizes)
        self.activation = Activation(activation)
        self.loss = OutputLoss(loss)
        # (weight_start, weight_end, bias_end) of each layer in the flat vector.
        self._slices: list[tuple[int, int, int]] = []
        offset = 0
        for fan_in, fan_out in zip(self.layer_sizes[:-1], self.layer_sizes[1:], strict=True):
            w_end = offset + fan_in * fan_out
            self._slices.append((offset, w_end, w_end + fan_out))
            offset = w_end + fan_out
        self.n_params = offset

    @property
    def n_layers(self) -> int:
        """Number of dense layers (hidden layers + 1)."""
        return len(self._slices)

    # --- parameters -------------------------------------------------------------------------
    def layers(self, params: torch.Tensor) -> list[tuple[torch.Tensor, torch.Tensor]]:
        """``(W_l, b_l)`` views into the flat vector ``params`` (or a gradient buffer)."""
        views = []
        for (start, w_end, b_end), fan_in, fan_out in zip(
            self._slices, self.layer_sizes[:-1], self.layer_sizes[1:], strict=True
        ):
            views.append((params[start:w_end].view(fan_in, fan_out), params[w_end:b_end]))
        return views

    def init_params(self, device: torch.device, rng: np.random.Generator) -> torch.Tensor:
        """Glorot-uniform weights and biases, as scikit-learn's MLPs initialise them.

        The bound is ``sqrt(6 / (fan_in + fan_out))``, or ``sqrt(2 / ...)`` for the logistic
        activation; drawn from ``rng`` only, so the start is independent of the data.
        """
        factor = 2.0 if self.activation is Activation.LOGISTIC else 6.0
        chunks = []
        for fan_in, fan_out in zip(self.layer_sizes[:-1], self.layer_sizes[1:], strict=True):
            bound = math.sqrt(factor / (fan_in + fan_out))
            chunks.append(rng.uniform(-bound, bound, size=fan_in * fan_out))
            chunks.append(rng.uniform(-bound, bound, size=fan_out))
        flat = np.concatenate(chunks).astype(np.float32)
        return torch.from_numpy(flat).to(device)

    def penalty_mask(self, device: torch.device) -> torch.Tensor:
        """1 for weights, 0 for biases (scikit-learn penalises weights only)."""
        mask = torch.zeros(self.n_params, dtype=torch.float32, device=device)
        for start, w_end, _ in self._slices:
            mask[start:w_end] = 1.0
        return mask

    def example_aux(self, X: torch.Tensor | SparseRows) -> torch.Tensor:
        """``||x_i||^2 + 1``, the first layer's share of every squared gradient norm.

        It is fixed during a fit, so it is computed once (in float64, so that huge rows give a
        large or infinite value rather than a wrong one) instead of at every step.
        """
        sq = row_norms_float64(X).square_().add_(1.0)
        return sq.to(X.dtype)

    # --- per-step kernels -------------------------------------------------------------------
    def forward(
        self, params: torch.Tensor, Xb: torch.Tensor | SparseRows
    ) -> list[torch.Tensor | SparseRows]:
        """``[X, h_1, ..., h_{L-1}, z_L]``: the input of every layer, then the output (only
        ``X`` may be sparse: the first layer's product is the only one that reads it)."""
        outputs = [Xb]
        layers = self.layers(params)
        for index, (W, b) in enumerate(layers):
            z = input_addmm(b, outputs[-1], W)
            if index < len(layers) - 1:
                activate_(z, self.activation)
            outputs.append(z)
        return outputs

    def output_deltas(
        self, params: torch.Tensor, Xb: torch.Tensor | SparseRows, yb: torch.Tensor
    ) -> tuple[list[torch.Tensor], list[torch.Tensor]]:
        """Forward and backward pass: the input ``h`` and output gradient ``delta`` of each
        layer, for every example of the batch (``delta`` is of the per-example loss)."""
        outputs = self.forward(params, Xb)
        inputs = outputs[:-1]
        delta = output_residuals(self.loss, outputs[-1], yb)
        deltas = [delta]
        layers = self.layers(params)
        for index in range(self.n_layers - 1, 0, -1):
            delta = delta @ layers[index][0].T
            backprop_activation_(delta, inputs[index], self.activation)
            deltas.append(delta)
        deltas.reverse()
        return inputs, deltas

    def per_example_sq_norms(
        self, inputs: list[torch.Tensor], deltas: list[torch.Tensor], aux_b: torch.Tensor
    ) -> torch.Tensor:
        """``sum_l (||h_l,i||^2 + 1) ||delta_l,i||^2``: squared per-example gradient norms."""
        blocks = [Block(h, d, True) for h, d in zip(inputs, deltas, strict=True)]
        return gradient_sq_norms(blocks, first_input_sq=aux_b)

    def clipped_grad_sum(
        self,
        params: torch.Tensor,
        Xb: torch.Tensor | SparseRows,
        yb: torch.Tensor,
        aux_b: torch.Tensor | None,
        max_norm: float | None,
        out: torch.Tensor,
    ) -> torch.Tensor:
        """Sum over the batch of per-example gradients, each clipped to ``max_norm``.

        ``max_norm=None`` gives the plain (unclipped) sum, for non-private training. A row whose
        gradient norm is not finite (overflow in a row with huge values) contributes zero, so
        whatever one row holds, its contribution has norm at most ``max_norm``.
        """
        blocks = self.gradient_blocks(params, Xb, yb)
        factors = None
        if max_norm is not None:
            if aux_b is None:
                aux_b = self.example_aux(Xb)
            factors = clip_factors(gradient_sq_norms(blocks, first_input_sq=aux_b), max_norm)
        weighted_gradient_sum(blocks, factors, self.layers(out))
        return out

    # --- factored per-example gradients (skdp/_engine/_factored.py) ------------------------
    def param_blocks(self, flat: torch.Tensor) -> list[ParamBlock]:
        """The dense blocks ``(W_l, b_l)`` of a parameter-shaped flat vector."""
        return self.layers(flat)

    def gradient_blocks(
        self, params: torch.Tensor, Xb: torch.Tensor | SparseRows, yb: torch.Tensor
    ) -> list[Block]:
        """Per-example gradients of the batch in factored form: each layer's input and output
        gradient, from one forward and backward pass."""
        inputs, deltas = self.output_deltas(params, Xb, yb)
        # The first layer's input is the validated (finite) data.
        return [
            Block(h, delta, True, h_finite=index == 0)
            for index, (h, delta) in enumerate(zip(inputs, deltas, strict=True))
        ]

    def per_example_gradients(
        self, params: torch.Tensor, Xb: torch.Tensor, yb: torch.Tensor
    ) -> torch.Tensor:
        """Materialised per-example gradients, shape (batch, n_params): for tests only."""
        inputs, deltas = self.output_deltas(params, Xb, yb)
        parts = []
        for h, delta in zip(inputs, deltas, strict=True):
            parts.append((h.unsqueeze(2) * delta.unsqueeze(1)).reshape(h.shape[0], -1))
            parts.append(delta)
        return torch.cat(parts, dim=1)
