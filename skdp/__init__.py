"""skdp: scikit-learn estimators trained with differential privacy, on a torch backend.

>>> from skdp.linear_model import DPLogisticRegression
>>> clf = DPLogisticRegression(privacy=(1.0, 1e-5))  # doctest: +SKIP
"""

from ._validation import PrivacyWarning
from .accounting import UnreachablePrivacyTarget
from .budget import BudgetExceededError, LedgerError, PrivacyBudget

__version__ = "0.1.0.dev0"

__all__ = [
    "BudgetExceededError",
    "LedgerError",
    "PrivacyBudget",
    "PrivacyWarning",
    "UnreachablePrivacyTarget",
    "__version__",
]
