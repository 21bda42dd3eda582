"""Privacy accounting: plans, calibration of the noise to a target, and privacy reports.

``dp_accounting`` (Google) does the accounting; this package turns skdp's training plans into its
DpEvents and calibrates the noise scale.
"""

from ._accountants import ACCOUNTANTS, epsilon_of, make_accountant
from ._calibration import Calibration, UnreachablePrivacyTarget, calibrate
from ._plan import NeighboringRelation, PrivacyPlan, Sampling, StepGroup
from ._report import privacy_statement

__all__ = [
    "ACCOUNTANTS",
    "Calibration",
    "NeighboringRelation",
    "PrivacyPlan",
    "Sampling",
    "StepGroup",
    "UnreachablePrivacyTarget",
    "calibrate",
    "epsilon_of",
    "make_accountant",
    "privacy_statement",
]
