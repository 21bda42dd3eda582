"""Before a private search spends anything: its inputs checked, its ledger found, and the public
split of the rows into a training and a validation part.

Every check here refuses before any privacy is charged. The split uses public coins only (drawn
from the search's ``random_state``, never from the data's values).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.pipeline import Pipeline
from sklearn.utils import _safe_indexing
from sklearn.utils.validation import (
    _num_samples,
    check_consistent_length,
    check_random_state,
    indexable,
)

from .._fit.charging import resolve_budget
from .._utils.validation import check_privacy, warn_if_delta_large
from ..budget import PrivacyBudget
from ..pipeline._input_check import check_input_before_charging
from ._candidates import SearchSpace, SearchTarget, search_target
from ._trials import TrialDistribution

__all__ = [
    "SearchInputs", "SearchSplit", "check_search_data", "check_search_input",
    "check_search_privacy", "check_search_target", "public_rng", "resolve_search_budget",
    "split_rows",
]


@dataclass(frozen=True)
class SearchInputs:
    """A search's checked inputs: the data, the total privacy, where it sets the trials'
    parameters, the candidates, the number of trials (``None``: every candidate once,
    composed) and the ledger to charge (``None``: none)."""

    X: Any
    y: Any
    privacy: tuple[float, float]
    target: SearchTarget
    classifier: bool
    space: SearchSpace
    trials: TrialDistribution | None
    budget: PrivacyBudget | None

    @property
    def exhaustive(self) -> bool:
        """Whether every candidate runs once (the plan composes them all)."""
        return self.trials is None


def check_search_privacy(privacy) -> tuple[float, float]:
    """The search's total ``(epsilon, delta)``; epsilon must be finite."""
    epsilon, delta = check_privacy(privacy)
    if not np.isfinite(epsilon):
        raise ValueError(
            "a private search needs a finite epsilon; for a non-private search use "
            "scikit-learn's GridSearchCV with privacy=(float('inf'), 0) estimators"
        )
    return epsilon, delta


def check_search_data(X, y, delta: float, name: str) -> tuple[Any, Any]:
    """``(X, y)`` made indexable; ``y`` is required, there must be rows for both parts, and a
    ``delta`` too large for the number of rows is warned about (once, for the whole search)."""
    if y is None:
        raise ValueError(f"{name} requires y to be passed, but the target y is None")
    X, y = indexable(X, y)
    check_consistent_length(X, y)
    n_samples = _num_samples(X)
    if n_samples < 2:
        raise ValueError(
            f"{name} needs at least 2 samples (a training and a validation "
            f"part), got n_samples={n_samples}"
        )
    warn_if_delta_large(delta, n_samples)
    return X, y


def check_search_target(estimator) -> SearchTarget:
    """Where the search sets what it manages on ``estimator``, refusing an accountant whose
    guarantee the search cannot compose."""
    target = search_target(estimator)
    if target.model.accountant == "last_iterate":
        raise ValueError(
            "accountant='last_iterate' cannot be used in a private search: its guarantee "
            "is an RDP curve under the replace-one relation, while the search composes "
            "add/remove-one DpEvents; use accountant='pld' or 'rdp'"
        )
    return target


def resolve_search_budget(budget, estimator, target: SearchTarget) -> PrivacyBudget | None:
    """The ledger the whole search is charged to: ``budget``, else the estimator's own
    ``budget`` (the DP estimator's, or the private pipeline's), else ``with budget:``."""
    own = estimator.get_params()[f"{target.privacy_prefix}budget"]
    if budget is None:
        budget = own
    elif own is not None and own is not budget:
        raise ValueError(
            "the search's budget and its estimator's budget are different ledgers; the "
            "whole search is charged once, to one of them: set only one"
        )
    budget = resolve_budget(budget)
    if budget is not None and budget.neighboring_relation.value != "add_or_remove_one":
        raise ValueError(
            "a private search states its guarantee under the add/remove-one relation; "
            "this budget accounts replace-one spends, and the two cannot be composed"
        )
    return budget


def check_search_input(template: BaseEstimator, X, y) -> None:
    """Refuse now, before anything is charged, input the trials' estimator would refuse (a
    private pipeline's model sees the preprocessed X only after its steps released)."""
    steps = list(template.steps) if isinstance(template, Pipeline) else [("model", template)]
    check_input_before_charging(steps, True, X, y)


def public_rng(random_state) -> np.random.Generator:
    """The search's public coins: the split, the number of trials, the candidates, the seeds."""
    return np.random.default_rng(check_random_state(random_state).randint(2**32))


@dataclass(frozen=True)
class SearchSplit:
    """The rows of the trials' fits (training part) and of their noisy scores (validation
    part); ``n_validation`` is treated as public, like the number of rows."""

    X_train: Any
    y_train: Any
    X_val: Any
    y_val: Any
    n_validation: int


def split_rows(X, y, validation_fraction: float, rng: np.random.Generator) -> SearchSplit:
    """Each row goes to the validation part with probability ``validation_fraction`` (public
    coins); the same split serves every trial."""
    n_samples = _num_samples(X)
    is_val = rng.random(n_samples) < validation_fraction
    val_idx, train_idx = np.flatnonzero(is_val), np.flatnonzero(~is_val)
    if val_idx.size == 0 or train_idx.size == 0:
        raise ValueError(
            f"validation_fraction={validation_fraction} leaves an empty training or "
            f"validation part of {n_samples} rows"
        )
    return SearchSplit(
        _safe_indexing(X, train_idx), _safe_indexing(y, train_idx),
        _safe_indexing(X, val_idx), _safe_indexing(y, val_idx), int(val_idx.size),
    )
