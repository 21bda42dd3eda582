"""The base class of every skdp estimator: scikit-learn glue around the shared fit flow.

An estimator family (linear models, MLPs) validates its input, builds its model and the
recipe of its fit (:class:`skdp._fit.flow.FitRecipe`: the mechanism, from public quantities),
and turns the released parameters into fitted attributes; :mod:`skdp._fit.flow` does the rest.
"""

from __future__ import annotations

from numbers import Real

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted, validate_data

from .._utils.html import PrivacyReprMixin
from .._utils.validation import ACCEPT_SPARSE, explain_input_error
from ..accounting._schedules import NOISE_SCHEDULES
from ..mechanisms._base import Release
from ..mechanisms._sgd.step_sizes import LEARNING_RATE_SCHEDULES
from .allocation import AllocatedMixin
from .flow import private_fit

__all__ = ["BaseDPEstimator", "Features", "SCHEDULE_CONSTRAINTS"]

# Validated features: dense, or scipy sparse (CSR or CSC) as validate_data returns them.
Features = np.ndarray | sp.spmatrix | sp.sparray

# Parameters every estimator shares for step-size and noise schedules.
SCHEDULE_CONSTRAINTS: dict = {
    "learning_rate": [StrOptions({*LEARNING_RATE_SCHEDULES, "auto"})],
    "power_t": [Interval(Real, 0, None, closed="left")],
    "noise_schedule": [StrOptions(set(NOISE_SCHEDULES))],
    "noise_decay": [Interval(Real, 0, 1, closed="right")],
}


class BaseDPEstimator(PrivacyReprMixin, AllocatedMixin, BaseEstimator):
    """Base class of every skdp estimator: the shared private fit and the privacy report."""

    def _private_fit(self, X, targets: np.ndarray, build) -> Release:
        """The shared fit flow (:func:`skdp._fit.flow.private_fit`) for this estimator."""
        return private_fit(self, X, targets, build)

    def _public_facts(self) -> list[str]:
        """Facts about the data that the fit treats as public (shown in the privacy report)."""
        return []

    # Hooks of scale-free training (the linear models implement them) ---------------------
    def _scale_noise_multiplier(
        self, epsilon: float, delta: float, n_samples: int, n_outputs: int
    ) -> float | None:
        """Noise multiplier of the fit's own search for a public scale, or ``None``."""
        return None

    def _apply_public_scale(self, X, targets, noise_multiplier, *, private: bool,
                            rows: bool = True, dtype=np.float64):
        """``(X, targets, scale, report lines)`` on the training scale (``scale``: the public
        scale found, or ``None``); unchanged by default."""
        return X, targets, None, []

    def privacy_report(self) -> str:
        """A short statement of the privacy guarantee of this fit.

        Returns
        -------
        report : str
            Mechanism, noise, steps, sampling, neighbouring relation, accountant and the proven
            (epsilon, delta).
        """
        check_is_fitted(self, "privacy_spent_")
        return self._privacy_report

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True  # CSR/CSC (others converted); no dense copy is made
        return tags

    def _validate_input(self, X, y="no_validation", **check_params) -> Features | tuple:
        """scikit-learn's ``validate_data`` with skdp's input rules: float64 or float32, sparse
        CSR or CSC accepted (other sparse formats become CSR), and errors about missing or
        non-numeric values that point to private preprocessing (see
        :func:`skdp._utils.validation.explain_input_error`)."""
        try:
            return validate_data(
                self, X, y, accept_sparse=ACCEPT_SPARSE, dtype=[np.float64, np.float32],
                **check_params,
            )
        except (ValueError, TypeError) as error:
            explained = explain_input_error(error, X, type(self).__name__)
            if explained is None:
                raise
            raise explained from error

    def _validate_classification_data(self, X, y) -> tuple[Features, np.ndarray]:
        """``(X, y)`` validated for a classifier (``y`` left as given labels)."""
        return self._validate_input(X, y, y_numeric=False)

    def _validate_regression_data(self, X, y) -> tuple[Features, np.ndarray, np.ndarray]:
        """``(X, y, targets)``: validated data, ``y`` as float64, and ``targets`` with one
        column per output (what the squared loss trains on)."""
        X, y = self._validate_input(X, y, multi_output=True, y_numeric=True)
        y = np.asarray(y, dtype=np.float64)
        return X, y, (y.reshape(-1, 1) if y.ndim == 1 else y)

    def _validate_X_predict(self, X) -> Features:
        check_is_fitted(self)
        return self._validate_input(X, reset=False)
