"""Training the audited models: clones of the estimator, fitted without charging any budget."""

from __future__ import annotations

import math

import numpy as np
from joblib import Parallel, delayed
from sklearn.base import clone, is_classifier
from sklearn.utils.validation import check_X_y

from .._fit.estimator import BaseDPEstimator
from .._fit.planned import planned_spend
from ..accounting import NeighboringRelation
from ..budget._context import CURRENT_BUDGET as _CURRENT
from ._scores import canary_scores

__all__ = ["AuditData", "check_audit_inputs", "fit_and_score", "fit_many", "run_seeds"]


class AuditData:
    """The audit's training data as validated arrays, with the facts the audit needs."""

    def __init__(self, estimator, X, y) -> None:
        self.classifier = is_classifier(estimator)
        X, y = check_X_y(
            X, y, dtype=[np.float64, np.float32], multi_output=not self.classifier,
            y_numeric=not self.classifier,
        )
        self.X, self.y = X, y


def check_audit_inputs(estimator, X, y) -> tuple[AuditData, NeighboringRelation, float]:
    """Validate what an audit is given; returns the data, the neighbouring relation of the
    estimator's guarantee and its delta (the audit bounds epsilon at the delta of the claim).
    """
    if not isinstance(estimator, BaseDPEstimator):
        raise TypeError(
            f"skdp.audit audits skdp's DP estimators, got {type(estimator).__name__}"
        )
    epsilon_target, _ = estimator.privacy
    if not math.isfinite(float(epsilon_target)):
        raise ValueError(
            "the estimator is non-private (privacy=(inf, 0)): there is no claim to audit"
        )
    data = AuditData(estimator, X, y)
    planned = planned_spend(_for_audit(estimator), data.X, data.y)
    relation = planned.calibration.neighboring_relation
    return data, relation, float(planned.calibration.delta)


def _for_audit(estimator):
    """A clone that charges no ledger (audits train on the auditor's own data)."""
    return clone(estimator).set_params(budget=None)


def run_seeds(rng: np.random.Generator, n: int) -> list[int]:
    return [int(s) for s in rng.integers(0, 2**31 - 1, size=n)]


def fit_and_score(
    estimator, X, y, seed: int, X_canary, y_canary, reference=None, allow_divergence=False
) -> tuple[np.ndarray, float]:
    """Fit a clone with ``random_state=seed``; return the canary scores and the claimed epsilon.

    Any enclosing ``with budget:`` block is ignored for the fit: the audit's fits are on the
    auditor's data and must not be charged to a ledger of private data.

    With ``allow_divergence``, a fit that diverges (the estimators raise FloatingPointError
    rather than release non-finite parameters) is an outcome like any other: every canary
    scores ``+inf`` and the claimed epsilon is NaN (nothing was released). A membership test
    may use it, as an attacker would see the failure.
    """
    model = _for_audit(estimator).set_params(random_state=seed)
    token = _CURRENT.set(None)
    try:
        model.fit(X, y)
    except FloatingPointError:
        if not allow_divergence:
            raise
        return np.full(len(X_canary), np.inf), float("nan")
    finally:
        _CURRENT.reset(token)
    return canary_scores(model, X_canary, y_canary, reference), float(model.privacy_spent_[0])


def fit_many(tasks, n_jobs: int | None) -> list[tuple[np.ndarray, float]]:
    """Run :func:`fit_and_score` on every task (a tuple of its arguments)."""
    if n_jobs in (None, 1):
        return [fit_and_score(*task) for task in tasks]
    return Parallel(n_jobs=n_jobs)(delayed(fit_and_score)(*task) for task in tasks)


def stack_rows(X, y, X_extra, y_extra):
    """``(X, y)`` with the extra rows appended at the end."""
    return np.concatenate([X, X_extra]), np.concatenate([y, y_extra])


def check_canary_argument(canary: str) -> str:
    from ._canaries import CANARY_KINDS

    if canary not in CANARY_KINDS:
        raise ValueError(f"canary must be one of {CANARY_KINDS}, got {canary!r}")
    return canary
