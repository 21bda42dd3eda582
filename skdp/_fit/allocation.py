"""How a private pipeline hands each of its DP steps its share of the pipeline's budget.

:class:`skdp.pipeline.PrivatePipeline` plans and charges the whole pipeline before any data is
read, then fits its steps with scikit-learn's own machinery (``Pipeline``, ``ColumnTransformer``,
``TransformedTargetRegressor``), which clones some steps before fitting them. The share of a
step therefore travels with the step object: the pipeline attaches an allocation to every DP
step of its tree, :class:`AllocatedMixin` copies it onto clones (including clones sent to
joblib workers, which are pickled with it), and the step's ``fit`` takes it (once). The
pipeline removes every allocation left over when its fit ends, so a step fitted later on its
own never uses a stale one.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = [
    "AllocatedMixin",
    "ModelAllocation",
    "StepAllocation",
    "attach_allocation",
    "detach_allocation",
    "take_allocation",
]

_ATTRIBUTE = "_skdp_allocation"


@dataclass(frozen=True)
class StepAllocation:
    """A DP transformer's share of a private pipeline.

    Attributes
    ----------
    path : str
        The step's parameter path in the pipeline (``get_params`` style).
    noise_multiplier : float
        The noise multiplier of the step's whole release, one Gaussian mechanism (the step
        splits it among its statistics); 0 for a non-private pipeline.
    extra_delta : float
        The (0, p) part the step may use (partition selection), 0 if it has none.
    delta : float
        The pipeline's delta, for the step's own statement.
    """

    path: str
    noise_multiplier: float
    extra_delta: float
    delta: float


@dataclass(frozen=True)
class ModelAllocation:
    """The final DP estimator's share: calibrate to ``(epsilon, delta)`` (delta already net of
    the pipeline's extra delta) composed after the preprocessing's Gaussian mechanisms."""

    path: str
    epsilon: float
    delta: float
    prior_noise_multipliers: tuple[float, ...]


def attach_allocation(step, allocation: StepAllocation | ModelAllocation) -> None:
    setattr(step, _ATTRIBUTE, allocation)


def detach_allocation(step) -> None:
    step.__dict__.pop(_ATTRIBUTE, None)


def has_allocation(step) -> bool:
    """Whether a private pipeline has attached an allocation to ``step`` (not removing it)."""
    return _ATTRIBUTE in step.__dict__


def take_allocation(step) -> StepAllocation | ModelAllocation | None:
    """The allocation attached to ``step``, removed from it (an allocation is used once)."""
    return step.__dict__.pop(_ATTRIBUTE, None)


class AllocatedMixin:
    """Copies an attached allocation onto scikit-learn clones (``sklearn.base.clone`` calls
    ``__sklearn_clone__``): meta-estimators clone the steps a private pipeline allocated."""

    def __sklearn_clone__(self):
        new = super().__sklearn_clone__()
        allocation = self.__dict__.get(_ATTRIBUTE)
        if allocation is not None:
            attach_allocation(new, allocation)
        return new
