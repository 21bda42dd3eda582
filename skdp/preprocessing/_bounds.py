"""Private column bounds (and other quantiles) by noisy binary search, planned from public
inputs: which quantiles can be located at this noise, and the noise of every probe."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from .._defaults.preprocessing import LAST_FEASIBLE_TAIL
from .._utils.validation import PrivacyWarning, warn_user
from ._mechanisms import (
    QUANTILE_PROBES,
    feasible_quantile_margin,
    noisy_quantile_search,
    quantile_probe_sensitivity,
)

__all__ = ["QuantilePlan", "plan_quantiles", "search_bounds", "search_quantiles"]



@dataclass(frozen=True)
class QuantilePlan:
    """The quantiles a search will look for and the noise of each of its signed counts."""

    quantiles: tuple[float, ...]
    sigma: float
    relaxed: bool


def quartile_rows(margin: float, n_samples: int) -> int:
    """The rows at which a search whose margin is ``margin`` with ``n_samples`` rows locates the
    quartiles (the margin scales as ``1 / n``)."""
    return math.ceil(n_samples * margin / LAST_FEASIBLE_TAIL)


def plan_quantiles(
    quantiles: Sequence[float],
    n_samples: int,
    n_features: int,
    noise_multiplier: float,
    owner: str,
) -> QuantilePlan:
    """Plan a search for ``quantiles`` of every column with the given noise multiplier (that of
    the whole search, all probes together), from public quantities only.

    Tail quantiles below the search's resolution at this noise are moved inward
    (:func:`feasible_quantile_margin`). When even the quartiles are out of reach, a
    :class:`~skdp.PrivacyWarning` says so and the quartiles are used: the bounds are then
    rough, but measured pipelines stay useful (``docs/benchmarks/pipeline.md``, Ames), where
    refusing would leave nothing.
    """
    sensitivity = quantile_probe_sensitivity(n_features, quantiles)
    sigma = sensitivity * noise_multiplier * math.sqrt(QUANTILE_PROBES)
    margin = feasible_quantile_margin(sigma, n_samples) if sigma > 0 else 0.0
    moved = []
    for q in quantiles:
        if q < 0.5:
            moved.append(max(q, min(margin, LAST_FEASIBLE_TAIL)))
        elif q > 0.5:
            moved.append(min(q, max(1.0 - margin, 1.0 - LAST_FEASIBLE_TAIL)))
        else:
            moved.append(q)
    if margin > LAST_FEASIBLE_TAIL and any(q != 0.5 for q in quantiles):
        rows = quartile_rows(margin, n_samples)
        if margin < 0.5:
            what = (f"cannot locate quantiles closer to the tails than the {margin:.2g}-quantile "
                    "(the quartiles are used instead, so the bounds are rough)")
        else:
            what = ("cannot locate any quantile reliably, not even the median: the bounds it "
                    "returns are mostly noise")
        message = (
            f"{owner}: with n={n_samples} rows, {n_features} columns and this privacy, the "
            f"private search for bounds {what}; noise {sigma:.3g} per count, the quartiles "
            f"need about {rows} rows. Give public bounds=(lower, upper) from the data's "
            "documentation, fewer columns, or more privacy budget."
        )
        warn_user(message, PrivacyWarning)
    relaxed = tuple(moved) != tuple(float(q) for q in quantiles)
    return QuantilePlan(tuple(moved), sigma, relaxed)


def search_bounds(
    X: np.ndarray, plan: QuantilePlan, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    """``(lower, upper)`` of shape (n_features,): from below the lowest quantile to above the
    highest. The searches of different quantiles are noisy and may cross near their limit;
    taking the outermost ends (spec §3.3's bracket) keeps ``lower <= upper``."""
    low, high = search_quantiles(X, plan, rng)
    return low.min(axis=1), high.max(axis=1)


def search_quantiles(
    X: np.ndarray, plan: QuantilePlan, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    """``(lower, upper)`` of shape (n_features, n_quantiles): each quantile lies in
    ``(lower, upper]`` of its column with high probability."""
    result = noisy_quantile_search(X, plan.quantiles, plan.sigma, rng)
    return result.lower, result.upper
