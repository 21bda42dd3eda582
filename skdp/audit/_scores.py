"""Membership scores: how strongly a released model looks as if it was trained on a canary."""

from __future__ import annotations

import numpy as np
from sklearn.base import is_classifier

__all__ = ["canary_scores"]


def canary_scores(
    estimator, X_canary: np.ndarray, y_canary: np.ndarray, reference: np.ndarray | None = None
) -> np.ndarray:
    """The negative loss of each canary under the fitted ``estimator`` (higher: more likely in).

    Classifiers: the log-probability of the canary's label (``-log-loss``). Regressors: minus
    the Euclidean distance between the prediction and the canary's target (a monotone function
    of the squared loss). Training on a canary lowers its loss, so members score higher. These
    are black-box scores: they read predictions only, as an attacker with query access could.

    With ``reference`` (one input row), the score of each canary's target at that input is
    subtracted: what the canary's score shares with every input (an intercept, a shift of the
    output layer) then cancels, and what remains is the model's response to the canary's own
    features. Still black-box: two queries per canary.

    Returns
    -------
    scores : ndarray of shape (n_canaries,), float64
        Never NaN: a model whose predictions are NaN is refused with a ValueError.
    """
    scores = _negative_losses(estimator, np.asarray(X_canary), y_canary)
    if reference is not None:
        at_reference = np.repeat(np.asarray(reference).reshape(1, -1), len(X_canary), axis=0)
        scores = scores - _negative_losses(estimator, at_reference, y_canary)
    if np.isnan(scores).any():
        raise ValueError("the fitted model predicts NaN for a canary; it cannot be audited")
    return scores


def _negative_losses(estimator, X_canary, y_canary) -> np.ndarray:
    if is_classifier(estimator):
        log_proba = np.asarray(estimator.predict_log_proba(X_canary), dtype=np.float64)
        columns = np.searchsorted(estimator.classes_, y_canary)
        return log_proba[np.arange(len(columns)), columns]
    predictions = np.asarray(estimator.predict(X_canary), dtype=np.float64)
    residuals = predictions.reshape(len(X_canary), -1) - np.asarray(
        y_canary, dtype=np.float64
    ).reshape(len(X_canary), -1)
    return -np.linalg.norm(residuals, axis=1)
