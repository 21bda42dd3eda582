"""Step-size schedules: fixed in advance ('constant', 'invscaling') or driven by released noisy
gradients only ('adagrad_norm').

A fixed schedule is a public function of the step index, so ADP-SGD can shape its noise to it
before training. AdaGrad-norm's accumulator reads the *released* noisy gradients, so using it
is post-processing and costs no privacy (Wu et al. feed it raw gradients, which their proof
does not cover; see ``docs/specs/adp_sgd.md`` §1.6).
"""

from __future__ import annotations

import math

import numpy as np
import torch

__all__ = ["LEARNING_RATE_SCHEDULES", "fixed_learning_rates", "AdaGradNorm"]

LEARNING_RATE_SCHEDULES = ("constant", "invscaling", "adagrad_norm")


def fixed_learning_rates(
    schedule: str, eta0: float, n_steps: int, steps_per_epoch: int, power_t: float
) -> np.ndarray | None:
    """The step size of every step, or ``None`` for the data-driven ``'adagrad_norm'``.

    ``'constant'``: ``eta0``. ``'invscaling'``: ``eta0 / (1 + t / steps_per_epoch) ** power_t``
    for step ``t = 0, 1, ...``: scikit-learn's inverse scaling, counted in epochs so that the
    decay does not depend on the batch size.
    """
    if schedule == "constant":
        return np.full(n_steps, float(eta0))
    if schedule == "invscaling":
        epochs = np.arange(n_steps, dtype=np.float64) / max(1, steps_per_epoch)
        return float(eta0) / (1.0 + epochs) ** float(power_t)
    if schedule == "adagrad_norm":
        return None
    raise ValueError(f"learning_rate must be one of {LEARNING_RATE_SCHEDULES}, got {schedule!r}")


class AdaGradNorm:
    """``eta_t = eta0 / b_t`` with ``b_t^2 = 1 + sum_{s < t} max(||g~_s||^2 - d v_s, nu)``.

    ``g~_s`` is the released noisy mean gradient of step ``s`` and ``d v_s`` the expected energy
    of its noise (``d`` coordinates of variance ``v_s``, public), so the increment estimates the
    squared norm of the clipped mean gradient without reading it. Starting from ``b_0 = 1``,
    the first step uses ``eta0``.
    """

    FLOOR = 1e-12  # nu: keeps b growing by a hair when the estimate is negative

    def __init__(self, eta0: float) -> None:
        self.eta0 = float(eta0)
        self.b_sq = 1.0

    def rate(self) -> float:
        return self.eta0 / math.sqrt(self.b_sq)

    def update(self, released_grad: torch.Tensor, noise_variance: float) -> None:
        """Accumulate one released noisy gradient (post-processing only)."""
        energy = float(released_grad.square().sum()) - released_grad.numel() * noise_variance
        self.b_sq += max(energy, self.FLOOR)
