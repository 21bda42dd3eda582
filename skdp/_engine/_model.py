"""What an optimizer needs from a model: the contract that GLMs and MLPs implement."""

from __future__ import annotations

from typing import Protocol

import numpy as np
import torch

from ._factored import Block, ParamBlock

__all__ = ["DPModel"]


class DPModel(Protocol):
    """A differentiable model whose parameters live in one flat float32 vector.

    One flat vector lets an optimizer draw the noise of a step in a single call and keeps the
    per-coordinate sensitivity accounting obvious.
    """

    n_params: int
    #: Whether its gradients need torch's autograd (an MLP's backward pass). Models that
    #: compute them in closed form (the GLMs) train under ``torch.inference_mode``, which skips
    #: autograd's bookkeeping on every small tensor call of a step (~10% of a GLM fit).
    needs_autograd: bool

    def init_params(self, device: torch.device, rng: np.random.Generator) -> torch.Tensor:
        """Initial parameters, drawn from ``rng`` only (never from the data)."""
        ...

    def penalty_mask(self, device: torch.device) -> torch.Tensor:
        """1 for coordinates the L2 penalty applies to, 0 elsewhere (e.g. intercepts)."""
        ...

    def example_aux(self, X: torch.Tensor) -> torch.Tensor | None:
        """A per-example quantity fixed for the whole fit (e.g. row norms), or ``None``.

        Computed once before training; each step receives the rows of its batch as ``aux_b``.
        """
        ...

    def clipped_grad_sum(
        self,
        params: torch.Tensor,
        Xb: torch.Tensor,
        yb: torch.Tensor,
        aux_b: torch.Tensor | None,
        max_norm: float | None,
        out: torch.Tensor,
    ) -> torch.Tensor:
        """Sum over the batch of per-example gradients, each clipped to L2 norm ``max_norm``
        (``None``: unclipped), written into ``out``. Changing one example may move the result
        by at most ``max_norm``, whatever values the example holds."""
        ...

    def param_blocks(self, flat: torch.Tensor) -> list[ParamBlock]:
        """Views ``(W, b or None)`` of the dense blocks of a parameter-shaped flat vector."""
        ...

    def gradient_blocks(
        self, params: torch.Tensor, Xb: torch.Tensor, yb: torch.Tensor
    ) -> list[Block]:
        """The batch's per-example gradients in factored form (one :class:`Block` per dense
        block, in the order of :meth:`param_blocks`): what adaclip and diff2 clip."""
        ...
