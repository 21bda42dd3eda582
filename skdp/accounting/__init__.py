"""Privacy accounting: plans, calibration of the noise to a target, and privacy reports.

``dp_accounting`` (Google) does the accounting; this package turns skdp's training plans into its
DpEvents and calibrates the noise scale.
"""

from ._accountants import ACCOUNTANTS, epsilon_of, make_accountant
from ._calibration import Calibration, UnreachablePrivacyTarget, calibrate
from ._last_iterate_bounds import last_iterate_rdp
from ._last_iterate_calibration import (
    LastIterateCalibration,
    LastIterateGuarantee,
    calibrate_last_iterate,
    last_iterate_guarantee,
)
from ._last_iterate_run import LastIterateRun, check_last_iterate_conditions
from ._plan import NeighboringRelation, PrivacyPlan, Sampling, StepGroup
from ._report import privacy_statement

__all__ = [
    "ACCOUNTANTS",
    "Calibration",
    "LastIterateCalibration",
    "LastIterateGuarantee",
    "LastIterateRun",
    "NeighboringRelation",
    "PrivacyPlan",
    "Sampling",
    "StepGroup",
    "UnreachablePrivacyTarget",
    "calibrate",
    "calibrate_last_iterate",
    "check_last_iterate_conditions",
    "epsilon_of",
    "last_iterate_guarantee",
    "last_iterate_rdp",
    "make_accountant",
    "privacy_statement",
]
