"""skdp: scikit-learn estimators trained with differential privacy, on a torch backend.

>>> from skdp.linear_model import DPLogisticRegression
>>> clf = DPLogisticRegression(privacy=(1.0, 1e-5))  # doctest: +SKIP
"""

from ._utils.config import config_context, get_config, set_config
from ._utils.validation import PrivacyWarning
from ._version import __version__
from .accounting import UnreachablePrivacyTarget
from .budget import BudgetExceededError, LedgerError, PrivacyBudget

__all__ = [
    "BudgetExceededError",
    "LedgerError",
    "PrivacyBudget",
    "PrivacyWarning",
    "UnreachablePrivacyTarget",
    "__version__",
    "config_context",
    "get_config",
    "set_config",
]
