"""Output losses shared by every model: the loss derivative in the model's output ``z``.

For each supported loss the derivative of the per-example loss in the output (the "residual")
has a simple closed form; models backpropagate from it without autograd.
"""

from __future__ import annotations

import enum

import torch

__all__ = ["OutputLoss", "output_residuals"]


class OutputLoss(str, enum.Enum):
    """A per-example loss of the model's output ``z``.

    Each loss states the facts the rest of skdp reads of it: the task it serves (the default
    rules differ by task), the curvature bound of the loss in ``z`` (the smoothness of the
    per-example loss is that times the squared row norm) and the dtype of its targets. A new
    loss must give all three (a missing entry raises ``KeyError``: tested).
    """

    LOGISTIC = "logistic"  # binary log-loss on one logit; y in {0, 1}
    SOFTMAX = "softmax"  # multinomial log-loss on K logits; y an integer class index
    SQUARED = "squared"  # half squared error; y real, one column per output

    @property
    def target_dtype(self) -> torch.dtype:
        return torch.int64 if self is OutputLoss.SOFTMAX else torch.float32

    @property
    def task(self) -> str:
        """``'classification'`` or ``'regression'``."""
        return _TASKS[self]

    @property
    def curvature(self) -> float:
        """Sup of the largest eigenvalue of ``d^2 loss / dz^2``: logistic ``s(1 - s) <= 1/4``,
        softmax ``diag(p) - p p^T <= 1/2``, half squared error 1."""
        return _CURVATURES[self]


_TASKS = {
    OutputLoss.LOGISTIC: "classification",
    OutputLoss.SOFTMAX: "classification",
    OutputLoss.SQUARED: "regression",
}
_CURVATURES = {OutputLoss.LOGISTIC: 0.25, OutputLoss.SOFTMAX: 0.5, OutputLoss.SQUARED: 1.0}


def output_residuals(loss: OutputLoss, z: torch.Tensor, yb: torch.Tensor) -> torch.Tensor:
    """``d loss_i / d z_i`` for every example, shape (batch, n_outputs); overwrites ``z``."""
    if loss is OutputLoss.LOGISTIC:
        return torch.sigmoid_(z).sub_(yb.view(-1, 1))
    if loss is OutputLoss.SOFTMAX:
        r = torch.softmax(z, dim=1)
        r[torch.arange(r.shape[0], device=r.device), yb] -= 1.0
        return r
    return z.sub_(yb.view(z.shape))
