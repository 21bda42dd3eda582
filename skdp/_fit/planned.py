"""What a fit would spend, without fitting: a fit run as far as its calibration.

A private pipeline plans its model's share, a private search its trials, and an audit its
runs, by running the model's own ``fit`` under :func:`planned_spend`: the flow stops with
:class:`PlannedSpend` once the noise is calibrated, before any budget is charged and before the
data is used for training.
"""

from __future__ import annotations

import contextvars

from sklearn.base import clone

__all__ = ["PlannedSpend", "plan_only", "planned_spend"]

# Set while planned_spend() runs a fit as far as calibration.
_PLAN_ONLY: contextvars.ContextVar[bool] = contextvars.ContextVar("skdp_plan_only", default=False)


def plan_only() -> bool:
    """Whether the current fit is only being planned (see :func:`planned_spend`)."""
    return _PLAN_ONLY.get()


class PlannedSpend(Exception):
    """Raised by a fit run under :func:`planned_spend` once its noise is calibrated; carries
    what the fit would spend. An exception, so that no fitted state is recorded."""

    def __init__(self, calibration, spend) -> None:
        super().__init__("planned spend")
        self.calibration = calibration
        self.spend = spend


def planned_spend(estimator, X, y=None) -> PlannedSpend:
    """What fitting ``estimator`` on data shaped like ``(X, y)`` would spend, without fitting.

    Runs a clone's ``fit`` through validation, planning and calibration only: nothing is
    charged to any budget, nothing is trained, and ``estimator`` itself is not changed. The
    data is only validated (its shape, number of rows and classes are public facts of a fit).
    Calibration is deterministic, so a later real fit with the same parameters on the same data
    spends exactly ``.spend`` (a DpEvent, or an RdpCurve for the last-iterate accountant), with
    ``.calibration`` holding the noise multiplier and the proven (epsilon, delta).
    """
    token = _PLAN_ONLY.set(True)
    try:
        clone(estimator).fit(X, y)
    except PlannedSpend as planned:
        return planned
    finally:
        _PLAN_ONLY.reset(token)
    raise TypeError(f"{type(estimator).__name__} does not use skdp's private fit flow")
