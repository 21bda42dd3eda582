"""``max_row_norm='auto'`` for an estimator: the hooks of
:class:`skdp._fit.estimator.BaseDPEstimator` that plan the search for a public scale
(:mod:`skdp._scale.public_scale`), run it after the charge and hand the fit its scale."""

from __future__ import annotations

import dataclasses

import numpy as np

from .._engine._device import seed_sequence
from .._utils.validation import PrivacyWarning, warn_user
from .public_scale import (
    ROW_QUANTILE,
    PublicScale,
    centre_noise_multiplier,
    estimate_centre,
    estimate_scale,
    parse_target_bound,
    range_scale,
    scale_noise_multiplier,
    scale_search_feasible,
    search_needs,
)

__all__ = ["ScaleFreeFitMixin"]


class ScaleFreeFitMixin:
    """``max_row_norm='auto'`` for an estimator: the hooks of
    :class:`skdp._fit.estimator.BaseDPEstimator` that plan the scale search, run it after the
    charge and hand the fit its public scale.

    The estimator has ``max_row_norm`` and ``random_state``; ``_scales_targets()`` says whether
    the targets are put on the public scale too (regression). The scale found is left in
    ``self._fit_scale`` until the fit takes it (``_take_fit_scale``) to map its parameters back.
    """

    def _scales_targets(self) -> bool:
        """Whether 'auto' also puts the targets on a public scale (regression; such an
        estimator also has ``target_bound``)."""
        return False

    def _target_range(self) -> tuple[float, float] | None:
        """The public range ``(low, high)`` of the targets given as ``target_bound`` (``None``:
        none, or a classifier), validated; used instead of searching for it, and whatever
        ``max_row_norm`` is."""
        return parse_target_bound(self.target_bound) if self._scales_targets() else None

    def _take_fit_scale(self) -> PublicScale | None:
        """The public scale the current fit trained on (``None``: the data as given), removed
        from the estimator: it is transient fit state, handed from the hooks to the fit."""
        return self.__dict__.pop("_fit_scale", None)

    def _scale_search_outputs(self, n_outputs: int) -> int | None:
        """The number of target columns the scale search looks at (``None``: the row norms
        only; a public range of the targets leaves only the row norms to search)."""
        return n_outputs if self._scales_targets() and self._target_range() is None else None

    def _scale_noise_multiplier(
        self, epsilon: float, delta: float, n_samples: int, n_outputs: int, *,
        warn: bool = True, centre_only: bool = True,
    ) -> float | None:
        """The scale search's noise multiplier (``None``: no search, or an infeasible one,
        which ``warn`` says with what would make it feasible). Where the full search is
        infeasible for a regression, the noise of a search for the targets' median alone
        (``centre_only``; :func:`centre_noise_multiplier`): :meth:`_apply_public_scale` tells
        the two apart by the same public test."""
        if self.max_row_norm != "auto":
            return None
        outputs = self._scale_search_outputs(n_outputs)
        noise = scale_noise_multiplier(epsilon, delta, n_samples, outputs)
        # Without an intercept the targets cannot be centred: the median would be spent for
        # nothing.
        centre_only = centre_only and getattr(self, "fit_intercept", True)
        if noise is None and outputs is not None and centre_only:
            noise = centre_noise_multiplier(epsilon, delta, n_samples, outputs)
            if noise is not None and warn:
                warn_user(
                    f"{type(self).__name__}: with n={n_samples} rows this privacy is too small "
                    "to find a public scale for the features and targets (max_row_norm='auto'; "
                    f"{search_needs(epsilon, delta, n_samples, outputs)}), so the fit finds "
                    "only medians (of the row norms and the targets, or the targets alone), "
                    "centres the "
                    "targets on theirs and trains on them in their own units: unless they are "
                    "on a roughly unit scale, that is little better than predicting the median. "
                    "Put the features on a public, roughly unit scale or pass a public "
                    "max_row_norm, and give the targets' documented range as "
                    "target_bound=(low, high).",
                    PrivacyWarning,
                )
                return noise
        if noise is None and warn:
            # Decided from public n and privacy only, before any data is read.
            what = "features and targets" if outputs is not None else "features"
            advice = (
                "put the features on a public, roughly unit scale or pass a public "
                "max_row_norm, and give the targets' documented range as "
                "target_bound=(low, high): unscaled targets fit badly"
                if outputs is not None
                else "put the features on a public, roughly unit scale, or pass a public "
                "max_row_norm"
            )
            warn_user(
                f"{type(self).__name__}: with n={n_samples} rows this privacy is too small to "
                f"find a public scale for the {what} (max_row_norm='auto'; "
                f"{search_needs(epsilon, delta, n_samples, outputs)}), so the fit trains on "
                f"the data as given: {advice}.",
                PrivacyWarning,
            )
        return noise

    def _apply_public_scale(self, X, targets, noise_multiplier, *, private: bool,
                            rows: bool = True, dtype=np.float64):
        self._fit_scale = None
        target_range = self._target_range()
        if noise_multiplier is None and target_range is None:
            return X, targets, None, []
        if noise_multiplier is None:  # rows as given, targets on their public range
            scale = PublicScale(None, None, None, 0.0, ROW_QUANTILE, private=private)
        else:
            # The search's own stream, independent of the fit's sampling and noise.
            rng = np.random.default_rng(seed_sequence(self.random_state).spawn(4)[3])
            searched = targets if self._scales_targets() and target_range is None else None
            outputs = None if searched is None else searched.shape[1]
            full = noise_multiplier <= 0 or scale_search_feasible(
                noise_multiplier, X.shape[0], outputs)
            if not full:
                # Planned by centre_noise_multiplier: the full search was infeasible.
                scale = estimate_centre(X, searched, noise_multiplier, rng, type(self).__name__)
            else:
                scale = estimate_scale(X, searched, noise_multiplier, rng, type(self).__name__)
        centred = getattr(self, "fit_intercept", True)  # the MLP always has output biases
        if target_range is not None:
            k = targets.shape[1]
            low, high = np.full(k, target_range[0]), np.full(k, target_range[1])
            center, halfwidth = range_scale(low, high, centred=centred)
            scale = dataclasses.replace(scale, target_center=center, target_halfwidth=halfwidth,
                                        public_targets=True)
        elif scale.scales_targets and not centred:
            low = scale.target_center - scale.target_halfwidth
            high = scale.target_center + scale.target_halfwidth
            # Released (or exact, without privacy) ends: reading them is free.
            if private and np.any(np.abs(scale.target_center) > scale.target_halfwidth):
                warn_user(
                    f"{type(self).__name__}: fit_intercept=False, but the targets lie in about "
                    f"[{float(np.min(low)):.4g}, {float(np.max(high)):.4g}] (found by the scale "
                    "search), away from 0: the model must reach them through the features "
                    "alone, which a clipped, noisy fit does badly. Set fit_intercept=True, or "
                    "subtract a public constant from y first.",
                    UserWarning,
                )
            center, halfwidth = range_scale(low, high, centred=False)
            scale = dataclasses.replace(scale, target_center=center, target_halfwidth=halfwidth)
        self._fit_scale = scale
        # rows=False: the fit's mechanism puts the rows on the scale itself (one pass in blocks).
        X = scale.rows(X, dtype) if rows else X
        return X, scale.targets(targets), scale, scale.facts("max_row_norm='auto':")

