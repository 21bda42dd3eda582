"""Mechanisms: the ways skdp trains privately, and the one seam where a new one plugs in.

Every fit is plan, calibrate, charge, run, record. A mechanism provides its plan (the public
layout of its run, with its ``dp_event``), its calibration and its run, and the privacy
statement of what it released (:class:`Mechanism`); the flow, the privacy report and the
estimators never ask which one they hold. The DP-SGD optimizers (``noisy_sgd``, ``adp_sgd``,
``adaclip``, ``diff2``) are mechanisms built from the public :class:`SGDSettings` of a fit;
:func:`register_optimizer` makes a new one available to every estimator as
``optimizer=<name>``, without editing skdp. ``DPRidge(optimizer='ssp')`` (AdaSSP: noisy
sufficient statistics) goes through the same flow.
"""

from ._base import Mechanism, PlanNotComposable, Release, RunInput, StatementFacts
from ._registry import OPTIMIZER_NAMES, register_optimizer
from ._sgd.optimizer import SGDOptimizer
from ._sgd.settings import SGDSettings

__all__ = [
    "Mechanism",
    "OPTIMIZER_NAMES",
    "PlanNotComposable",
    "Release",
    "RunInput",
    "SGDOptimizer",
    "SGDSettings",
    "StatementFacts",
    "register_optimizer",
]
