"""The DP mechanisms of private preprocessing: every statistic a DP transformer releases.

Each function takes the private values and a noise scale fixed in advance from public inputs,
and returns only noisy (released) values. They are Gaussian mechanisms with the L2
sensitivities below, under add/remove-one-row neighbouring (``docs/specs/dp_preprocessing.md``
§1-§4), so any number of them composes exactly into one Gaussian mechanism (Gaussian DP:
``mu^2`` adds up). Partition selection (:func:`thresholded_key_counts`) adds a (0, p) part
that the callers carry as an extra delta.

Sensitivities (one row added or removed; one row touches every column):

* :func:`noisy_moment_sums`, per column the normalised ``u = (clip(x) - c) / r`` in [-1, 1],
  ``v = 2 u^2 - 1`` in [-1, 1] and the observed indicator ``o`` in {0, 1}: at most
  ``sqrt(3 d)`` over ``d`` columns (:func:`moment_sensitivity`).
* :func:`noisy_quantile_search`, per probe the signed counts ``#{x <= g} - q #{observed}``
  of every column and quantile, each moving by at most 1 (:func:`quantile_probe_sensitivity`);
  the search makes :data:`QUANTILE_PROBES` probes.
* :func:`thresholded_key_counts` and :func:`public_key_counts`, one key per row and column:
  ``sqrt(m)`` over ``m`` columns.

Sums are accumulated in float64 from terms clipped to their ranges after every rounding step,
so rounding can never push a row's contribution past its bound. The noise is numpy's float64
Gaussian; like the estimators' noise it is not hardened against floating-point attacks on the
sampler (a documented limitation).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy.special import ndtri

__all__ = [
    "MISSING",
    "QUANTILE_PROBES",
    "MomentSums",
    "QuantileSearch",
    "KeyColumn",
    "column_keys",
    "gaussian_noise",
    "moment_sensitivity",
    "noisy_moment_sums",
    "noisy_quantile_search",
    "partition_threshold",
    "public_key_counts",
    "quantile_probe_sensitivity",
    "quantile_search_grid",
    "thresholded_key_counts",
]


def gaussian_noise(rng: np.random.Generator, sigma: float, shape) -> np.ndarray:
    """``N(0, sigma^2)`` noise of ``shape`` (zeros when ``sigma == 0``: no privacy)."""
    if sigma == 0.0:
        return np.zeros(shape)
    return rng.normal(0.0, sigma, size=shape)


# --- moments ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class MomentSums:
    """Released noisy sums per column: ``first`` (of u), ``second`` (of v = 2u^2 - 1, or None)
    and ``count`` (of the observed indicator)."""

    first: np.ndarray
    second: np.ndarray | None
    count: np.ndarray


def moment_sensitivity(n_columns: int, with_second: bool) -> float:
    """L2 sensitivity of the stacked ``(u, [v,] o)`` sums of ``n_columns`` columns."""
    return math.sqrt((3 if with_second else 2) * n_columns)


def normalised_values(
    X: np.ndarray, lower: np.ndarray, upper: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """``(u, observed)``: ``u = (clip(x) - c) / r`` in [-1, 1] (0 where missing or ``r = 0``)
    and the mask of observed (non-NaN) values.

    NaN is masked *before* clipping (``np.clip`` keeps NaN); infinities clip to the bounds.
    """
    observed = ~np.isnan(X)
    centre = (lower + upper) / 2.0
    radius = (upper - lower) / 2.0
    safe_radius = np.where(radius > 0, radius, 1.0)
    clipped = np.clip(np.where(observed, X, centre), lower, upper)
    u = np.where(radius > 0, (clipped - centre) / safe_radius, 0.0)
    # (b - c) / r can round to a hair above 1: clip again so the bound is exact.
    return np.clip(u, -1.0, 1.0), observed


def noisy_moment_sums(
    X: np.ndarray,
    lower: np.ndarray,
    upper: np.ndarray,
    sigma: float,
    rng: np.random.Generator,
    with_second: bool = True,
) -> MomentSums:
    """Gaussian mechanism on the per-column sums of ``u``, ``v = 2 u^2 - 1`` and ``o``.

    ``X`` is float64 of shape (n, d) with NaN for missing values; ``lower``/``upper`` are the
    public (or privately found) bounds of each column. Every coordinate gets independent
    ``N(0, sigma^2)`` noise; ``sigma`` must be ``moment_sensitivity(d, with_second)`` times the
    noise multiplier.
    """
    u, observed = normalised_values(X, lower, upper)
    d = X.shape[1]
    first = u.sum(axis=0) + gaussian_noise(rng, sigma, d)
    second = None
    if with_second:
        v = np.clip(2.0 * u * u - 1.0, -1.0, 1.0)
        second = np.where(observed, v, 0.0).sum(axis=0) + gaussian_noise(rng, sigma, d)
    count = observed.sum(axis=0).astype(np.float64) + gaussian_noise(rng, sigma, d)
    return MomentSums(first, second, count)


# --- quantiles: two-stage noisy binary search on a public grid (spec §3.3) -------------------

#: Probes of the two-stage search: 7 on the 128-point log grid, 10 on the 1024-point linear grid.
_STAGE1_PROBES, _STAGE2_PROBES = 7, 10
QUANTILE_PROBES = _STAGE1_PROBES + _STAGE2_PROBES
_STAGE2_POINTS = 2**_STAGE2_PROBES


def quantile_search_grid() -> np.ndarray:
    """The public stage-1 grid: 0 and +-10^(k/4) for k = -24..36 (1e-6 to 1e9, 4 per decade),
    sorted and padded to 128 points by repeating the last one. Computed once, never from data."""
    magnitudes = 10.0 ** (np.arange(-24, 37) / 4.0)
    grid = np.concatenate([-magnitudes[::-1], [0.0], magnitudes])
    return np.concatenate([grid, np.full(2**_STAGE1_PROBES - grid.size, grid[-1])])


_STAGE1_GRID = quantile_search_grid()


def quantile_probe_sensitivity(n_columns: int, quantiles: Sequence[float]) -> float:
    """L2 sensitivity of one probe: every column's signed count for every quantile, each
    moving by at most 1 when a row is added or removed.

    For a fixed q the move is at most ``max(q, 1 - q)``; but the planned quantiles may depend on
    the public n (moved inward by a margin proportional to 1/n, see ``_bounds.py``), and then
    ``q N`` barely moves with the row while the count moves by 1 (the audit found it). 1 holds
    in every case: the count moves by 0 or 1 and ``q N`` by at most ``q < 1``, in the same
    direction.
    """
    return math.sqrt(n_columns * len(quantiles))


@dataclass(frozen=True)
class QuantileSearch:
    """The released outcome of a quantile search: for column j and quantile k, the quantile
    lies (with high probability) in ``(lower[j, k], upper[j, k]]``."""

    lower: np.ndarray
    upper: np.ndarray


def _search(
    sorted_columns: list[np.ndarray],
    grids: np.ndarray,
    quantiles: np.ndarray,
    probes: int,
    sigma: float,
    rng: np.random.Generator,
) -> np.ndarray:
    """Lockstep noisy binary search: for every column j and quantile k, the smallest index i of
    ``grids[j]`` whose noisy signed count ``#{x <= g_i} - q #{observed}`` is >= 0.

    Every probe is one Gaussian release of all ``d * K`` signed counts; the number of probes is
    fixed (``probes``), so the cost does not depend on the data.
    """
    d, K = len(sorted_columns), quantiles.size
    lo = np.zeros((d, K), dtype=np.int64)
    hi = np.full((d, K), grids.shape[1] - 1, dtype=np.int64)
    observed = np.array([col.size for col in sorted_columns], dtype=np.float64)
    for _ in range(probes):
        mid = (lo + hi) // 2
        probe_values = np.take_along_axis(grids, mid, axis=1)  # (d, K)
        below = np.array(
            [np.searchsorted(col, probe_values[j], side="right") for j, col in
             enumerate(sorted_columns)],
            dtype=np.float64,
        ).reshape(d, K)
        signed = below - quantiles[None, :] * observed[:, None]
        noisy = signed + gaussian_noise(rng, sigma, (d, K))
        go_low = noisy >= 0
        hi = np.where(go_low, mid, hi)
        lo = np.where(go_low, lo, mid + 1)
    return lo


def noisy_quantile_search(
    X: np.ndarray, quantiles: Sequence[float], sigma: float, rng: np.random.Generator
) -> QuantileSearch:
    """DP quantiles of every column of ``X`` (float64, NaN = missing) by a two-stage noisy
    binary search (spec §3.3).

    Stage 1 searches the public log grid (1e-6 to 1e9 in magnitude); stage 2 a 1024-point
    linear grid spanning the stage-1 bracket of all quantiles of the column (adaptive
    composition with fixed noise). ``sigma`` is the noise of every signed count: the noise
    multiplier of one probe times :func:`quantile_probe_sensitivity`. Values beyond +-1e9 give
    a bound at +-1e9.
    """
    q = np.asarray(quantiles, dtype=np.float64)
    # -0.0 and 0.0 compare equal; NaN never counts (it is not observed).
    sorted_columns = [np.sort(col[~np.isnan(col)]) for col in X.T]
    d = len(sorted_columns)
    stage1 = np.broadcast_to(_STAGE1_GRID, (d, _STAGE1_GRID.size))
    k1 = _search(sorted_columns, stage1, q, _STAGE1_PROBES, sigma, rng)
    # Round outward: from one cell below the lowest quantile to the highest one.
    low1 = _STAGE1_GRID[np.maximum(k1.min(axis=1) - 1, 0)]
    high1 = _STAGE1_GRID[k1.max(axis=1)]
    steps = np.arange(_STAGE2_POINTS) / (_STAGE2_POINTS - 1)
    stage2 = low1[:, None] + (high1 - low1)[:, None] * steps[None, :]
    stage2[:, -1] = high1  # exact end point, whatever the rounding
    k2 = _search(sorted_columns, stage2, q, _STAGE2_PROBES, sigma, rng)
    lower = np.take_along_axis(stage2, np.maximum(k2 - 1, 0), axis=1)
    upper = np.take_along_axis(stage2, k2, axis=1)
    return QuantileSearch(lower, upper)


def feasible_quantile_margin(sigma: float, n_samples: int) -> float:
    """The smallest tail quantile the search can locate reliably (spec §3.3): with probability
    0.95 no probe's noise exceeds ``t = sigma * Phi^-1(1 - 0.05 / (2 * probes))``, and a quantile
    ``q`` with ``q n > 1.5 t`` is then found within one grid cell."""
    t = sigma * float(-ndtri(0.05 / (2 * QUANTILE_PROBES)))
    return 1.5 * t / n_samples


# --- categories: keys, partition selection, counts over public keys (spec §4) ----------------


class _Missing:
    """The one key that stands for a missing value (None, NaN, pd.NA, NaT) in any column."""

    _instance = None

    def __new__(cls):
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "MISSING"

    def __reduce__(self):
        return (_Missing, ())


#: The key of missing values.
MISSING = _Missing()


@dataclass(frozen=True)
class KeyColumn:
    """A categorical column: its distinct keys, and for every row the index of its key.

    Every kind of missing value (None, NaN, pd.NA, NaT) is the one key :data:`MISSING`
    (last), and ``-0.0`` is ``0.0``: one key per value, whatever its spelling.
    """

    keys: tuple
    codes: np.ndarray

    @classmethod
    def from_values(cls, values) -> KeyColumn:
        import pandas as pd  # factorize: hashing in C, and it knows every missing marker

        codes, uniques = pd.factorize(np.asarray(values, dtype=object), use_na_sentinel=True)
        keys = [0.0 if isinstance(k, float | np.floating) and k == 0.0 else k
                for k in uniques.tolist()]
        codes = np.asarray(codes, dtype=np.int64)
        missing = codes < 0
        if missing.any():
            codes[missing] = len(keys)
            keys.append(MISSING)
        return cls(tuple(keys), codes)

    def counts(self) -> np.ndarray:
        """Number of rows holding each key."""
        return np.bincount(self.codes, minlength=len(self.keys))

    def is_missing(self) -> np.ndarray:
        if self.keys and self.keys[-1] is MISSING:
            return self.codes == len(self.keys) - 1
        return np.zeros(self.codes.shape, dtype=bool)

    def lookup(self, table: dict, default) -> np.ndarray:
        """``table[key]`` of every row's key (``default`` for keys not in it)."""
        per_key = np.asarray([table.get(k, default) for k in self.keys])
        return per_key[self.codes] if per_key.size else np.full(self.codes.shape, default)


def column_keys(values) -> list:
    """The distinct keys of some values, in order of first appearance (see :class:`KeyColumn`)."""
    return list(KeyColumn.from_values(values).keys)


def partition_threshold(sigma: float, extra_delta: float, n_columns: int) -> float:
    """Threshold of Gaussian partition selection (spec §4.2): ``1 + sigma Phi^-1(1 - p1)`` with
    ``p1 = 1 - (1 - p)^(1 / m)``, so that the up to ``m`` keys a new row brings (one per
    column) are kept with probability at most ``extra_delta = p`` in all.

    Without noise (``sigma == 0``, no privacy) every key seen at least once is kept.
    """
    if sigma == 0.0:
        return 0.5
    per_column = -math.expm1(math.log1p(-extra_delta) / n_columns)
    return 1.0 + sigma * float(-ndtri(per_column))


def thresholded_key_counts(
    columns: Sequence[KeyColumn],
    sigma: float,
    threshold: float,
    rng: np.random.Generator,
    exclude_missing: bool = False,
) -> list[dict]:
    """Gaussian partition selection: for each column, the keys whose count plus
    ``N(0, sigma^2)`` exceeds ``threshold``, with that noisy count.

    One draw per key present; keys absent from the data get no draw (the key set is unbounded),
    which is why a key present in only one of two neighbouring datasets costs the extra delta
    of :func:`partition_threshold` rather than being covered by the Gaussian part.
    ``exclude_missing`` leaves missing values out (a per-row map that keeps one key or none per
    row and column: the sensitivity does not grow).
    """
    kept = []
    for column in columns:
        counts = column.counts().astype(np.float64)
        noisy = counts + gaussian_noise(rng, sigma, counts.size)
        kept.append({
            key: float(c) for key, c in zip(column.keys, noisy, strict=True)
            if c > threshold and not (exclude_missing and key is MISSING)
        })
    return kept


def public_key_counts(
    columns: Sequence[KeyColumn],
    public_keys: Sequence[Sequence],
    sigma: float,
    rng: np.random.Generator,
) -> list[np.ndarray]:
    """Gaussian histogram over public keys: for each column, noisy counts of each public key
    followed by one count of every other key together. Each row adds 1 to exactly one bin per
    column (L2 sensitivity ``sqrt(m)``); no threshold and no extra delta are needed."""
    out = []
    for column, public in zip(columns, public_keys, strict=True):
        counts = dict(zip(column.keys, column.counts().tolist(), strict=True))
        values = [counts.pop(k, 0) for k in public]
        values.append(sum(counts.values()))
        noisy = np.asarray(values, dtype=np.float64) + gaussian_noise(rng, sigma, len(values))
        out.append(noisy)
    return out
