"""dp_accounting's FFT self-convolution of a PMF, with its truncation bounds computed in one pass.

Composing a DP-SGD step with itself ``T`` times is, for a privacy-loss distribution, the
``T``-fold convolution of its PMF with itself: ``dp_accounting.pld.common.self_convolve``. That
function first bounds, by Chernoff, the window of the result outside of which at most
``tail_mass_truncation`` of the mass lies (``compute_self_convolve_bounds``: one
``scipy.special.logsumexp`` per order, 40 orders, each a few passes of ``exp`` over the PMF),
then raises the PMF's FFT to the power ``T`` and transforms back. The bounds took about two
thirds of a ledger charge's composition. :func:`self_convolve` returns the same numbers:

* **The bounds are dp_accounting's integers, always.** The 40 moment-generating functions
  ``sum_i p_i e^{i k / n}`` (``k = +-1..+-20``) are read from the powers ``x_i^k`` of
  ``x_i = e^{+-i / n}``, built by repeated products (two passes of ``exp`` in all) and summed as
  one matrix-vector product. They agree with ``logsumexp`` to ~1e-14 in the log; from them each
  order's bound is known to within a margin (100 times that error, see ``_LOG_MGF_ERROR``), and
  every order that could decide the result within its margin (its bound's ceiling or floor is
  not certain, and it could be the smallest or largest) is recomputed with dp_accounting's own
  ``logsumexp`` expression. The integers returned are then exactly dp_accounting's. In practice no
  order needs it (none did for the 208 PMFs and step counts of the tests' plans).
* **The masses are dp_accounting's, bit for bit.** The same FFT length (so the same
  wrap-around of the truncated tails into the window), the same forward and inverse transforms,
  and the power ``z**T`` taken by numpy's power as dp_accounting takes it, but only on the
  frequencies where ``|z|**T`` is at least ``1e-300``; the others are left 0 instead of values
  below ``1e-300``, which vanish in the rounding of every sum of the inverse transform they
  enter (those sums are ~1e-16 of the largest mass and up). For ``T`` in the hundreds to
  thousands that is all but ~1% of a PLD's spectrum, and the power (a complex log and exp per
  frequency) was a third of the transform's time. ``tests/accounting/test_self_convolve.py``
  checks the masses are equal bit for bit, on random PMFs and on the PLDs of 128 DP-SGD plans.

:func:`self_compose` is ``PrivacyLossDistribution.self_compose`` on top of it: each direction's
dense PMF self-convolved here, with dp_accounting's lower loss, infinity mass and pessimistic
flag; sparse PMFs go dense where dp_accounting's would.

Anything this module does not expect (a non-finite or negative entry, no positive one) goes to
dp_accounting's functions unchanged.
"""

from __future__ import annotations

import math

import numpy as np
from dp_accounting.pld import common, pld_pmf
from dp_accounting.pld import privacy_loss_distribution as pld_module
from scipy import fft, special

from . import _connect_dots

__all__ = ["self_compose", "self_convolve", "self_convolve_bounds"]

# dp_accounting's orders, as multiples of 1/len(input): -20..-1 and 1..20.
_MAX_ORDER = 20
# Bound on |log-MGF by powers - log-MGF by logsumexp|, worst case. By powers: each term
# p_i x_i^k within ~22 ulp (one exp, up to 19 products), a sum of positive terms within
# (_BLOCK + n / _BLOCK) ulp of its value (a dot product per block of _BLOCK columns, then the
# blocks added), 7.3e-13 for n up to 10^7; by logsumexp: its exponent i*o rounded at
# ulp(20) = 3.6e-15, a pairwise sum, ~1e-14. Typical errors are ~1e-15.
_LOG_MGF_ERROR = 1e-12
# Relative rounding of the bound's own arithmetic (T * log_mgf + c) / o, generously.
_BOUND_ROUNDING = 1e-12
# Column block of the (40, block) matrix of powers: 40 * 2^12 doubles = 1.3 MiB, cache-sized.
_BLOCK = 1 << 12
# Spectrum entries whose T-th power lies below this contribute nothing representable.
_NEGLIGIBLE_POWER = 1e-300


def _exact_log_mgf(probs: np.ndarray, order: float) -> float:
    """dp_accounting's log-MGF at one order, the same expression."""
    return float(special.logsumexp(np.arange(len(probs)) * order, b=probs))


def _exact_bound(probs: np.ndarray, order: float, num_times: int, log_term: float) -> float:
    """dp_accounting's bound at one order (nan when it skips the order: not finite)."""
    bound = (num_times * _exact_log_mgf(probs, order) + log_term) / order
    return bound if math.isfinite(bound) else math.nan


def _fast_log_mgfs(probs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """log sum_i p_i e^{i k / n} for k = 1..20 and for k = -1..-20 (rows in that order)."""
    n = len(probs)
    mgfs = np.zeros(2 * _MAX_ORDER)
    powers = np.empty((2 * _MAX_ORDER, min(n, _BLOCK)))
    for start in range(0, n, _BLOCK):
        stop = min(start + _BLOCK, n)
        width = stop - start
        block = powers[:, :width]
        i = np.arange(start, stop, dtype=float)
        np.exp(i / n, out=block[0])
        np.exp(-i / n, out=block[_MAX_ORDER])
        for base in (0, _MAX_ORDER):
            for k in range(1, _MAX_ORDER):
                np.multiply(block[base + k - 1], block[base], out=block[base + k])
        mgfs += block @ probs[start:stop]
    with np.errstate(divide="ignore"):
        logs = np.log(mgfs)
    return logs[:_MAX_ORDER], logs[_MAX_ORDER:]


def self_convolve_bounds(
    probs: np.ndarray, num_times: int, tail_mass_truncation: float
) -> tuple[int, int]:
    """``common.compute_self_convolve_bounds(probs, num_times, tail_mass_truncation)``, fast.

    The same integers (see the module docstring); ``probs`` must be finite and non-negative.
    """
    n = len(probs)
    upper_bound = (n - 1) * num_times
    lower_bound = 0
    if tail_mass_truncation == 0:
        return lower_bound, upper_bound
    log_term = math.log(2 / tail_mass_truncation)
    log_pos, log_neg = _fast_log_mgfs(probs)
    k = np.arange(1, _MAX_ORDER + 1)
    # dp_accounting's orders, bit for bit: np.arange(-20, 0) / n and np.arange(1, 21) / n.
    orders_pos = k / n
    orders_neg = -k / n
    with np.errstate(invalid="ignore", over="ignore"):
        bound_pos = (num_times * log_pos + log_term) / orders_pos
        bound_neg = (num_times * log_neg + log_term) / orders_neg
        margin_pos = ((num_times * _LOG_MGF_ERROR) / orders_pos
                      + _BOUND_ROUNDING * (np.abs(bound_pos) + log_term / orders_pos))
        margin_neg = ((num_times * _LOG_MGF_ERROR) / -orders_neg
                      + _BOUND_ROUNDING * (np.abs(bound_neg) + log_term / -orders_neg))
    upper_bound = _settle(upper_bound, bound_pos, margin_pos, orders_pos, +1,
                          probs, num_times, log_term)
    lower_bound = _settle(lower_bound, bound_neg, margin_neg, orders_neg, -1,
                          probs, num_times, log_term)
    return lower_bound, upper_bound


def _settle(initial: int, bounds: np.ndarray, margins: np.ndarray, orders: np.ndarray,
            side: int, probs: np.ndarray, num_times: int, log_term: float) -> int:
    """min (side +1, of ceilings) or max (side -1, of floors) of ``initial`` and the bounds.

    Each order's bound is known to lie within ``bounds +- margins``; orders whose rounded bound
    is uncertain and could decide the result are recomputed exactly, as dp_accounting does.
    Written for the upper side; the lower side is the same on negated values.
    """
    # Negating turns max-of-floors into -(min of ceilings of the negated bounds).
    init = side * initial
    centre = side * bounds
    finite = np.isfinite(centre) & np.isfinite(margins)
    with np.errstate(invalid="ignore"):
        lo = np.where(finite, np.ceil(centre - margins), np.inf)
        hi = np.where(finite, np.ceil(centre + margins), np.inf)
    # Orders whose fast value is not finite might still be finite exactly: recompute them too.
    best_certain = min(init, float(np.min(hi)))  # the result is at most this
    recompute = ~finite | (lo < best_certain)
    result = best_certain
    for j in np.flatnonzero(recompute):
        bound = _exact_bound(probs, float(orders[j]), num_times, log_term)
        if not math.isnan(bound):
            result = min(result, math.ceil(side * bound))
    # The other orders' ceilings are at least lo >= best_certain >= result: they change nothing.
    return int(side * result)


def _power(spectrum: np.ndarray, num_times: int) -> np.ndarray:
    """``spectrum ** num_times``, numpy's power as dp_accounting takes it, but only where it counts.

    Entries whose power has modulus below 1e-300 are left 0 (numpy would return values below
    1e-300 there, which no sum of the inverse transform can tell from 0 next to masses of
    1e-17 and up); the others are numpy's power, value for value.
    """
    if num_times == 1:
        return spectrum
    squared = spectrum.real * spectrum.real + spectrum.imag * spectrum.imag
    # |z|^T >= 1e-300  <=>  |z|^2 >= 1e-600^(1/T); the threshold is 0 (keep all) for small T.
    threshold = math.exp(2.0 * math.log(_NEGLIGIBLE_POWER) / num_times)
    keep = squared >= threshold
    if np.count_nonzero(keep) > 0.75 * len(spectrum):
        return spectrum**num_times
    out = np.zeros_like(spectrum)
    out[keep] = spectrum[keep] ** num_times
    return out


def self_convolve(input_list, num_times: int,
                  tail_mass_truncation: float = 0) -> tuple[int, np.ndarray]:
    """``dp_accounting.pld.common.self_convolve``: the same contract, bounds and masses.

    Returns ``(truncation_lower_bound, output)`` where ``output[i]`` is the mass of the
    ``num_times``-fold self-convolution of ``input_list`` at ``i + truncation_lower_bound``,
    over dp_accounting's window (see the module docstring for what is the same and what is
    rounding).
    """
    probs = np.asarray(input_list, dtype=float)
    if probs.ndim != 1 or not (np.all(np.isfinite(probs)) and np.all(probs >= 0)
                               and np.any(probs > 0)):
        return common.self_convolve(input_list, num_times, tail_mass_truncation)
    lower, upper = self_convolve_bounds(probs, num_times, tail_mass_truncation)
    output_len = upper - lower + 1
    fast_len = fft.next_fast_len(max(output_len, len(probs)))
    # dp_accounting's transforms, so that the masses are its own to the last bit.
    convolution = np.real(fft.ifft(_power(fft.fft(probs, fast_len), num_times)))
    # np.roll(convolution, -lower)[:output_len], without rolling the whole array.
    start = lower % fast_len
    if start + output_len <= fast_len:
        output = convolution[start:start + output_len].copy()
    else:
        output = np.concatenate((convolution[start:], convolution[:start + output_len - fast_len]))
    return lower, output


# self_compose mirrors DensePLDPmf.self_compose (and SparsePLDPmf's hand-over to it) on these
# names (stable from 0.4 to 0.6); without them it is dp_accounting's own self_compose.
_HAS_PMF_INTERNALS = all(
    hasattr(pld_pmf, name) for name in ("DensePLDPmf", "SparsePLDPmf", "_MAX_PMF_SPARSE_SIZE")
)
# PrivacyLossDistribution.self_compose's and PMFs' default truncation, the accountant's.
_SELF_COMPOSE_TRUNCATION = 1e-15


def _self_compose_pmf(pmf, num_times: int, tail_mass_truncation: float):
    """``pmf.self_compose(num_times, tail_mass_truncation)``, dense PMFs by :func:`self_convolve`.

    The dense case is ``DensePLDPmf.self_compose`` line for line with the convolution replaced;
    a sparse PMF goes dense when dp_accounting's would (its size to the power ``num_times``
    above its sparse limit) and otherwise composes as dp_accounting's; other PMFs are theirs.
    """
    kind = type(pmf)
    if kind is pld_pmf.SparsePLDPmf and num_times > 1:
        if pmf.size**num_times <= pld_pmf._MAX_PMF_SPARSE_SIZE:
            return pmf.self_compose(num_times, tail_mass_truncation)
        pmf = (_connect_dots.to_dense_pmf(pmf) if _connect_dots.HAS_PMF_INTERNALS
               else pmf.to_dense_pmf())
        kind = type(pmf)
    if kind is not pld_pmf.DensePLDPmf or num_times <= 0:
        return pmf.self_compose(num_times, tail_mass_truncation)
    # pylint: disable=protected-access
    offset, probs = self_convolve(pmf._probs, num_times, tail_mass_truncation)
    lower_loss = pmf._lower_loss * num_times + offset
    # tail_mass_truncation + 1 - (1 - infinity_mass)**num_times, as dp_accounting writes it.
    infinity_mass = (tail_mass_truncation
                     - math.expm1(num_times * math.log1p(-pmf._infinity_mass)))
    return pld_pmf.DensePLDPmf(pmf._discretization, lower_loss, np.array(probs),
                               infinity_mass, pmf._pessimistic_estimate)


def self_compose(
    pld: pld_module.PrivacyLossDistribution,
    num_times: int,
    tail_mass_truncation: float = _SELF_COMPOSE_TRUNCATION,
) -> pld_module.PrivacyLossDistribution:
    """``pld.self_compose(num_times)`` with dense PMFs convolved by :func:`self_convolve`.

    The same PLD as dp_accounting's: the same truncation window, lower loss, infinity mass and
    pessimistic flag of each direction, and the same masses, bit for bit
    (``tests/accounting/test_self_convolve.py``). A dp_accounting without the internals this
    relies on composes by its own ``self_compose``.
    """
    # pylint: disable=protected-access
    if not _HAS_PMF_INTERNALS or not all(
        hasattr(pld, name) for name in ("_pmf_remove", "_pmf_add", "_symmetric")
    ):
        return pld.self_compose(num_times, tail_mass_truncation)
    pmf_remove = _self_compose_pmf(pld._pmf_remove, num_times, tail_mass_truncation)
    if pld._symmetric:
        return pld_module.PrivacyLossDistribution(pmf_remove)
    pmf_add = _self_compose_pmf(pld._pmf_add, num_times, tail_mass_truncation)
    return pld_module.PrivacyLossDistribution(pmf_remove, pmf_add)
