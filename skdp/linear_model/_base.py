"""Shared fit logic of the DP linear models: a closed-form GLM behind the shared fit flow."""

from __future__ import annotations

from numbers import Integral, Real

import numpy as np
from sklearn.utils._param_validation import Interval, StrOptions

from .._base import BaseDPEstimator, resolve_average, resolve_batch_size
from .._engine._glm import GLMLoss, LinearModel
from .._engine._noisy_sgd import SGDSettings
from .._engine._optimizers import OPTIMIZER_NAMES
from ..accounting import ACCOUNTANTS

__all__ = ["BaseDPLinearModel"]


class BaseDPLinearModel(BaseDPEstimator):
    """Base class of DP linear models trained by DP-SGD on a closed-form GLM gradient."""

    _parameter_constraints: dict = {
        # privacy and device get tailored messages from check_privacy and resolve_device.
        "privacy": "no_validation",
        "optimizer": [StrOptions(set(OPTIMIZER_NAMES))],
        "max_grad_norm": [Interval(Real, 0, None, closed="neither")],
        "learning_rate": [StrOptions({"constant"})],
        "eta0": [Interval(Real, 0, None, closed="neither")],
        "batch_size": [Interval(Integral, 1, None, closed="left"), StrOptions({"auto"})],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "fit_intercept": ["boolean"],
        "average": ["boolean", Interval(Real, 0, 1, closed="right")],
        "accountant": [StrOptions(set(ACCOUNTANTS))],
        "budget": "no_validation",  # checked in fit, with a tailored message
        "device": "no_validation",
        "random_state": ["random_state"],
        "verbose": ["verbose"],
    }

    # Implemented by subclasses -------------------------------------------------------------
    def _l2_strength(self, n_samples: int) -> float:
        raise NotImplementedError

    # The shared fit ------------------------------------------------------------------------
    def _fit_linear(self, X: np.ndarray, targets: np.ndarray, loss: GLMLoss, n_outputs: int):
        """Train by the shared private fit; returns ``(coef, intercept)`` as float64 arrays."""
        n_samples, n_features = X.shape
        settings = SGDSettings(
            n_samples=n_samples,
            batch_size=resolve_batch_size(self.batch_size, n_samples),
            epochs=self.max_iter,
            learning_rate=float(self.eta0),
            max_grad_norm=float(self.max_grad_norm),
            l2=self._l2_strength(n_samples),
            average=resolve_average(self.average),
        )
        model = LinearModel(n_features, n_outputs, loss, self.fit_intercept)
        params = self._private_fit(
            X,
            targets,
            model,
            loss.target_dtype,
            settings,
            mechanism=f"optimizer={self.optimizer!r} (DP-SGD)",
        )
        # Everything fitted lives on the host as numpy.
        coef = model.coef(params).T.cpu().numpy().astype(np.float64)
        intercept = model.intercept(params)
        intercept = (
            intercept.cpu().numpy().astype(np.float64)
            if intercept is not None
            else np.zeros(n_outputs)
        )
        return coef, intercept
