"""The public settings of a DP-SGD run: nothing here may depend on the data's values."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from ...accounting._schedules import noise_shape
from .step_sizes import fixed_learning_rates

__all__ = ["SGDSettings", "steps_per_epoch"]


def steps_per_epoch(n_samples: int, batch_size: int) -> int:
    """Steps that make one pass in expectation: ``round(n / batch_size)``, at least one."""
    return max(1, round(n_samples / batch_size))


@dataclass(frozen=True)
class SGDSettings:
    """Public hyperparameters of a DP-SGD run (nothing here may depend on the data values)."""

    n_samples: int
    batch_size: int
    epochs: int
    learning_rate: float
    max_grad_norm: float
    l2: float = 0.0  # penalty (l2 / 2) ||w||^2 on the mean-loss scale
    # Release the average of the iterates of the last ``average`` fraction of the steps
    # (0 releases the last iterate).
    average: float = 0.1
    # Radius of the L2 ball (centred at 0) that the whole parameter vector is projected onto
    # after every step; ``None``: no projection. Projection is post-processing of each noisy
    # step, so it costs no privacy under any accountant.
    projection_radius: float | None = None
    # Curvature constants of every per-example loss (data term after clipping, plus penalty),
    # valid for every possible row: smoothness M and strong convexity m. ``None`` when the
    # model declares none (non-convex models); only the last-iterate accountant uses them.
    smoothness: float | None = None
    strong_convexity: float = 0.0
    # Step-size schedule ('constant', 'invscaling', 'adagrad_norm'; ``learning_rate`` is the
    # initial step size) and the public shape of the noise ('constant' or a decaying schedule
    # from skdp.accounting._schedules, ending at ``noise_decay`` times its initial level).
    learning_rate_schedule: str = "constant"
    power_t: float = 0.5
    noise_schedule: str = "constant"
    noise_decay: float = 1.0
    # The estimator's ``optimizer_params``: hyperparameters of one optimizer (adaclip, diff2),
    # parsed and validated by that optimizer.
    optimizer_params: Mapping[str, Any] | None = None

    @property
    def steps_per_epoch(self) -> int:
        return steps_per_epoch(self.n_samples, self.batch_size)

    def learning_rates(self) -> np.ndarray | None:
        """The step size of every step, or ``None`` when it is driven by released gradients."""
        return fixed_learning_rates(
            self.learning_rate_schedule, self.learning_rate, self.n_steps,
            self.steps_per_epoch, self.power_t,
        )

    def schedule_shape(self) -> np.ndarray:
        """The relative noise level of every step that ``noise_schedule`` asks for."""
        return noise_shape(
            self.noise_schedule, self.n_steps, self.steps_per_epoch, self.noise_decay
        )

    @property
    def sampling_rate(self) -> float:
        return min(1.0, self.batch_size / self.n_samples)

    @property
    def n_steps(self) -> int:
        return self.epochs * steps_per_epoch(self.n_samples, self.batch_size)

    @property
    def n_averaged_steps(self) -> int:
        """How many final iterates are averaged: ``ceil(average * n_steps)``."""
        return min(self.n_steps, math.ceil(self.average * self.n_steps - 1e-9))
