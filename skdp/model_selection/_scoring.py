"""The noisy validation score of one trial: a Gaussian mechanism on a bounded sum.

Classifiers: the number of correctly classified validation rows. Adding or removing one row
changes it by at most 1 (the model is fixed: it was trained on the other part of the data).

Regressors: the sum over validation rows of the squared error clipped to ``score_clip``,
``min(||y_i - f(x_i)||^2, score_clip)`` (summed over outputs). Adding or removing one row
changes it by at most ``score_clip``.

Gaussian noise of standard deviation ``noise_multiplier * sensitivity`` is added to the sum, a
``GaussianDpEvent(noise_multiplier)``. The search compares the noisy sums of its trials; the
released ``best_score_`` divides the winner's by the (public) number of validation rows.
"""

from __future__ import annotations

import math

import numpy as np
from dp_accounting.rdp import rdp_privacy_accountant as _rdp

from ..accounting._rdp_orders import DEFAULT_ORDERS

__all__ = [
    "score_sensitivity",
    "exact_score_sum",
    "noisy_validation_score",
    "gaussian_noise_for",
]


def score_sensitivity(classifier: bool, score_clip: float) -> float:
    """Largest change of the score sum when one validation row is added or removed."""
    return 1.0 if classifier else float(score_clip)


def exact_score_sum(estimator, X_val, y_val, classifier: bool, score_clip: float) -> float:
    """The score sum before noise, oriented so that larger is better.

    Classifiers: number of correct predictions. Regressors: minus the sum of clipped squared
    errors. Each row contributes a value in ``[0, 1]`` or ``[-score_clip, 0]``.
    """
    pred = np.asarray(estimator.predict(X_val))
    y_val = np.asarray(y_val)
    if classifier:
        return float(np.sum(pred == y_val))
    residual = np.asarray(y_val, dtype=np.float64).reshape(len(y_val), -1) - np.asarray(
        pred, dtype=np.float64
    ).reshape(len(y_val), -1)
    per_row = np.sum(residual**2, axis=1)
    # NaN/inf predictions (a diverged model) count as the worst possible row.
    per_row = np.where(np.isfinite(per_row), per_row, np.inf)
    return -float(np.sum(np.minimum(per_row, score_clip)))


def noisy_validation_score(
    estimator,
    X_val,
    y_val,
    *,
    classifier: bool,
    score_clip: float,
    noise_multiplier: float,
    rng: np.random.Generator,
) -> float:
    """The noisy score sum of ``estimator`` on the validation rows (larger is better)."""
    exact = exact_score_sum(estimator, X_val, y_val, classifier, score_clip)
    scale = noise_multiplier * score_sensitivity(classifier, score_clip)
    return exact + float(rng.normal(0.0, scale))


def gaussian_noise_for(epsilon: float, delta: float) -> float:
    """The smallest noise multiplier (within 0.1%) for which the Gaussian mechanism alone is
    ``(epsilon, delta)``-DP by its RDP curve, ``order / (2 s^2)``, converted as dp_accounting
    does. Only a parametrisation of the score's noise: the search accounts the resulting
    ``GaussianDpEvent`` exactly, composed with the fit.
    """
    orders = np.asarray(DEFAULT_ORDERS, dtype=np.float64)

    def eps(sigma: float) -> float:
        return _rdp.compute_epsilon(orders, orders / (2.0 * sigma**2), delta)[0]

    # Bracket from the zCDP bound, which is valid, so never below the noise needed.
    log_term = math.log(1.0 / delta)
    high = 1.0 / (math.sqrt(2.0) * (math.sqrt(log_term + epsilon) - math.sqrt(log_term)))
    low = high / 4.0
    while eps(low) <= epsilon:  # pragma: no cover - the zCDP bound is within 4x
        low /= 2.0
    while high / low > 1.001:
        mid = math.sqrt(low * high)
        if eps(mid) <= epsilon:
            high = mid
        else:
            low = mid
    return high
