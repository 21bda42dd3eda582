"""Shared fit and forward pass of the DP multilayer perceptrons."""

from __future__ import annotations

import dataclasses
import math
from numbers import Integral, Real

import numpy as np
from scipy.special import expit
from sklearn.utils._param_validation import Interval, StrOptions

from .._defaults.mlp import NON_PRIVATE_EPOCHS, PRIVATE_EPOCHS, MLPSteps
from .._defaults.sgd import noise_damped_step, resolve_average
from .._engine._losses import OutputLoss
from .._engine._mlp import Activation, MLPModel
from .._fit.estimator import SCHEDULE_CONSTRAINTS, BaseDPEstimator, Features
from .._fit.flow import PrivacyTarget
from .._fit.sgd import resolve_batch_size, schedule_settings, sgd_recipe
from ..accounting import ACCOUNTANTS
from ..mechanisms._registry import OPTIMIZER_NAMES
from ..mechanisms._sgd.settings import SGDSettings

__all__ = ["BaseDPMLP"]

# The output activation that goes with each loss, named as scikit-learn's ``out_activation_``.
_OUT_ACTIVATION = {
    OutputLoss.LOGISTIC: "logistic",
    OutputLoss.SOFTMAX: "softmax",
    OutputLoss.SQUARED: "identity",
}


def _hidden_activation(z: np.ndarray, activation: Activation) -> np.ndarray:
    if activation is Activation.RELU:
        return np.maximum(z, 0.0, out=z)
    if activation is Activation.TANH:
        return np.tanh(z, out=z)
    if activation is Activation.LOGISTIC:
        return expit(z, out=z)
    return z


class BaseDPMLP(BaseDPEstimator):
    """Base class of the DP MLPs: a dense network trained by DP-SGD with ghost clipping."""

    #: ``learning_rate_init='auto'`` of this MLP (skdp._defaults.mlp).
    _STEPS: MLPSteps

    _parameter_constraints: dict = {
        # privacy and device get tailored messages from check_privacy and resolve_device.
        "privacy": "no_validation",
        "hidden_layer_sizes": ["array-like", Interval(Integral, 1, None, closed="left")],
        "activation": [StrOptions({a.value for a in Activation})],
        "optimizer": [StrOptions(OPTIMIZER_NAMES)],  # the live registry
        "optimizer_params": [dict, None],
        "max_grad_norm": [Interval(Real, 0, None, closed="neither")],
        "alpha": [Interval(Real, 0, None, closed="left")],
        "batch_size": [Interval(Integral, 1, None, closed="left"), StrOptions({"auto"})],
        **SCHEDULE_CONSTRAINTS,
        "learning_rate_init": [Interval(Real, 0, None, closed="neither"), StrOptions({"auto"})],
        "max_iter": [Interval(Integral, 1, None, closed="left"), StrOptions({"auto"})],
        "average": ["boolean", Interval(Real, 0, 1, closed="right")],
        "accountant": [StrOptions(set(ACCOUNTANTS))],
        "budget": "no_validation",  # checked in fit, with a tailored message
        "device": "no_validation",
        "random_state": ["random_state"],
        "verbose": ["verbose"],
    }

    def _layer_sizes(self, n_features: int, n_outputs: int) -> tuple[int, ...]:
        hidden = self.hidden_layer_sizes
        hidden = [hidden] if isinstance(hidden, Integral) else list(hidden)
        if any(not isinstance(h, Integral) or isinstance(h, bool) or h < 1 for h in hidden):
            raise ValueError(
                "hidden_layer_sizes must be a positive integer or a sequence of positive "
                f"integers, got {self.hidden_layer_sizes!r}"
            )
        return (n_features, *(int(h) for h in hidden), n_outputs)

    def _settings_for_privacy(
        self, settings: SGDSettings, epsilon: float, delta: float, model
    ) -> SGDSettings:
        if not math.isinf(epsilon):
            return settings
        changes = {}
        # Without privacy nothing is clipped, and the private step (2.0 for the classifier)
        # left digits and Fashion-MNIST at chance level and made the regressor diverge.
        if self.learning_rate_init == "auto":
            changes["learning_rate"] = self._STEPS.non_private
        # Without noise only iterations limit the fit.
        if self.max_iter == "auto":
            changes["epochs"] = NON_PRIVATE_EPOCHS
        return dataclasses.replace(settings, **changes) if changes else settings

    def _settings_after_calibration(self, settings: SGDSettings, calibration, model, scale):
        # learning_rate_init='auto' with privacy: the measured step damped by the calibrated
        # noise per coordinate (public).
        damping = self._private_step_damping(scale)
        if self.learning_rate_init == "auto" and calibration.is_private and damping:
            return dataclasses.replace(settings, learning_rate=noise_damped_step(
                self._STEPS.private, calibration.noise_multiplier, settings.batch_size, damping,
            ))
        return settings

    def _private_step_damping(self, scale) -> float:
        """The damping of the private ``'auto'`` step in this fit (0: none), given the public
        scale the data were put on."""
        return self._STEPS.damping

    def _fit_mlp(self, X: Features, targets: np.ndarray, loss: OutputLoss, n_outputs: int):
        """Train by the shared private fit and set ``coefs_``, ``intercepts_`` and friends."""
        n_samples, n_features = X.shape
        batch_size = resolve_batch_size(self.batch_size, n_samples, self.optimizer)
        settings = SGDSettings(
            n_samples=n_samples,
            batch_size=batch_size,
            epochs=PRIVATE_EPOCHS if self.max_iter == "auto" else int(self.max_iter),
            learning_rate=(
                self._STEPS.private if self.learning_rate_init == "auto"
                else float(self.learning_rate_init)
            ),
            max_grad_norm=float(self.max_grad_norm),
            # scikit-learn's stochastic solvers add alpha * W / batch_size to each step's
            # mean gradient; the same here, with the expected batch size.
            l2=float(self.alpha) / batch_size,
            average=resolve_average(self.average),
            **schedule_settings(self),
            optimizer_params=self.optimizer_params,
        )
        activation = Activation(self.activation)
        model = MLPModel(self._layer_sizes(n_features, n_outputs), activation, loss)
        n_scaled = targets.shape[1] if targets.ndim > 1 else 1

        def build(target: PrivacyTarget):
            return sgd_recipe(
                self,
                self._settings_for_privacy(settings, target.epsilon, target.delta, model),
                lambda settings, calibration, data: self._settings_after_calibration(
                    settings, calibration, model, data.scale),
                model=model,
                label_suffix=", per-layer ghost clipping",
                scale_noise=self._scale_noise_multiplier(
                    target.epsilon, target.delta, n_samples, n_scaled),
            )

        params = self._private_fit(X, targets, build).params
        # Everything fitted lives on the host as numpy: a fitted model pickles and predicts
        # without torch.
        self.coefs_ = [W.cpu().numpy().astype(np.float64) for W, _ in model.layers(params)]
        self.intercepts_ = [b.cpu().numpy().astype(np.float64) for _, b in model.layers(params)]
        self.n_layers_ = model.n_layers + 1  # scikit-learn counts the input layer
        self.n_outputs_ = n_outputs
        self.out_activation_ = _OUT_ACTIVATION[loss]
        # The hidden activation the coefficients were trained with, fixed at fit time.
        self._fitted_activation = activation
        return self

    def _forward(self, X) -> np.ndarray:
        """The output layer's pre-activation (logits or regression outputs), in numpy."""
        h = self._validate_X_predict(X)
        last = len(self.coefs_) - 1
        for index, (W, b) in enumerate(zip(self.coefs_, self.intercepts_, strict=True)):
            h = h @ W + b
            if index < last:
                h = _hidden_activation(h, self._fitted_activation)
        return h
