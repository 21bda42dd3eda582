"""What an optimizer needs from a model: the contract that GLMs (and later MLPs) implement."""

from __future__ import annotations

from typing import Protocol

import torch

__all__ = ["DPModel"]


class DPModel(Protocol):
    """A differentiable model whose parameters live in one flat float32 vector.

    One flat vector lets an optimizer draw the noise of a step in a single call and keeps the
    per-coordinate sensitivity accounting obvious.
    """

    n_params: int

    def init_params(self, device: torch.device) -> torch.Tensor:
        """Initial parameters (data-independent)."""
        ...

    def penalty_mask(self, device: torch.device) -> torch.Tensor:
        """1 for coordinates the L2 penalty applies to, 0 elsewhere (e.g. intercepts)."""
        ...

    def clipped_grad_sum(
        self,
        params: torch.Tensor,
        Xb: torch.Tensor,
        yb: torch.Tensor,
        scales_b: torch.Tensor,
        max_norm: float | None,
        out: torch.Tensor,
    ) -> torch.Tensor:
        """Sum over the batch of per-example gradients, each clipped to L2 norm ``max_norm``
        (``None``: unclipped), written into ``out``. Changing one example may move the result
        by at most ``max_norm``."""
        ...
