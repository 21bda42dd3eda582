"""Scale-free training for the linear models: a public bound on the row norms (and, for
regression, a public centre and half-range of the targets), found by a small DP search charged
to the fit's own privacy.

DP-SGD is not scale-free: the clipping bound, the step size and the intercept's weight are all
measured against the scale of the rows, so defaults tuned on one scaling stop short on another
(Adult with rows of norm ~3 against rows of norm ~0.7). Training on ``x / B``, with ``B`` a public
bound on the row norms and rows above it scaled down to it (a per-row map, free under DP), makes
every fit see rows of norm at most 1, whatever the user's units; the coefficients are mapped
back to the user's units afterwards (post-processing). ``B`` comes from the user
(``max_row_norm=float``, free) or, with ``max_row_norm='auto'``, from a noisy binary search for a
high quantile of the row norms: one Gaussian mechanism (the same two-stage search as
:class:`skdp.preprocessing.DPStandardScaler`'s bounds) composed with the training by the
accountant, so the fit's guarantee covers it.
"""

from __future__ import annotations

import dataclasses
import math
import numbers
import warnings
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from scipy.special import ndtri

from .._defaults.preprocessing import LAST_FEASIBLE_TAIL
from .._defaults.scale import (
    CENTRE_MARGIN,
    ROW_MEDIAN_NORM,
    ROW_QUANTILE,
    SCALE_SHARES,
    TARGET_QUANTILES,
    WIDEN_TO,
)
from .._engine.rows.host import (
    clip_factors_to,
    rescale_rows,
    row_blocks,
    row_norms,
)
from .._engine.rows.host_sparse import canonical_csr
from .._utils.validation import PrivacyWarning, warn_user
from ..preprocessing._base import calibrate_gaussian
from ..preprocessing._bounds import (
    plan_quantiles,
    quartile_rows,
    search_quantiles,
)
from ..preprocessing._mechanisms import (
    QUANTILE_PROBES,
    feasible_quantile_margin,
    quantile_probe_sensitivity,
)

__all__ = [
    "parse_target_bound",
    "range_scale",
    "SCALE_SHARES",
    "ROW_QUANTILE",
    "TARGET_QUANTILES",
    "PublicScale",
    "scale_noise_multiplier",
    "scale_search_needs",
    "search_needs",
    "centre_noise_multiplier",
    "estimate_centre",
    "CENTRE_MARGIN",
    "ROW_MEDIAN_NORM",
    "centre_searches_rows",
    "estimate_scale",
    "widen_range",
    "WIDEN_TO",
]

@dataclass(frozen=True)
class PublicScale:
    """Public scale of a fit: rows clipped to ``row_bound`` and divided by it (``None``: rows as
    given); targets centred on ``target_center`` and divided by ``target_halfwidth`` (per
    output), then clipped to [-1, 1].

    ``noise_multiplier`` is that of the search that found them (0 for a non-private fit, or when
    nothing was searched), at ``row_quantile`` of the row norms; ``widened_to``: the quantile the
    ranges were widened to (:data:`WIDEN_TO`; ``None``: as located). ``private``: whether the fit is
    private (then rows and targets are clipped to the scale). ``public_targets``: the targets'
    range was given by the user (``target_bound``), not searched. Everything here is released
    (a DP output) or public.
    """

    row_bound: float | None
    target_center: np.ndarray | None
    target_halfwidth: np.ndarray | None
    noise_multiplier: float
    row_quantile: float
    private: bool
    public_targets: bool = False
    widened_to: float | None = None
    centre_only: bool = False
    #: Rows divided by this, not clipped (with ``row_bound=None``): the median search's scale,
    #: which puts the typical row at the norm the rule for rows as given assumes.
    row_divisor: float | None = None

    @property
    def row_scale(self) -> float | None:
        """What rows are divided by: ``row_bound`` (clipped to it under privacy) or
        ``row_divisor`` (never clipped); ``None``: rows as given."""
        return self.row_bound if self.row_bound is not None else self.row_divisor

    @property
    def scales_targets(self) -> bool:
        return self.target_center is not None

    @property
    def clips(self) -> bool:
        """Whether rows and targets are clipped to the scale: only under privacy. Without it
        nothing is clipped (a non-private fit reproduces the ordinary optimiser), and the scale
        only sets the units: clipping the 2% tails cost up to 0.016 R^2 against scikit-learn."""
        return self.private

    def rows(self, X, dtype=np.float64):
        """``X`` with rows clipped to ``row_bound`` (under privacy) and divided by
        :attr:`row_scale` (a new array); ``X`` itself when the rows keep their scale.

        Dense rows are computed in float64 a block at a time and stored in ``dtype``: a fit
        that trains in float32 gets its one float32 working copy, with no float64 copy of X.
        """
        scale = self.row_scale
        if scale is None:
            return X
        if not sp.issparse(X) and np.dtype(dtype) != np.float64:
            out = np.empty(np.shape(X), dtype=dtype)
            clips = self.row_bound is not None and self.clips
            for start, block in row_blocks(X):
                if clips:  # as rescale_rows: rows above the bound scaled down to it
                    block *= clip_factors_to(np.linalg.norm(block, axis=1), self.row_bound)[:, None]
                block /= scale
                out[start:start + block.shape[0]] = block
            return out
        if self.row_bound is not None and self.clips:
            X = rescale_rows(X, self.row_bound)
        elif sp.issparse(X):
            X = canonical_csr(X, np.float64).copy()
        else:
            X = np.array(X, dtype=np.float64)  # a copy, as rescale_rows returns
        if sp.issparse(X):
            X.data /= scale
            return X
        X /= scale
        return X

    def row_factors(self, norms: np.ndarray) -> np.ndarray:
        """The per-row factors :meth:`rows` multiplies rows of these norms by (clipped to
        ``row_bound`` under privacy, divided by :attr:`row_scale`): what a one-pass statistic
        applies block by block instead of copying ``X``."""
        scale = self.row_scale
        if scale is None:
            return np.ones_like(norms)
        if self.row_bound is not None and self.clips:
            return clip_factors_to(norms, self.row_bound) / scale
        return np.full_like(norms, 1.0 / scale)

    def targets(self, targets: np.ndarray) -> np.ndarray:
        """Targets on the training scale (clipped to [-1, 1] under privacy); unchanged if not
        scaled."""
        if not self.scales_targets:
            return targets
        scaled = (targets - self.target_center) / self.target_halfwidth
        # Centred only, the targets keep their units: there is no [-1, 1] to clip them to.
        return np.clip(scaled, -1.0, 1.0) if self.clips and not self.centre_only else scaled

    def to_user_units(
        self, coef: np.ndarray, intercept: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        """Coefficients ``(n_outputs, n_features)`` and intercepts fitted on this scale, in the
        user's units (post-processing)."""
        if self.row_scale is not None:
            coef = coef / self.row_scale
        if self.scales_targets:
            coef = coef * self.target_halfwidth[:, None]
            intercept = intercept * self.target_halfwidth + self.target_center
        return coef, intercept

    def facts(self, owner: str) -> list[str]:
        """Lines for the privacy report."""
        if self.centre_only:
            what = "the median of y" if self.row_divisor is None else (
                "the medians of the row norms of X and of y")
            rows = "rows as given" if self.row_divisor is None else (
                f"rows divided by {self.row_divisor:.4g} (the row norms' median over "
                f"{ROW_MEDIAN_NORM:g}: a typical row then has norm {ROW_MEDIAN_NORM:g}, the scale "
                "the step rule for rows as given assumes)")
            return [
                f"{owner} found no public scale at this n and privacy, only {what}: found by a "
                "noisy binary search (one Gaussian mechanism, noise multiplier "
                f"{self.noise_multiplier:.4g}, composed with the training in this fit's "
                "guarantee); targets were centred on their median (per row, free) and trained "
                f"on in their own units, {rows} (coefficients are reported in the original "
                "units)"
            ]
        lines = []
        if self.public_targets:
            low = self.target_center - self.target_halfwidth
            high = self.target_center + self.target_halfwidth
            clipped = " and clipped to it" if self.clips else ""
            lines.append(
                f"targets centred on the public range [{float(low[0]):.6g}, "
                f"{float(high[0]):.6g}] (target_bound) and divided by its half-width{clipped} "
                "(per row, free)"
            )
            if self.row_bound is None:
                return lines
        what = f"the {self.row_quantile:.3g}-quantile of the row norms of X"
        searched_targets = self.scales_targets and not self.public_targets
        if searched_targets:
            what += f" and the {TARGET_QUANTILES[0]:g}/{TARGET_QUANTILES[1]:g}-quantiles of y"
        widened = ""
        if self.widened_to is not None:
            low_q = 1.0 - self.row_quantile
            what = (f"the {low_q:.3g}/{self.row_quantile:.3g}-quantiles of the row norms"
                    + (" and of y" if searched_targets else "")
                    + " (the furthest out this noise can locate)")
            widened = (f", each range then widened to where a normal shape through it has its "
                       f"{self.widened_to:g}/{1 - self.widened_to:g}-quantiles "
                       "(post-processing)")
        how = (
            "computed exactly (non-private fit)"
            if self.noise_multiplier == 0
            else "found by a noisy binary search (one Gaussian mechanism, noise multiplier "
            f"{self.noise_multiplier:.4g}, composed with the training in this fit's guarantee)"
        ) + widened
        if self.clips:
            line = (
                f"{owner} trained on a public scale: {what}, {how}; rows of X were scaled down "
                f"to norm {self.row_bound:.4g} and divided by it"
            )
            if searched_targets:
                line += ", targets centred, divided by their half-range and clipped to [-1, 1]"
        else:
            line = (
                f"{owner} trained on a scale: {what}, {how}; rows of X were divided by "
                f"{self.row_bound:.4g}"
            )
            if searched_targets:
                line += ", targets centred and divided by their half-range"
            line += " (nothing clipped)"
        return [*lines, line + " (coefficients are reported in the original units)"]


def search_columns(n_outputs: int | None) -> tuple[int, tuple[float, ...]]:
    """``(columns, quantiles)`` of the search: the row norms alone (one quantile), or the row
    norms and every target (the two target quantiles for all of them)."""
    if n_outputs is None:
        return 1, (ROW_QUANTILE,)
    return 1 + n_outputs, TARGET_QUANTILES


def _search_margin(
    noise_multiplier: float, n_samples: int, columns: int, quantiles: tuple[float, ...]
) -> float:
    """The tail quantile a search of ``quantiles`` in ``columns`` columns locates at this noise
    (:func:`feasible_quantile_margin` of the per-count noise :func:`plan_quantiles` gives)."""
    sigma = (quantile_probe_sensitivity(columns, quantiles) * noise_multiplier
             * math.sqrt(QUANTILE_PROBES))
    return feasible_quantile_margin(sigma, n_samples)


def scale_search_feasible(noise_multiplier: float, n_samples: int, n_outputs: int | None) -> bool:
    columns, quantiles = search_columns(n_outputs)
    return _search_margin(noise_multiplier, n_samples, columns, quantiles) <= LAST_FEASIBLE_TAIL


def _smallest_share_noise(
    epsilon: float, delta: float, feasible: Callable[[float], bool]
) -> float | None:
    """The noise of the smallest share of ``SCALE_SHARES`` (of the Gaussian-DP ``mu^2`` of an
    ``(epsilon, delta)`` Gaussian mechanism) at which ``feasible`` holds; ``None`` if none."""
    whole = calibrate_gaussian(epsilon, delta).noise_multiplier
    for share in SCALE_SHARES:
        noise = whole / math.sqrt(share)
        if feasible(noise):
            return noise
    return None


def scale_noise_multiplier(
    epsilon: float, delta: float, n_samples: int, n_outputs: int | None
) -> float | None:
    """Noise multiplier of the scale search, from public quantities only: the smallest share of
    ``SCALE_SHARES`` of the Gaussian-DP ``mu^2`` of an ``(epsilon, delta)`` Gaussian mechanism
    at which the search can locate at least the quartiles; ``None`` when no share can (the
    search would return noise); 0 without privacy (exact quantiles)."""
    if math.isinf(epsilon):
        return 0.0
    return _smallest_share_noise(
        epsilon, delta, lambda noise: scale_search_feasible(noise, n_samples, n_outputs)
    )


def scale_search_needs(
    epsilon: float, delta: float, n_samples: int, n_outputs: int | None
) -> tuple[int, float]:
    """``(rows, epsilon)`` the scale search needs where :func:`scale_noise_multiplier` finds it
    infeasible: the fewest rows at this ``epsilon``, and the smallest epsilon with these
    ``n_samples`` rows (to two significant digits, rounded up). Public quantities only: what a
    warning can tell the user to change."""
    noise = calibrate_gaussian(epsilon, delta).noise_multiplier / math.sqrt(max(SCALE_SHARES))
    columns, quantiles = search_columns(n_outputs)
    rows = quartile_rows(_search_margin(noise, n_samples, columns, quantiles), n_samples)
    low, high = epsilon, max(2.0 * epsilon, 1.0)
    while scale_noise_multiplier(high, delta, n_samples, n_outputs) is None and high < 1e4:
        low, high = high, 2.0 * high
    for _ in range(30):  # bisection on a monotone, public feasibility test
        middle = math.sqrt(low * high)
        if scale_noise_multiplier(middle, delta, n_samples, n_outputs) is None:
            low = middle
        else:
            high = middle
    digits = 1 - math.floor(math.log10(high))
    return rows, math.ceil(high * 10**digits) / 10**digits


def search_needs(epsilon: float, delta: float, n_samples: int, n_outputs: int | None) -> str:
    """:func:`scale_search_needs` in words, for warnings and errors."""
    rows, least = scale_search_needs(epsilon, delta, n_samples, n_outputs)
    return (f"the search needs about {rows} rows at epsilon={epsilon:g}, or epsilon >= "
            f"{least:g} with {n_samples} rows")


def _centre_feasible(noise_multiplier: float, n_samples: int, columns: int) -> bool:
    return _search_margin(noise_multiplier, n_samples, columns, (0.5,)) <= CENTRE_MARGIN


def centre_noise_multiplier(
    epsilon: float, delta: float, n_samples: int, n_outputs: int
) -> float | None:
    """Noise multiplier of a search for medians, for fits where :func:`scale_noise_multiplier`
    finds no feasible search: the smallest share of ``SCALE_SHARES`` at which the medians of the
    row norms and of every target are located within :data:`CENTRE_MARGIN`, else the smallest
    at which the targets' alone are (:func:`centre_searches_rows` tells the two apart);
    ``None`` when neither is. Public quantities only."""
    for columns in (n_outputs + 1, n_outputs):
        noise = _smallest_share_noise(
            epsilon, delta, lambda z, c=columns: _centre_feasible(z, n_samples, c)
        )
        if noise is not None:
            return noise
    return None


def centre_searches_rows(noise_multiplier: float, n_samples: int, n_outputs: int) -> bool:
    """Whether the median search planned at this noise includes the row norms (the same public
    test as :func:`centre_noise_multiplier`'s)."""
    return _centre_feasible(noise_multiplier, n_samples, n_outputs + 1)


def estimate_centre(
    X, targets: np.ndarray, noise_multiplier: float, rng: np.random.Generator, owner: str
) -> PublicScale:
    """The targets' medians by one noisy binary search (planned by
    :func:`centre_noise_multiplier`), with the row norms' median where the plan includes it: a
    scale that centres the targets (units kept) and, with the row norms, divides rows by their
    median over ``ROW_MEDIAN_NORM``."""
    targets = np.asarray(targets, dtype=np.float64)
    n_samples, n_outputs = targets.shape
    with_rows = centre_searches_rows(noise_multiplier, n_samples, n_outputs)
    values = np.column_stack([row_norms(X), targets]) if with_rows else targets
    plan = plan_quantiles((0.5,), n_samples, values.shape[1], noise_multiplier, owner)
    low, high = search_quantiles(values, plan, rng)
    medians = (low[:, 0] + high[:, 0]) / 2.0
    divisor = None
    if with_rows:
        divisor, medians = float(medians[0]) / ROW_MEDIAN_NORM, medians[1:]
        if not (divisor > 0 and math.isfinite(divisor)):
            divisor = None  # (nearly) all rows are zero: keep them as given
    return PublicScale(None, medians, np.ones_like(medians), float(noise_multiplier), 0.5,
                       private=True, centre_only=True, row_divisor=divisor)


def estimate_scale(
    X,
    targets: np.ndarray | None,
    noise_multiplier: float,
    rng: np.random.Generator,
    owner: str,
) -> PublicScale:
    """Find a public scale by one noisy quantile search with ``noise_multiplier`` (the whole
    search's, all probes together), planned by :func:`scale_noise_multiplier`.

    The search runs on the columns ``[||x_i||, y_i1, ..., y_ik]``; adding or removing a row
    moves each column's signed count by at most 1, which the probe sensitivity accounts for.
    Quantiles the search cannot locate at this noise are moved inward, which keeps the bound
    tight but clips more rows. Without privacy (``noise_multiplier=0``) the same quantiles are
    computed exactly.
    """
    norms = row_norms(X)
    target_columns = None if targets is None else np.asarray(targets, dtype=np.float64)
    columns, quantiles = search_columns(None if targets is None else target_columns.shape[1])
    if noise_multiplier == 0:  # the same quantiles, exactly
        row_bound = float(np.quantile(norms, max(quantiles))) if norms.size else 1.0
        lower = upper = None
        if target_columns is not None:
            lower = np.quantile(target_columns, quantiles[0], axis=0)
            upper = np.quantile(target_columns, quantiles[-1], axis=0)
        return _scale(row_bound, lower, upper, 0.0, max(quantiles))
    values = np.column_stack([norms] if targets is None else [norms, target_columns])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", PrivacyWarning)
        plan = plan_quantiles(quantiles, X.shape[0], columns, noise_multiplier, owner)
    if caught:  # pragma: no cover - scale_noise_multiplier plans only feasible searches
        warn_user(
            f"{owner}: max_row_norm='auto' could only locate the quartiles of the row norms, "
            "so the public scale is rough; pass a public max_row_norm.",
            PrivacyWarning,
        )
    low, high = search_quantiles(values, plan, rng)
    lower_ends, upper_ends = low[:, 0], high[:, -1]
    located = min(plan.quantiles)
    widened = len(plan.quantiles) == 2 and located > WIDEN_TO
    if widened:
        lower_ends, upper_ends = widen_range(lower_ends, upper_ends, located, WIDEN_TO)
    lower = upper = None
    if targets is not None:
        lower, upper = lower_ends[1:], upper_ends[1:]
    scale = _scale(float(upper_ends[0]), lower, upper, float(noise_multiplier),
                   float(max(plan.quantiles)))
    return dataclasses.replace(scale, widened_to=WIDEN_TO) if widened else scale


def widen_range(
    lower: np.ndarray, upper: np.ndarray, located: float, wanted: float
) -> tuple[np.ndarray, np.ndarray]:
    """``[lower, upper]``, found at the quantiles ``(located, 1 - located)``, widened about its
    centre to where a normal distribution with those two quantiles has ``(wanted, 1 -
    wanted)``: half-width times ``Phi^-1(1 - wanted) / Phi^-1(1 - located)``. Never narrowed
    (``located <= wanted`` returns the range as given); a public function of released values."""
    lower, upper = np.asarray(lower, dtype=np.float64), np.asarray(upper, dtype=np.float64)
    if located <= wanted:
        return lower, upper
    ratio = float(ndtri(1.0 - wanted) / ndtri(1.0 - located))
    # A noisy search can return crossed ends: then nothing is widened beyond their centre.
    centre, half = (lower + upper) / 2.0, np.maximum((upper - lower) / 2.0, 0.0)
    return centre - ratio * half, centre + ratio * half


def _scale(row_bound, lower, upper, noise_multiplier, quantile) -> PublicScale:
    if not (row_bound > 0 and math.isfinite(row_bound)):
        row_bound = 1.0  # every row is (nearly) zero: any bound is as good
    center = halfwidth = None
    if lower is not None:
        center, halfwidth = range_scale(lower, upper, centred=True)
    # A search with noise is a private fit's; noise 0 means exact quantiles, no privacy.
    return PublicScale(row_bound, center, halfwidth, noise_multiplier, quantile,
                       private=noise_multiplier > 0)


def range_scale(low, high, *, centred: bool) -> tuple[np.ndarray, np.ndarray]:
    """``(centre, half-width)`` that map ``[low, high]`` into [-1, 1] (elementwise).

    ``centred=False`` (a model without an intercept, which must not receive the centre as one):
    centre 0 and the larger end of the range. A zero half-width (a constant target) is 1: any
    unit will do.
    """
    low, high = np.asarray(low, dtype=np.float64), np.asarray(high, dtype=np.float64)
    if centred:
        center, halfwidth = (low + high) / 2.0, (high - low) / 2.0
    else:
        center, halfwidth = np.zeros_like(low), np.maximum(np.abs(low), np.abs(high))
    return center, np.where(halfwidth > 0, halfwidth, 1.0)


def parse_target_bound(bound) -> tuple[float, float] | None:
    """A regressor's ``target_bound`` as a public range ``(low, high)``: ``B`` is ``(-B, B)``;
    ``None`` stays ``None``. Refuses anything but a positive number or an increasing pair of
    finite numbers."""
    if bound is None:
        return None
    if isinstance(bound, numbers.Real) and not isinstance(bound, bool):
        if bound > 0 and math.isfinite(bound):
            return -float(bound), float(bound)
    else:
        values = np.asarray(bound, dtype=object).ravel()
        if values.size == 2 and all(
            isinstance(v, numbers.Real) and not isinstance(v, bool) and math.isfinite(v)
            for v in values
        ) and values[0] < values[1]:
            return float(values[0]), float(values[1])
    raise ValueError(
        "target_bound must be a positive number B_y (the range [-B_y, B_y]) or a pair "
        f"(low, high) of finite numbers with low < high, got {bound!r}"
    )
