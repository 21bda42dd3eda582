"""The random number of trials of a private search (Papernot & Steinke 2022).

The number of trials ``K`` is drawn from a public distribution, independently of the data, with
a public mean. Its shape sets the cost of selection: for a base mechanism that is
``(lambda, eps_lambda)``-RDP, running it ``K`` times and releasing only the best run is
``(lambda, eps'_lambda)``-RDP with (Theorem 2 of arXiv:2110.03620, truncated negative binomial
``D_{eta, gamma}``, eta >= 0)::

    eps'_lambda = eps_lambda + (1 + eta) * min_mu [(1 - 1/mu) eps_mu + ln(1/gamma) / mu]
                  + ln(E[K]) / (lambda - 1)

and, for ``K ~ Poisson(mu)`` (Theorem 6), ``eps_lambda + mu * delta_hat + ln(mu) / (lambda - 1)``.
``dp_accounting``'s ``RepeatAndSelectDpEvent(event, mean, shape)`` evaluates both.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import dp_accounting
import numpy as np
from dp_accounting.rdp import rdp_privacy_accountant as _rdp

__all__ = ["TrialDistribution", "TRIAL_DISTRIBUTIONS"]

TRIAL_DISTRIBUTIONS = ("logarithmic", "geometric", "negative_binomial", "poisson")


def dp_accounting_internal(name: str):
    """A function of dp_accounting's RDP accountant that is not public API (the tests check
    its results against the public ``RepeatAndSelectDpEvent``), with a clear error should a
    dp-accounting release rename it."""
    try:
        return getattr(_rdp, name)
    except AttributeError as exc:  # pragma: no cover - depends on the installed version
        raise ImportError(
            f"skdp.model_selection needs dp_accounting's rdp_privacy_accountant.{name}, which "
            "the installed dp-accounting does not have (0.4.4 to 0.6.0 have it); install one "
            "of those versions and please report this"
        ) from exc


def _tnb_mean(gamma: float, shape: float) -> float:
    """E[K] of the truncated negative binomial ``D_{shape, gamma}`` (dp_accounting's formula)."""
    return dp_accounting_internal("_truncated_negative_binomial_mean")(gamma, shape)


def _sampling_gamma(shape: float, mean: float) -> float:
    """The ``gamma`` the trials are drawn with, for a mean of at most ``mean``.

    dp_accounting accounts with ``ln(mean)`` and with the ``gamma`` its bisection returns, whose
    distribution has a mean slightly *above* ``mean`` (within 1e-9 relative). We draw from the
    other end of the same bisection: ``E[K] <= mean`` and ``gamma >= `` the accounted gamma, so
    both terms of the theorem for the distribution actually sampled are at most the accounted
    ones (the mean decreases with gamma).
    """
    if shape == 1:
        return 1.0 / mean
    low, high = 0.0, min(1.0, 2.0 * (shape + 1.0) / mean)
    while high > low * (1.0 + 1e-12):
        mid = (low + high) / 2.0
        if _tnb_mean(mid, shape) < mean:
            high = mid
        else:
            low = mid
    return high if _tnb_mean(high, shape) <= mean else low


@dataclass(frozen=True)
class TrialDistribution:
    """The distribution of the number of trials ``K``: a public mean and a shape.

    Parameters
    ----------
    mean : float
        ``E[K]`` (the search's ``n_iter``), > 1.
    shape : float
        ``eta`` of the truncated negative binomial: 0 logarithmic, 1 geometric, ``inf`` Poisson.
    """

    mean: float
    shape: float

    @classmethod
    def make(cls, kind, mean: float, eta: float = 0.5) -> TrialDistribution:
        """From the search's ``n_trials_distribution`` name, ``n_iter`` and ``eta``."""
        shapes = {"logarithmic": 0.0, "geometric": 1.0, "poisson": math.inf}
        if kind == "negative_binomial":
            shape = float(eta)
            if not (math.isfinite(shape) and shape > 0):
                raise ValueError(f"eta must be a positive finite number, got {eta!r}")
        elif kind in shapes:
            shape = shapes[kind]
        else:
            raise ValueError(
                f"n_trials_distribution must be one of {TRIAL_DISTRIBUTIONS}, got {kind!r}"
            )
        mean = float(mean)
        if not (math.isfinite(mean) and mean > 1.0):
            raise ValueError(
                f"the mean number of trials n_iter must be a finite number > 1, got {mean!r} "
                "(a single trial needs no selection: fit the estimator directly)"
            )
        return cls(mean, shape)

    @property
    def is_poisson(self) -> bool:
        return math.isinf(self.shape)

    @property
    def sampling_gamma(self) -> float:
        """``gamma`` of the distribution that :meth:`sample` draws from (not for Poisson)."""
        return _sampling_gamma(self.shape, self.mean)

    def event(self, trial: dp_accounting.DpEvent) -> dp_accounting.DpEvent:
        """The DpEvent of running ``trial`` ``K`` times and releasing only the best."""
        return dp_accounting.dp_event.RepeatAndSelectDpEvent(trial, self.mean, self.shape)

    def sample(self, rng: np.random.Generator) -> int:
        """Draw ``K`` (>= 1, or >= 0 for Poisson) with ``rng`` (public randomness)."""
        if self.is_poisson:
            return int(rng.poisson(self.mean))
        gamma = self.sampling_gamma
        if self.shape == 0:  # logarithmic: P[K=k] = (1-gamma)^k / (k ln(1/gamma))
            return int(rng.logseries(1.0 - gamma))
        # Negative binomial NB(eta, gamma) (failures before eta successes), truncated to K >= 1:
        # P[K=k] proportional to (1-gamma)^k C(k+eta-1, k), as in Definition 1.
        while True:
            k = int(rng.negative_binomial(self.shape, gamma))
            if k >= 1:
                return k

    def pmf(self, k: np.ndarray) -> np.ndarray:
        """``P[K = k]`` of the distribution :meth:`sample` draws from (for tests and docs)."""
        k = np.asarray(k, dtype=np.float64)
        if self.is_poisson:
            from scipy.stats import poisson

            return poisson.pmf(k, self.mean)
        gamma = self.sampling_gamma
        if self.shape == 0:
            with np.errstate(divide="ignore", invalid="ignore"):
                out = (1.0 - gamma) ** k / (k * math.log(1.0 / gamma))
        else:
            from scipy.stats import nbinom

            out = nbinom.pmf(k, self.shape, gamma) / (1.0 - gamma**self.shape)
        return np.where(k >= 1, out, 0.0)

    def describe(self) -> str:
        if self.is_poisson:
            return f"Poisson with mean {self.mean:g}"
        name = {0.0: "logarithmic", 1.0: "geometric"}.get(
            self.shape, f"truncated negative binomial (eta={self.shape:g})"
        )
        return f"{name} with mean {self.mean:g}"
