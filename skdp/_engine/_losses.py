"""Output losses shared by every model: the loss derivative in the model's output ``z``.

For each supported loss the derivative of the per-example loss in the output (the "residual")
has a simple closed form; models backpropagate from it without autograd.
"""

from __future__ import annotations

import enum

import torch

__all__ = ["OutputLoss", "output_residuals"]


class OutputLoss(str, enum.Enum):
    LOGISTIC = "logistic"  # binary log-loss on one logit; y in {0, 1}
    SOFTMAX = "softmax"  # multinomial log-loss on K logits; y an integer class index
    SQUARED = "squared"  # half squared error; y real, one column per output

    @property
    def target_dtype(self) -> torch.dtype:
        return torch.int64 if self is OutputLoss.SOFTMAX else torch.float32


def output_residuals(loss: OutputLoss, z: torch.Tensor, yb: torch.Tensor) -> torch.Tensor:
    """``d loss_i / d z_i`` for every example, shape (batch, n_outputs); overwrites ``z``."""
    if loss is OutputLoss.LOGISTIC:
        return torch.sigmoid_(z).sub_(yb.view(-1, 1))
    if loss is OutputLoss.SOFTMAX:
        r = torch.softmax(z, dim=1)
        r[torch.arange(r.shape[0], device=r.device), yb] -= 1.0
        return r
    return z.sub_(yb.view(z.shape))
