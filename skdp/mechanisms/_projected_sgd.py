"""The last-iterate variant of noisy_sgd: projected noisy SGD (Altschuler & Talwar), whose
released last iterate is accounted by their bound (``accountant='last_iterate'``)."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .._engine._device import FitRandomness
from .._engine._sampling import FixedSizeSampler, FullBatchSampler
from ..accounting import LastIterateCalibration, LastIterateRun, check_last_iterate_conditions
from ._base import PlanNotComposable
from ._sgd.optimizer import SGDOptimizer
from ._sgd.settings import SGDSettings

__all__ = ["LastIteratePlan", "ProjectedNoisySGD"]


@dataclass(frozen=True)
class LastIteratePlan:
    """The plan of a last-iterate run: the run itself. Its bound covers the training alone,
    under replace-one neighbouring, so it composes with no earlier mechanism."""

    run: LastIterateRun
    prior_noise_multipliers: tuple[float, ...] = ()

    def with_priors(self, noise_multipliers: tuple[float, ...]) -> LastIteratePlan:
        if not noise_multipliers:
            return self
        raise PlanNotComposable(
            "with accountant='last_iterate' cannot be a step of a private pipeline (its bound "
            "covers the training alone, under replace-one neighbouring); use accountant='pld' "
            "or 'rdp'"
        )


class ProjectedNoisySGD(SGDOptimizer):
    """Projected noisy SGD whose last iterate is accounted by Altschuler & Talwar's bound.

    The loop of DP-SGD with the conditions of the last-iterate bound
    (``skdp/accounting/_last_iterate.py``) built in: exactly ``batch_size`` distinct rows drawn
    uniformly and independently at every step (:class:`FixedSizeSampler`; every row when
    ``batch_size == n``), the noisy sum divided by ``batch_size``, a constant step size, the
    whole parameter vector projected onto the ball of radius ``projection_radius`` after every
    step (the last included), starting from the model's data-independent initial point (the
    linear models start at 0, inside the ball), and only the last iterate returned.

    Construction checks the conditions that are numbers (a projection radius, ``average == 0``,
    ``learning_rate <= 2 / smoothness``, ...) and raises :class:`ValueError` when one fails, so
    that a run that the bound does not cover is refused before any noise is calibrated. The
    caller guarantees the rest: ``smoothness`` and ``strong_convexity`` must hold for every
    per-example loss and every possible row (which is why ``smoothness=None``, a model without
    curvature constants, is refused).
    """

    name = "noisy_sgd"
    description = "projected DP-SGD, last iterate released"

    def __init__(self, settings: SGDSettings) -> None:
        super().__init__(settings)
        s = settings
        if s.learning_rate_schedule != "constant" or not np.all(self.noise_levels == 1.0):
            raise ValueError(
                "accountant='last_iterate' needs a constant step size and constant noise "
                f"(got learning_rate={s.learning_rate_schedule!r}, "
                f"noise_schedule={s.noise_schedule!r}); use learning_rate='constant' and "
                "noise_schedule='constant', or the standard accountant ('pld' or 'rdp')"
            )
        if s.smoothness is None:
            raise ValueError(
                "accountant='last_iterate' needs a convex model with known smoothness (the "
                "linear models); this model declares none (neural networks are not convex), so "
                "use the standard accountant ('pld' or 'rdp')"
            )
        run_facts = dict(
            n_samples=s.n_samples,
            batch_size=min(s.batch_size, s.n_samples),
            n_steps=s.n_steps,
            learning_rate=s.learning_rate,
            max_grad_norm=s.max_grad_norm,
            smoothness=s.smoothness,
            radius=s.projection_radius,
            strong_convexity=s.strong_convexity,
        )
        full_batch = s.batch_size >= s.n_samples
        check_last_iterate_conditions(
            **run_facts,
            sampling="full_batch" if full_batch else "fixed_size",
            average=s.average,
        )
        self._run = LastIterateRun(**run_facts)

    def plan(self) -> LastIteratePlan:  # type: ignore[override]
        return LastIteratePlan(self._run)

    def calibrate(self, plan: LastIteratePlan, epsilon: float, delta: float, accountant: str):
        """The last-iterate bound's own calibration (``accountant`` is 'last_iterate')."""
        if math.isinf(epsilon):
            return LastIterateCalibration.non_private(plan.run)
        return LastIterateCalibration.calibrate(plan.run, epsilon, delta)

    def sampler(self, n_samples: int, randomness: FitRandomness):
        if self._run.full_batch:
            return FullBatchSampler(n_samples)
        return FixedSizeSampler(n_samples, self._run.batch_size, randomness.sampling)
