"""Privacy plans: the public description of a training run, turned into a DpEvent.

A plan is built from public quantities only (hyperparameters, the number of rows, the number of
steps). It fixes everything about the run except one overall noise scale ``sigma``; the
accountant then finds the smallest ``sigma`` that meets the target, and
:meth:`PrivacyPlan.dp_event` describes the calibrated run. Sampling, noise and accounting all
read the same plan, so they cannot drift apart.
"""

from __future__ import annotations

import dataclasses
import enum
import math
from dataclasses import dataclass

import dp_accounting

__all__ = ["NeighboringRelation", "Sampling", "StepGroup", "PrivacyPlan"]


class NeighboringRelation(str, enum.Enum):
    """Which pairs of datasets the guarantee protects (the unit of privacy is one row)."""

    ADD_OR_REMOVE_ONE = "add_or_remove_one"
    REPLACE_ONE = "replace_one"

    def to_dp_accounting(self) -> dp_accounting.NeighboringRelation:
        return dp_accounting.NeighboringRelation[self.name]

    def describe(self) -> str:
        return {
            NeighboringRelation.ADD_OR_REMOVE_ONE: "add or remove one row",
            NeighboringRelation.REPLACE_ONE: "replace one row",
        }[self]


class Sampling(str, enum.Enum):
    """How each step's batch is drawn."""

    POISSON = "poisson"  # every row independently with probability q (add/remove relation)
    FULL_BATCH = "full_batch"  # every row, every step


@dataclass(frozen=True)
class StepGroup:
    """``count`` consecutive steps that share a sampling rate and a relative noise level.

    Parameters
    ----------
    count : int
        Number of steps in the group.
    sampling_rate : float
        Probability that a given row takes part in one step (1.0 for full-batch steps).
    relative_noise : float
        The group's noise multiplier divided by the plan's scale ``sigma``. A constant-noise run
        has one group with ``relative_noise=1``; noise schedules use several groups.
    """

    count: int
    sampling_rate: float
    relative_noise: float = 1.0

    def __post_init__(self) -> None:
        if self.count < 1:
            raise ValueError(f"a step group needs at least one step, got count={self.count}")
        if not 0.0 < self.sampling_rate <= 1.0:
            raise ValueError(f"sampling_rate must be in (0, 1], got {self.sampling_rate}")
        if not (self.relative_noise > 0.0 and math.isfinite(self.relative_noise)):
            raise ValueError(
                f"relative_noise must be positive and finite, got {self.relative_noise}"
            )


@dataclass(frozen=True)
class PrivacyPlan:
    """The accounting-relevant layout of a DP training run.

    Parameters
    ----------
    groups : tuple of StepGroup
        The steps of the run, in order.
    sampling : Sampling
        How batches are drawn.
    neighboring_relation : NeighboringRelation
        The neighbouring relation the guarantee is stated for.
    prior_noise_multipliers : tuple of float, default=()
        Noise multipliers of Gaussian mechanisms with *fixed* noise that ran on the same rows
        before the run (a private pipeline's preprocessing, :mod:`skdp.pipeline`). They are
        composed with the run, so calibrating the plan gives the run the noise for which
        everything together meets the target; they do not scale with ``sigma``.
    """

    groups: tuple[StepGroup, ...]
    sampling: Sampling = Sampling.POISSON
    neighboring_relation: NeighboringRelation = NeighboringRelation.ADD_OR_REMOVE_ONE
    prior_noise_multipliers: tuple[float, ...] = ()

    def __post_init__(self) -> None:
        if not self.groups:
            raise ValueError("a privacy plan needs at least one step group")
        if self.sampling is Sampling.FULL_BATCH and any(
            group.sampling_rate < 1.0 for group in self.groups
        ):
            raise ValueError("a full-batch plan must have sampling_rate=1.0 in every group")
        if not all(z > 0.0 and math.isfinite(z) for z in self.prior_noise_multipliers):
            raise ValueError(
                "prior noise multipliers must be positive and finite, got "
                f"{self.prior_noise_multipliers}"
            )

    @classmethod
    def constant(
        cls,
        n_steps: int,
        sampling_rate: float,
        sampling: Sampling = Sampling.POISSON,
        neighboring_relation: NeighboringRelation = NeighboringRelation.ADD_OR_REMOVE_ONE,
    ) -> PrivacyPlan:
        """A run of ``n_steps`` identical steps (constant noise, constant sampling rate)."""
        return cls((StepGroup(n_steps, sampling_rate, 1.0),), sampling, neighboring_relation)

    def with_priors(self, noise_multipliers: tuple[float, ...]) -> PrivacyPlan:
        """This plan, composed after Gaussian mechanisms with these fixed noise multipliers."""
        return dataclasses.replace(
            self, prior_noise_multipliers=tuple(float(z) for z in noise_multipliers)
        )

    def without_priors(self) -> PrivacyPlan:
        """The run alone: this plan without its prior mechanisms."""
        return dataclasses.replace(self, prior_noise_multipliers=())

    @property
    def n_steps(self) -> int:
        return sum(group.count for group in self.groups)

    def step_noise_multipliers(self, sigma: float) -> list[tuple[int, float]]:
        """``(count, noise multiplier)`` for each group at overall scale ``sigma``."""
        return [(group.count, group.relative_noise * sigma) for group in self.groups]

    def dp_event(self, sigma: float) -> dp_accounting.DpEvent:
        """The DpEvent of the run with overall noise scale ``sigma``.

        ``sigma`` is the standard deviation of the Gaussian noise added to a sum of per-example
        contributions, divided by the sensitivity of that sum (the clipping bound).
        """
        if not sigma > 0.0:
            raise ValueError(f"the noise scale must be positive, got {sigma}")
        events = []
        for group in self.groups:
            step: dp_accounting.DpEvent = dp_accounting.GaussianDpEvent(
                group.relative_noise * sigma
            )
            if group.sampling_rate < 1.0:
                step = dp_accounting.PoissonSampledDpEvent(group.sampling_rate, step)
            events.append(dp_accounting.SelfComposedDpEvent(step, group.count))
        priors = [dp_accounting.GaussianDpEvent(z) for z in self.prior_noise_multipliers]
        events = priors + events
        return events[0] if len(events) == 1 else dp_accounting.ComposedDpEvent(events)
