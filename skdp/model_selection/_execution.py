"""Running a private search's fits: trials anywhere joblib sends them, with no ledger
charged, and a guard that every fit spent exactly what was accounted."""

from __future__ import annotations

import contextlib
import warnings

import numpy as np
from sklearn.base import clone
from sklearn.pipeline import Pipeline

from .._fit.estimator import planned_spend
from .._utils.validation import PrivacyWarning
from ..budget import _context as _budget_context
from ..budget._records import with_extra_delta
from ..pipeline import PrivatePipeline
from ._scoring import noisy_validation_score

__all__ = ["no_current_budget", "quiet_planned_spend", "run_trial", "candidate_key",
           "check_spent"]


@contextlib.contextmanager
def no_current_budget():
    """Trials and the refit charge nothing: the search charges its total once. This hides an
    enclosing ``with budget:`` block from them (worker processes never see it anyway)."""
    token = _budget_context._CURRENT.set(None)
    try:
        with warnings.catch_warnings():
            # The search warns about a large delta once, for the whole data set.
            warnings.simplefilter("ignore", PrivacyWarning)
            yield
    finally:
        _budget_context._CURRENT.reset(token)


def quiet_planned_spend(estimator, X, y):
    with no_current_budget():
        return planned_spend(estimator, X, y).spend


def run_trial(template, params, X_train, y_train, X_val, y_val, score_seed, classifier,
               score_clip, score_noise_multiplier):
    """One trial, anywhere joblib sends it: a DP fit, then a noisy validation score.

    Returns ``(noisy score sum, fitted estimator)``; the driver keeps only the best.
    """
    estimator = clone(template).set_params(**params)
    with no_current_budget():
        estimator.fit(X_train, y_train)
    score = noisy_validation_score(
        estimator, X_val, y_val, classifier=classifier, score_clip=score_clip,
        noise_multiplier=score_noise_multiplier, rng=np.random.default_rng(score_seed),
    )
    return score, estimator


def candidate_key(candidate: dict) -> str:
    return repr(sorted(candidate.items()))


def check_spent(model, planned, what: str) -> None:
    """Refuse to release anything if a fit spent other than what was accounted (a bug guard:
    calibration is deterministic, so a fit spends exactly its planned event)."""
    if isinstance(model, PrivatePipeline):  # the whole pipeline's spend
        spent = with_extra_delta(model.dp_event_, model.extra_delta_)
    else:
        while isinstance(model, Pipeline):
            model = model.steps[-1][1]
        spent = model.dp_event_
    if spent != planned:  # pragma: no cover - would be a bug
        raise RuntimeError(
            f"{what} spent {spent}, not the accounted {planned}; nothing is released. "
            "Please report this bug."
        )
