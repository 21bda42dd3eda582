"""What every DP-SGD optimizer does with a released gradient (all post-processing): the L2
penalty's gradient, the step, the projection onto a ball, and the average of the last
iterates."""

from __future__ import annotations

import torch

from ..._engine._model import DPModel
from .settings import SGDSettings

__all__ = ["PROJECTION_SAFETY", "IterateUpdate", "project_onto_ball"]

# Project onto a ball a hair smaller than the public one, so that float32 rounding of the norm
# can never leave an iterate outside the ball the accountant assumes (a smaller ball only
# lowers the bound, which is nondecreasing in the diameter).
PROJECTION_SAFETY = 1.0 - 1e-5


def project_onto_ball(params: torch.Tensor, radius: float) -> torch.Tensor:
    """In place: ``params * min(1, r / ||params||)`` with ``r = radius * PROJECTION_SAFETY``.

    The Euclidean projection onto the ball (non-expansive). Computed on the device without a
    host synchronisation; non-finite parameters stay non-finite (and are refused as diverged
    after training).
    """
    norm = torch.linalg.vector_norm(params, dtype=torch.float64)
    factor = torch.clamp(radius * PROJECTION_SAFETY / norm, max=1.0).to(params.dtype)
    return params.mul_(factor)


class IterateUpdate:
    """What every optimizer does with a released gradient (all post-processing): add the L2
    penalty's gradient, step, project onto the ball of radius ``projection_radius`` if one is
    set, and average the iterates of the last ``average`` fraction of the steps."""

    def __init__(self, model: DPModel, params: torch.Tensor, settings: SGDSettings) -> None:
        self.params = params
        l2 = settings.l2
        self.penalty = model.penalty_mask(params.device) * l2 if l2 > 0 else None
        self.radius = settings.projection_radius
        self.average_from = settings.n_steps - settings.n_averaged_steps
        self.averaged = params.clone()
        self.n_averaged = 0

    def step(self, index: int, grad: torch.Tensor, rate: float) -> None:
        """Step ``index`` with the released gradient ``grad`` (the penalty is added in place)."""
        params = self.params
        if self.penalty is not None:
            grad.addcmul_(self.penalty, params)
        params.sub_(grad, alpha=rate)
        if self.radius is not None:
            project_onto_ball(params, self.radius)
        if index >= self.average_from:
            self.n_averaged += 1
            self.averaged.lerp_(params, 1.0 / self.n_averaged)

    def released(self) -> torch.Tensor:
        """The averaged iterates, or the last iterate when nothing is averaged."""
        return self.averaged if self.n_averaged else self.params
