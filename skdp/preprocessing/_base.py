"""The fit flow every DP transformer shares: plan, calibrate, charge, release, record.

A DP transformer declares, from its parameters alone, which statistics it releases and what
share of its budget each gets (:meth:`BaseDPTransformer._release_weights`), and whether it
uses partition selection (an extra delta). Fitted on its own with ``privacy=(epsilon,
delta)``, it calibrates one Gaussian mechanism for its whole release, charges its budget and
only then reads the data. Inside :class:`skdp.pipeline.PrivatePipeline` the pipeline has
already planned and charged everything, and hands the step its noise (``skdp/_fit/allocation.py``).
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import dp_accounting
import numpy as np
from dp_accounting.gaussian_mechanism import get_epsilon_gaussian, get_sigma_gaussian
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.utils.validation import check_is_fitted

from .._defaults.preprocessing import PARTITION_SELECTION_DELTA_SHARE
from .._engine._device import seed_sequence
from .._fit.allocation import AllocatedMixin, StepAllocation, take_allocation
from .._fit.charging import charge_budget, resolve_budget
from .._utils.html import PrivacyReprMixin
from .._utils.validation import check_privacy, warn_if_delta_large
from ..accounting import Calibration, PrivacyPlan, Sampling
from ..accounting._accountants import pld_intervals
from ..budget._records import events_delta, with_extra_delta

__all__ = [
    "BaseDPTransformer",
    "Release",
    "calibrate_gaussian",
    "make_rng",
]



@functools.lru_cache(maxsize=256)
def calibrate_gaussian(epsilon: float, delta: float) -> Calibration:
    """The noise multiplier of one Gaussian mechanism that is (epsilon, delta)-DP.

    The analytic Gaussian mechanism (Balle & Wang 2018, ``dp_accounting.gaussian_mechanism``)
    is exact for one Gaussian and takes milliseconds, where a PLD calibration takes tenths of a
    second. The reported epsilon adds the margin of the fine PLD discretisation the estimators
    use (``epsilon / 10^4``): dp_accounting's PLD rounds privacy losses up by at most one
    interval, so re-accounting ``dp_event_`` with a PLD at least that fine never gives more
    than the reported epsilon, which never exceeds the target.
    """
    margin = pld_intervals(epsilon)[1]
    z = get_sigma_gaussian(epsilon - margin, delta) * (1.0 + 1e-9)  # brentq lands either side
    spent = float(get_epsilon_gaussian(z, delta)) + margin
    if spent > epsilon:  # pragma: no cover - the margins above make this impossible
        raise RuntimeError(f"Gaussian calibration overshot: {spent} > {epsilon}")
    plan = PrivacyPlan.constant(1, 1.0, Sampling.FULL_BATCH)
    return Calibration(plan, float(z), spent, delta, "analytic", margin)


@functools.lru_cache(maxsize=256)
def _gaussian_epsilon(noise_multiplier: float, delta: float) -> float:
    """Epsilon of one Gaussian mechanism at ``delta``, with :func:`calibrate_gaussian`'s margin."""
    exact = float(get_epsilon_gaussian(noise_multiplier, delta))
    return exact + pld_intervals(exact)[1]


def make_rng(random_state) -> np.random.Generator:
    """A numpy generator for the noise, seeded as the estimators' streams are
    (:func:`skdp._engine._device.seed_sequence`)."""
    return np.random.default_rng(seed_sequence(random_state))


@dataclass(frozen=True)
class Release:
    """The noise a step releases its statistics with.

    ``noise_multiplier`` is that of the step's whole release, one Gaussian mechanism (0: no
    noise, ``privacy=(inf, 0)``); statistic ``name`` gets the share ``weights[name]`` of its
    ``mu^2 = 1 / noise_multiplier^2`` (Gaussian DP: shares of ``mu^2`` compose back to the whole).
    ``extra_delta`` is the (0, p) part partition selection may use.
    """

    noise_multiplier: float
    weights: dict
    extra_delta: float = 0.0

    @property
    def is_private(self) -> bool:
        return self.noise_multiplier > 0.0

    def noise_multiplier_of(self, name: str) -> float:
        """Noise multiplier of statistic ``name`` (its sensitivity times this is its noise)."""
        if not self.is_private:
            return 0.0
        share = self.weights[name] / sum(self.weights.values())
        return self.noise_multiplier / math.sqrt(share)


class BaseDPTransformer(PrivacyReprMixin, AllocatedMixin, TransformerMixin, BaseEstimator):
    """Base class of skdp's DP transformers. Subclasses implement the hooks below."""

    # --- hooks ------------------------------------------------------------------------------
    def _release_weights(self) -> dict:
        """``{statistic: share}`` of the budget, from parameters only; empty when the step
        learns nothing from the data (public parameters)."""
        raise NotImplementedError

    def _uses_partition_selection(self) -> bool:
        return False

    def _fit_release(self, X, release: Release, rng: np.random.Generator) -> list[str]:
        """Compute and store the released statistics; return report lines."""
        raise NotImplementedError

    def _validate_fit_input(self, X):
        raise NotImplementedError

    # --- the shared flow --------------------------------------------------------------------
    def _private_fit(self, X) -> None:
        allocation = take_allocation(self)
        X = self._validate_fit_input(X)
        n_samples, n_features = X.shape
        weights = self._release_weights()
        uses_selection = self._uses_partition_selection()
        if allocation is not None:
            if not isinstance(allocation, StepAllocation):
                raise RuntimeError("a DP transformer was given a model's allocation (bug)")
            release = Release(
                allocation.noise_multiplier if weights else 0.0,
                weights,
                allocation.extra_delta if uses_selection else 0.0,
            )
            spent_epsilon = self._own_epsilon(release, allocation.delta)
            delta = allocation.delta if release.is_private else 0.0
        else:
            release, spent_epsilon, delta = self._standalone_release(
                n_samples, n_features, weights, uses_selection
            )
        # The pipeline checks after its fit that each step used the share made for its path.
        self._pipeline_path = allocation.path if allocation is not None else None
        rng = make_rng(self.random_state)
        lines = self._fit_release(X, release, rng)
        self.noise_multiplier_ = release.noise_multiplier
        self.extra_delta_ = release.extra_delta
        self.dp_event_ = self._event(release)
        self.privacy_spent_ = (spent_epsilon, delta)
        self._report_lines = lines
        self._n_samples_public = n_samples

    def _standalone_release(self, n_samples, n_features, weights, uses_selection):
        """Calibrate and charge a fit on its own: ``(release, epsilon, delta)``."""
        if not weights:  # nothing is learned from the data
            return Release(0.0, {}), 0.0, 0.0
        epsilon, delta = check_privacy(self.privacy)
        if math.isinf(epsilon):
            release = Release(0.0, weights)
            self._charge(release, is_private=False)
            return release, math.inf, 0.0
        warn_if_delta_large(delta, n_samples)
        extra = PARTITION_SELECTION_DELTA_SHARE * delta if uses_selection else 0.0
        calibration = calibrate_gaussian(epsilon, events_delta(delta, extra, 0.0))
        release = Release(calibration.noise_multiplier, weights, extra)
        self._charge(release, is_private=True)
        return release, calibration.epsilon, delta

    def _charge(self, release: Release, is_private: bool) -> None:
        budget = resolve_budget(self.budget)
        if budget is None:
            return
        params = {k: v for k, v in self.get_params(deep=False).items() if k != "budget"}
        charge_budget(
            budget,
            self._spend(release),
            owner=type(self).__name__,
            params=params,
            mechanism=self._mechanism_name(),
            is_private=is_private,
        )

    def _mechanism_name(self) -> str:
        return f"{type(self).__name__}: Gaussian mechanisms ({', '.join(self._release_weights())})"

    @staticmethod
    def _event(release: Release) -> dp_accounting.DpEvent:
        if not release.weights:
            return dp_accounting.NoOpDpEvent()
        if not release.is_private:
            return dp_accounting.NonPrivateDpEvent()
        return dp_accounting.GaussianDpEvent(release.noise_multiplier)

    def _spend(self, release: Release):
        return with_extra_delta(self._event(release), release.extra_delta)

    @staticmethod
    def _own_epsilon(release: Release, delta: float) -> float:
        """The step's own epsilon at ``delta`` (its extra delta taken off first)."""
        if not release.weights:
            return 0.0
        if not release.is_private:
            return math.inf
        net = events_delta(delta, release.extra_delta, 0.0)
        return _gaussian_epsilon(release.noise_multiplier, net)

    # --- reporting --------------------------------------------------------------------------
    def privacy_report(self) -> str:
        """What this fit learned from the data and how it was protected.

        Returns
        -------
        report : str
            The guarantee, the mechanisms and their noise, and what was treated as public.
        """
        check_is_fitted(self, "privacy_spent_")
        epsilon, delta = self.privacy_spent_
        if self._pipeline_path is None:
            lines = [f"{type(self).__name__}, fitted on its own"]
        else:
            lines = [f"{type(self).__name__}, a step of a private pipeline "
                     f"({self._pipeline_path!r}): its share of the pipeline's budget"]
        if isinstance(self.dp_event_, dp_accounting.NoOpDpEvent):
            lines.append("  guarantee: nothing was learned from the data (public parameters only)")
        elif not math.isfinite(epsilon):
            lines.append(
                "  guarantee: NONE. privacy=(inf, 0) computes exact statistics; they may reveal "
                "anything about any row."
            )
        else:
            extra = (
                f"; of delta, {self.extra_delta_:.3g} is partition selection's (0, p) part"
                if self.extra_delta_ > 0
                else ""
            )
            lines.append(
                f"  guarantee: ({epsilon:.4g}, {delta:.3g})-differential privacy{extra}"
            )
            lines.append(
                "  unit of privacy: one row; neighbouring datasets: add or remove one row; "
                f"one Gaussian mechanism of noise multiplier {self.noise_multiplier_:.4g} "
                "in all (dp_event_)"
            )
        lines += [f"  {line}" for line in self._report_lines]
        lines.append(
            f"  treated as public: the number of rows (n={self._n_samples_public}), the columns "
            "and their types, and every parameter"
        )
        return "\n".join(lines)
