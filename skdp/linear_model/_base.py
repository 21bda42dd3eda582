"""Shared fit logic of the DP linear models: a closed-form GLM behind the shared fit flow."""

from __future__ import annotations

import math
from numbers import Integral, Real

import numpy as np
from sklearn.utils._param_validation import Interval, StrOptions

from .._base import (
    SCHEDULE_CONSTRAINTS,
    BaseDPEstimator,
    Features,
    resolve_average,
    resolve_batch_size,
)
from .._engine._glm import CLIP_SAFETY, GLMLoss, LinearModel, rescale_rows
from .._engine._noisy_sgd import SGDSettings
from .._engine._optimizers import OPTIMIZER_NAMES, describe_optimizer
from ..accounting import ACCOUNTANTS

__all__ = ["BaseDPLinearModel", "LINEAR_ACCOUNTANTS"]

# The linear models are convex, so they also offer the last-iterate accountant.
LINEAR_ACCOUNTANTS = (*ACCOUNTANTS, "last_iterate")


class BaseDPLinearModel(BaseDPEstimator):
    """Base class of DP linear models trained by DP-SGD on a closed-form GLM gradient."""

    _parameter_constraints: dict = {
        # privacy and device get tailored messages from check_privacy and resolve_device.
        "privacy": "no_validation",
        "optimizer": [StrOptions(set(OPTIMIZER_NAMES))],
        "optimizer_params": [dict, None],
        "max_grad_norm": [Interval(Real, 0, None, closed="neither")],
        **SCHEDULE_CONSTRAINTS,
        "eta0": [Interval(Real, 0, None, closed="neither")],
        "batch_size": [Interval(Integral, 1, None, closed="left"), StrOptions({"auto"})],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "fit_intercept": ["boolean"],
        "average": ["boolean", Interval(Real, 0, 1, closed="right")],
        "accountant": [StrOptions(set(LINEAR_ACCOUNTANTS))],
        "projection_radius": [Interval(Real, 0, None, closed="neither"), None],
        "max_row_norm": [Interval(Real, 0, None, closed="neither"), None],
        "budget": "no_validation",  # checked in fit, with a tailored message
        "device": "no_validation",
        "random_state": ["random_state"],
        "verbose": ["verbose"],
    }

    # Implemented by subclasses -------------------------------------------------------------
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
        settings = SGDSettings(
            n_samples=n_samples,
            batch_size=resolve_batch_size(self.batch_size, n_samples, self.optimizer),
            epochs=self.max_iter,
            learning_rate=float(self.eta0),
            max_grad_norm=float(self.max_grad_norm),
            l2=l2,
            average=resolve_average(self.average),
            **self._schedule_settings(),
            optimizer_params=self.optimizer_params,
            projection_radius=(
                None if self.projection_radius is None else float(self.projection_radius)
            ),
            smoothness=(
                None if self.max_row_norm is None else model.smoothness(self.max_row_norm, l2)
            ),
            strong_convexity=model.strong_convexity(l2),
        )
        facts = []
        if self.max_row_norm is not None:
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
        mechanism = (
            f"optimizer={self.optimizer!r} (projected DP-SGD, last iterate released)"
            if last_iterate
            else f"optimizer={self.optimizer!r} ({describe_optimizer(self.optimizer)})"
        )
        params = self._private_fit(
            X, targets, model, loss.target_dtype, settings, mechanism=mechanism,
            training_facts=facts,
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

    def _check_last_iterate(self, model: LinearModel, l2: float) -> None:
        """Refuse ``accountant='last_iterate'`` when its conditions fail, saying what to change.

        The conditions (Altschuler & Talwar; ``skdp/accounting/_last_iterate.py``): projected
        noisy SGD with a public projection radius, rows of public bounded norm (so that the
        smoothness constant M is public), a constant step size at most 2/M, fixed-size batches
        and the last iterate only.
        """
        what = "accountant='last_iterate' (the last-iterate bound of Altschuler & Talwar)"
        if self.optimizer != "noisy_sgd":
            raise ValueError(
                f"{what} covers optimizer='noisy_sgd' only, got optimizer={self.optimizer!r}; "
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
        if self.max_row_norm is None or not math.isfinite(self.max_row_norm):
            raise ValueError(
                f"{what} needs max_row_norm, a public bound on the L2 norm of the rows of X "
                "(rows above it are scaled down to it): the smoothness of the loss, and so the "
                "largest step size the bound allows, depends on it, and it may not be learned "
                "from the private data. Take it from the public ranges of the features; got "
                f"max_row_norm={self.max_row_norm!r}"
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
