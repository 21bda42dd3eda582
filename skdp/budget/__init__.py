"""A persistent privacy budget shared by every fit that charges it.

:class:`PrivacyBudget` keeps a ledger of privacy spends in an SQLite file, composes them tightly
with ``dp_accounting`` (PLD, or per-order RDP) and refuses any spend that would take the total
over the budget. It survives scikit-learn's ``clone`` (``GridSearchCV``), joblib worker
processes and restarts of Python. A spend is a DpEvent, an :class:`RdpCurve`, or either wrapped
in :class:`WithExtraDelta` for mechanisms with a part that only costs delta (such as the
new-key part of partition selection), which ``dp_accounting`` has no event for.

>>> import dp_accounting
>>> from skdp.budget import PrivacyBudget
>>> budget = PrivacyBudget(epsilon=3.0, delta=1e-5)  # path=None: a temporary ledger
>>> run = dp_accounting.SelfComposedDpEvent(
...     dp_accounting.PoissonSampledDpEvent(0.01, dp_accounting.GaussianDpEvent(2.0)), 1000)
>>> record = budget.charge(run, estimator="DPLogisticRegression", params={"max_iter": 10})
>>> budget.history()[0].estimator
'DPLogisticRegression'
"""

from ._codec import SUPPORTED_EVENT_CLASSES
from ._context import current_budget
from ._errors import BudgetExceededError, LedgerError
from ._ledger import PrivacyBudget
from ._records import LedgerTotals, RdpCurve, SpendRecord, WithExtraDelta

__all__ = [
    "BudgetExceededError",
    "LedgerError",
    "LedgerTotals",
    "PrivacyBudget",
    "RdpCurve",
    "SUPPORTED_EVENT_CLASSES",
    "SpendRecord",
    "WithExtraDelta",
    "current_budget",
]
