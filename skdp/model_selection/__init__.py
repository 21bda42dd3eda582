"""Private hyperparameter search: one privacy budget for tuning and the final model.

:class:`DPRandomizedSearchCV` and :class:`DPGridSearchCV` run a random number of trials (each a
DP fit plus a noisy validation score), release only the best one, and account the whole search,
selection and refit included, with the repeat-and-select bound of Papernot & Steinke (2022).
See ``docs/user_guide/private_search.md``.
"""

from ._search import DPGridSearchCV, DPRandomizedSearchCV
from ._trials import TRIAL_DISTRIBUTIONS, TrialDistribution

__all__ = ["DPGridSearchCV", "DPRandomizedSearchCV", "TRIAL_DISTRIBUTIONS", "TrialDistribution"]
