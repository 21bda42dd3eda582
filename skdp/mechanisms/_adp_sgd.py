"""adp_sgd: ADP-SGD (Wu et al.), DP-SGD with per-step noise shaped to the step size."""

from __future__ import annotations

import numpy as np

from ..accounting._schedules import adp_noise_shape
from ._sgd.optimizer import SGDOptimizer

__all__ = ["ADPSGD"]


class ADPSGD(SGDOptimizer):
    """ADP-SGD (Wu et al.): DP-SGD whose per-step noise follows the step size.

    The noise multiplier of step ``t`` is proportional to ``1 / sqrt(eta_t)`` (``alpha_t^2``
    proportional to ``1 / eta_t``, the optimum of the paper's utility bound), times the shape of
    ``noise_schedule`` if one is set; the accountant then scales the whole shape so that the run
    spends exactly the budget (the paper's advanced-composition normalisation is not used: under
    a tight accountant it can spend about 2.5 times the claimed epsilon). With a constant step
    size the shape is constant and ADP-SGD is DP-SGD, step for step.

    With ``learning_rate_schedule='adagrad_norm'`` the step sizes are not known in advance, so
    the noise follows the public proxy ``eta0 / sqrt(1 + t C^2)`` (``C`` the clipping bound: the
    fastest the accumulator can grow), the paper's fixed alpha schedule
    ``alpha_t = (b_0^2 + t C)^(1/4)`` with ``b_0 = 1``. The accumulator itself reads only the
    released noisy gradients.
    """

    name = "adp_sgd"
    description = "ADP-SGD: DP-SGD with noise shaped to the step size"
    # ADP-SGD as its paper defines it: decaying steps, noise shaped to them (with constant
    # steps it is DP-SGD, step for step).
    auto_learning_rate = "invscaling"

    def _noise_shape(self) -> np.ndarray:
        s = self.settings
        rates = s.learning_rates()
        if rates is None:  # adagrad_norm: the public proxy of its step sizes
            steps = np.arange(s.n_steps, dtype=np.float64)
            rates = s.learning_rate / np.sqrt(1.0 + steps * s.max_grad_norm**2)
        return adp_noise_shape(rates) * s.schedule_shape()
