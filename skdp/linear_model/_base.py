"""Shared fit logic of the DP linear models: a closed-form GLM behind the shared fit flow."""

from __future__ import annotations

import dataclasses
import math
from numbers import Integral, Real

import numpy as np
import torch
from sklearn.utils._param_validation import Interval, StrOptions

from .._defaults.linear import (
    USER_SCALE_DAMPING,
    auto_step_size,
    grown_epochs,
    noise_level,
    non_private_epochs,
    resolve_epochs,
)
from .._defaults.sgd import noise_damped_step, resolve_average
from .._engine._glm import CLIP_SAFETY, GLMLoss, LinearModel
from .._engine.rows.host import rescale_rows
from .._fit.estimator import SCHEDULE_CONSTRAINTS, BaseDPEstimator, Features
from .._fit.flow import PrivacyTarget
from .._fit.sgd import resolve_batch_size, schedule_settings, sgd_recipe
from .._scale.fit import ScaleFreeFitMixin
from ..accounting import ACCOUNTANTS
from ..mechanisms._registry import (
    OPTIMIZER_NAMES,
    last_iterate_optimizers,
    make_optimizer,
    optimizer_class,
)
from ..mechanisms._sgd.settings import SGDSettings, steps_per_epoch

__all__ = ["BaseDPLinearModel", "LINEAR_ACCOUNTANTS", "linear_params"]

# The linear models are convex, so they also offer the last-iterate accountant.
LINEAR_ACCOUNTANTS = (*ACCOUNTANTS, "last_iterate")


class BaseDPLinearModel(ScaleFreeFitMixin, BaseDPEstimator):
    """Base class of DP linear models trained by DP-SGD on a closed-form GLM gradient."""

    _parameter_constraints: dict = {
        # privacy and device get tailored messages from check_privacy and resolve_device.
        "privacy": "no_validation",
        "optimizer": [StrOptions(OPTIMIZER_NAMES)],  # the live registry
        "optimizer_params": [dict, None],
        "max_grad_norm": [Interval(Real, 0, None, closed="neither")],
        **SCHEDULE_CONSTRAINTS,
        "eta0": [Interval(Real, 0, None, closed="neither"), StrOptions({"auto"})],
        "batch_size": [Interval(Integral, 1, None, closed="left"), StrOptions({"auto"})],
        "max_iter": [Interval(Integral, 1, None, closed="left"), StrOptions({"auto"})],
        "fit_intercept": ["boolean"],
        "average": ["boolean", Interval(Real, 0, 1, closed="right")],
        "accountant": [StrOptions(set(LINEAR_ACCOUNTANTS))],
        "projection_radius": [Interval(Real, 0, None, closed="neither"), None],
        "max_row_norm": [Interval(Real, 0, None, closed="neither"), StrOptions({"auto"}), None],
        "budget": "no_validation",  # checked in fit, with a tailored message
        "device": "no_validation",
        "random_state": ["random_state"],
        "verbose": ["verbose"],
    }

    # Implemented by subclasses -------------------------------------------------------------
    #: ``(eta0, epochs)`` that ``eta0='auto'`` and ``max_iter='auto'`` mean for a mini-batch run
    #: on the user's own row scale (``max_row_norm`` None or a float): an estimator's constants
    #: measured on its usual data, where the scale-free rules (``_defaults``) were not as good.
    #: ``None``: the rules apply everywhere. Full-batch runs and runs on the public scale that
    #: ``max_row_norm='auto'`` finds always use the rules.
    _USER_SCALE_DEFAULTS: tuple[float, int] | None = None
    #: The user-scale step without privacy, where nothing is clipped (``None``: the same).
    _NON_PRIVATE_USER_SCALE_STEP: float | None = None

    def _user_scale_defaults(self, n_samples: int, batch_size: int) -> tuple[float, int] | None:
        """The estimator's measured ``(eta0, epochs)`` where they apply, else ``None``."""
        if self.max_row_norm == "auto" or steps_per_epoch(n_samples, batch_size) == 1:
            return None
        return self._USER_SCALE_DEFAULTS

    def _l2_strength(self, n_samples: int) -> float:
        raise NotImplementedError

    # The shared fit ------------------------------------------------------------------------
    def _fit_linear(self, X: Features, targets: np.ndarray, loss: GLMLoss, n_outputs: int):
        """Train by the shared private fit; returns ``(coef, intercept)`` as float64 arrays."""
        n_samples, n_features = X.shape
        model = LinearModel(n_features, n_outputs, loss, self.fit_intercept)
        l2 = self._l2_strength(n_samples)
        last_iterate = self.accountant == "last_iterate"
        if last_iterate:
            # Refused here, with this estimator's parameter names, before anything is charged
            # or trained; the engine checks the same conditions again.
            self._check_last_iterate(model, l2)
        facts = []
        if self._given_row_norm():
            # A per-row transformation with a public bound: free under DP.
            X = rescale_rows(X, float(self.max_row_norm))
            facts.append(
                f"rows of X with L2 norm above max_row_norm={self.max_row_norm:g} were scaled "
                "down to that norm (per row, before training; predictions use rows as given)"
            )
        if self.projection_radius is not None and not last_iterate:
            facts.append(
                "after every step all parameters (coefficients and intercept together) were "
                f"projected onto the L2 ball of radius {self.projection_radius:g}"
            )
        n_scaled = targets.shape[1] if targets.ndim > 1 else 1

        def build(target: PrivacyTarget):
            settings = self._settings(model, l2, n_samples, target)
            return sgd_recipe(
                self, settings,
                lambda settings, calibration, data: self._settings_after_calibration(
                    settings, calibration, model, data.scale),
                model=model,
                scale_noise=self._scale_noise_multiplier(
                    target.epsilon, target.delta, n_samples, n_scaled),
                training_facts=facts,
            )

        release = self._private_fit(X, targets, build)
        coef, intercept = linear_params(release.params, n_features, n_outputs)
        scale = self._take_fit_scale()
        if scale is not None:
            coef, intercept = scale.to_user_units(coef, intercept)
            if scale.row_bound is not None:
                self.row_norm_bound_ = scale.row_bound
        return coef, intercept

    def _settings(
        self, model: LinearModel, l2: float, n_samples: int, target: PrivacyTarget
    ) -> SGDSettings:
        """The public settings of the run, from the parameters and the target."""
        last_iterate = self.accountant == "last_iterate"
        # The batch floor for many parameters needs the number of features, which a private
        # pipeline's plan does not know (it plans the model on n and the labels, before the
        # preprocessing makes the columns): inside one the batch is a function of n only.
        batch_size = resolve_batch_size(
            self.batch_size, n_samples, self.optimizer,
            n_params=None if target.in_pipeline else model.n_params,
        )
        user_scale = self._user_scale_defaults(n_samples, batch_size)
        settings = SGDSettings(
            n_samples=n_samples,
            batch_size=batch_size,
            epochs=resolve_epochs(
                self.max_iter, n_samples, batch_size, None if user_scale is None else user_scale[1]
            ),
            learning_rate=self._initial_step_size(model, l2, last_iterate, user_scale),
            max_grad_norm=float(self.max_grad_norm),
            l2=l2,
            average=resolve_average(self.average),
            **schedule_settings(self),
            optimizer_params=self.optimizer_params,
            projection_radius=(
                None if self.projection_radius is None else float(self.projection_radius)
            ),
            smoothness=(
                model.smoothness(self.max_row_norm, l2) if self._given_row_norm() else None
            ),
            strong_convexity=model.strong_convexity(l2),
        )
        return self._settings_for_privacy(settings, target.epsilon, target.delta, model)

    def _initial_step_size(
        self, model: LinearModel, l2: float, last_iterate: bool,
        user_scale: tuple[float, int] | None = None,
    ) -> float:
        """``eta0``; for ``'auto'`` the estimator's measured step on the user's scale (mini-batch),
        else a placeholder that only fixes the shape of a decaying schedule (scale-free) until
        the noise is calibrated (_settings_after_calibration), except under the last-iterate
        bound, whose plan needs the step: ``1 / M``, half its limit (every per-example step
        then contracts)."""
        if self.eta0 != "auto":
            return float(self.eta0)
        if user_scale is not None and not last_iterate:
            return float(user_scale[0])
        if last_iterate:
            return 1.0 / model.smoothness(self.max_row_norm, l2)
        return 1.0

    # Scale-free training (skdp/_scale/public_scale.py) --------------------------------------
    def _given_row_norm(self) -> bool:
        return self.max_row_norm is not None and self.max_row_norm != "auto"

    def _settings_for_privacy(self, settings, epsilon, delta, model):
        # max_iter='auto' on the user's scale: the measured epochs, more at a large epsilon
        # where the noise is small (_defaults.grown_epochs). Public: n, p, the target and the
        # calibrated noise of the default run (cached), never the data.
        if self.max_iter != "auto" or self.accountant == "last_iterate" or epsilon <= 1.0:
            return settings
        if self._user_scale_defaults(settings.n_samples, settings.batch_size) is None:
            if not math.isinf(epsilon):
                return settings
            # The rules' runs (not the measured user-scale ones) without privacy: nothing but
            # iterations limits the fit.
            per_epoch = steps_per_epoch(settings.n_samples, settings.batch_size)
            epochs = non_private_epochs(settings.epochs, per_epoch, model.loss)
            return dataclasses.replace(settings, epochs=epochs)
        nu = 0.0
        if not math.isinf(epsilon):
            optimizer = make_optimizer(self.optimizer, settings, self.accountant)
            noise = optimizer.calibrate(
                optimizer.plan(), epsilon, delta, self.accountant).noise_multiplier
            nu = noise_level(noise, model.n_params, settings.batch_size)
        epochs = grown_epochs(settings.epochs, epsilon, nu)
        return settings if epochs == settings.epochs else dataclasses.replace(
            settings, epochs=epochs)

    def _settings_after_calibration(self, settings, calibration, model, scale):
        """Settings chosen from the calibrated noise and the public ``scale`` the rows were
        put on (``None``: as given); both public."""
        changes = {}
        rows_scaled = scale is not None and scale.row_bound is not None
        if scale is not None and scale.row_scale is not None and settings.l2:
            # The penalty is on the coefficients in the user's units (scikit-learn's objective):
            # on rows divided by B (and targets divided by h) that is l2 / B^2.
            changes["l2"] = settings.l2 / scale.row_scale**2
        user_scale = self._user_scale_defaults(settings.n_samples, settings.batch_size)
        # eta0='auto' is resolved here except under the last-iterate bound (fixed at planning).
        auto_step = self.eta0 == "auto" and self.accountant != "last_iterate"
        if auto_step and user_scale is not None:
            # The measured step, damped by the calibrated noise per coordinate (public);
            # without privacy nothing is clipped, so the step is not a normalised one.
            changes["learning_rate"] = (
                noise_damped_step(
                    user_scale[0], calibration.noise_multiplier, settings.batch_size,
                    USER_SCALE_DAMPING,
                )
                if calibration.is_private
                else self._NON_PRIVATE_USER_SCALE_STEP or user_scale[0]
            )
        elif auto_step:
            row_bound = 1.0 if rows_scaled else (
                float(self.max_row_norm) if self._given_row_norm() else None
            )
            step = auto_step_size(
                row_bound, self.fit_intercept, calibration.noise_multiplier,
                model.n_params, settings.batch_size, model.loss,
                changes.get("l2", settings.l2), n_features=model.n_features,
            )
            # An optimizer may take a fraction of the rule's step (diff2: half).
            factor = getattr(optimizer_class(self.optimizer), "auto_step_factor", 1.0)
            changes["learning_rate"] = step * factor if factor != 1.0 else step
        return dataclasses.replace(settings, **changes) if changes else settings

    def _check_last_iterate(self, model: LinearModel, l2: float) -> None:
        """Refuse ``accountant='last_iterate'`` when its conditions fail, saying what to change.

        The conditions (Altschuler & Talwar; ``skdp/accounting/_last_iterate.py``): projected
        noisy SGD with a public projection radius, rows of public bounded norm (so that the
        smoothness constant M is public), a constant step size at most 2/M, fixed-size batches
        and the last iterate only.
        """
        what = "accountant='last_iterate' (the last-iterate bound of Altschuler & Talwar)"
        variants = last_iterate_optimizers()
        if self.optimizer not in variants:
            names = " or ".join(f"optimizer={name!r}" for name in variants)
            raise ValueError(
                f"{what} covers {names} only, got optimizer={self.optimizer!r}; "
                "use the standard accountant ('pld' or 'rdp') with other optimizers"
            )
        if self.projection_radius is None or not math.isfinite(self.projection_radius):
            raise ValueError(
                f"{what} needs projection_radius: the radius of the L2 ball that all parameters "
                "(coefficients and intercept together) are projected onto after every step. "
                "Choose it without looking at the private data, large enough to contain the "
                "model you expect (e.g. a few times the norm of a model fitted on public data); "
                f"got projection_radius={self.projection_radius!r}"
            )
        if not self._given_row_norm() or not math.isfinite(self.max_row_norm):
            raise ValueError(
                f"{what} needs max_row_norm, a public bound on the L2 norm of the rows of X "
                "(rows above it are scaled down to it): the smoothness of the loss, and so the "
                "largest step size the bound allows, depends on it, and it may not be learned "
                "from the private data (max_row_norm='auto' finds it with a DP search, which "
                "the last-iterate bound does not cover). Take it from the public ranges of the "
                f"features; got max_row_norm={self.max_row_norm!r}"
            )
        if resolve_average(self.average) != 0:
            raise ValueError(
                f"{what} covers the last iterate only, and averaging iterates is provably less "
                f"private; set average=False (got average={self.average!r})"
            )
        if self.verbose:
            raise ValueError(
                f"{what} covers the last iterate only, and verbose output shows statistics of "
                "the intermediate noisy gradients, which it does not protect; set verbose=0"
            )
        row_bound = model.augmented_row_bound(self.max_row_norm)
        if not model.clipping_keeps_convexity:
            needed = model.gradient_norm_bound(self.max_row_norm) / CLIP_SAFETY
            if self.max_grad_norm < needed:
                raise ValueError(
                    f"{what} with more than two classes needs per-example gradients that are "
                    "never clipped (clipping the softmax gradient does not keep the loss "
                    "convex): with max_row_norm={:g} gradients have norm at most sqrt(2) * {:.4g}, "
                    "so set max_grad_norm >= {:.6g} (got {:g})".format(
                        self.max_row_norm, row_bound, needed, self.max_grad_norm
                    )
                )
        smoothness = model.smoothness(self.max_row_norm, l2)
        strong = model.strong_convexity(l2)
        limit = 2.0 / smoothness
        if self.eta0 == "auto":
            return  # 1 / M (_last_iterate_step), within the limit
        if self.eta0 > limit or (strong > 0 and self.eta0 >= limit):
            intercept = " (the intercept counts as a feature 1)" if self.fit_intercept else ""
            curvature = (smoothness - l2) / row_bound**2
            suggestion = (
                f"eta0 < {limit:.6g} (2 / (M + m) = {2.0 / (smoothness + strong):.6g} "
                "contracts best)"
                if strong > 0
                else f"eta0 <= {limit:.6g}"
            )
            raise ValueError(
                f"{what} needs a step size within the smoothness bound eta0 <= 2 / M, so that "
                f"every per-example step is a contraction; for this loss M = {curvature:g} R^2 "
                f"+ l2 = {smoothness:.6g} (rows of norm at most R = {row_bound:.6g}{intercept}, "
                f"L2 penalty l2 = {l2:.3g}), so 2 / M = {limit:.6g} but eta0={self.eta0:g}. "
                f"Use {suggestion}, or a smaller max_row_norm."
            )


def linear_params(params, n_features: int, n_outputs: int) -> tuple[np.ndarray, np.ndarray]:
    """``(coef, intercept)`` in float64 from released parameters in the linear model's flat
    layout ``[W.ravel(), b]`` (``W`` of shape (n_features, n_outputs); no ``b`` without an
    intercept): ``coef`` of shape (n_outputs, n_features)."""
    flat = (
        params.cpu().numpy().astype(np.float64)
        if isinstance(params, torch.Tensor) else np.asarray(params, dtype=np.float64)
    )
    n_weights = n_features * n_outputs
    coef = flat[:n_weights].reshape(n_features, n_outputs).T
    intercept = flat[n_weights:] if flat.size > n_weights else np.zeros(n_outputs)
    return coef, intercept
