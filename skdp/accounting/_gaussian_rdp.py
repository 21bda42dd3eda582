"""RDP of the Poisson-subsampled Gaussian mechanism over many orders, in a few numpy passes.

``dp_accounting`` 0.6's ``RdpAccountant`` computes this curve one order at a time, each in a
Python loop: the binomial expansion of ``A_alpha`` (``alpha + 1`` terms) for an integer order,
a series of up to 1000 terms for a fractional one. On its 156 default orders that is about
30 ms, half the time of charging a never-seen DP-SGD plan to a budget ledger.

:func:`poisson_gaussian_rdp` computes the same terms with the same floating-point operations as
arrays, and adds them up in the same order: ``np.logaddexp.accumulate`` performs the sequence
of ``dp_accounting``'s ``_log_add`` calls (the same ``exp`` and ``log1p`` of the same
arguments), so the values are ``dp_accounting``'s own floats, not an approximation of them (an
RDP value is a privacy bound). A fractional series that has not stopped within
``dp_accounting``'s 1000 terms is ``inf``, with its warning, as there. What this path does not
reproduce (an order ``<= 1`` or NaN, an integer order above ``2**16``, a non-finite term, a noise
multiplier whose square over- or underflows) is handed to ``dp_accounting``'s scalar code.

:func:`sampled_gaussian_rdp_over_ratios` computes the same RDP at one integer order for many
noise multipliers, with full relative precision where it is tiny rather than dp_accounting's
floats: the last-iterate bound's search over noise splits needs that (see its docstring).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from absl import logging
from dp_accounting import dp_event
from dp_accounting.privacy_accountant import NeighboringRelation as _DpRelation
from dp_accounting.rdp import rdp_privacy_accountant as _rdp
from scipy import special

__all__ = ["poisson_gaussian_rdp", "sampled_gaussian_rdp_over_ratios", "VectorisedRdpAccountant"]

# dp_accounting gives up on a fractional order's series after this many terms (returning inf
# with a warning); past it we let dp_accounting do exactly that.
_MAX_FRACTIONAL_TERMS: int = int(getattr(_rdp, "_MAX_STEPS_LOG_A_FRAC", 1000))
# First block of a fractional order's series; the next blocks are twice as long each time.
_FIRST_FRACTIONAL_TERMS = 16
# An integer order's expansion has ``alpha + 1`` terms; above this the arrays would be large and
# dp_accounting's own loop (just as slow either way) is used.
_MAX_INTEGER_ORDER = 1 << 16
# dp_accounting stops a fractional series once its terms fall this far (in log) below the total.
_SERIES_MARGIN = 30

# The constants of dp_accounting's _compute_log_a_frac and _log_erfc, computed as it does.
_LOG_HALF = math.log(0.5)
_LOG_TWO = math.log(2)
_SQRT_TWO_POW = 2**0.5


def poisson_gaussian_rdp(
    q: float, noise_multiplier: float, orders: Sequence[float] | np.ndarray
) -> np.ndarray:
    """RDP of the Poisson-subsampled Gaussian mechanism at every order.

    Vectorised over orders at one noise multiplier, and bit for bit dp_accounting's floats (what
    the accountants and the ledger need: their RDP equals dp_accounting's).
    :func:`sampled_gaussian_rdp_over_ratios` computes the same quantity over noise ratios at one
    integer order, more precisely where it is tiny, for the last-iterate bound.

    Equal to ``dp_accounting``'s ``_compute_rdp_poisson_subsampled_gaussian(q,
    noise_multiplier, orders)`` (what ``RdpAccountant`` adds up for a
    ``PoissonSampledDpEvent(q, GaussianDpEvent(noise_multiplier))``, and with ``q = 1`` for a
    ``GaussianDpEvent``), including its special cases.

    Parameters
    ----------
    q : float
        Sampling probability, in ``[0, 1]``.
    noise_multiplier : float
        Standard deviation of the noise over the L2 sensitivity, ``>= 0``.
    orders : array-like of float
        RDP orders.

    Returns
    -------
    ndarray of float64
        The RDP at each order (``inf`` where ``dp_accounting`` returns ``inf``).

    Raises
    ------
    ValueError
        If ``q`` is not in ``[0, 1]`` or ``noise_multiplier`` is negative (as
        ``dp_accounting``).
    """
    orders = np.asarray(orders, dtype=np.float64).reshape(-1)
    if not 0 <= q <= 1:
        raise ValueError(f"Sampling rate must be in [0, 1]. Found {q}.")
    if noise_multiplier < 0:
        raise ValueError(f"Noise multiplier must be non-negative: {noise_multiplier}")
    # The special cases, in dp_accounting's order of precedence.
    if q == 0:
        return np.zeros(orders.shape)
    if noise_multiplier == 0:
        return np.full(orders.shape, np.inf)
    out = np.full(orders.shape, np.inf)  # an infinite order stays infinite
    infinite = np.isinf(orders)
    if q == 1.0:
        with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
            out[~infinite] = orders[~infinite] / (2 * noise_multiplier**2)
        return out

    sigma = float(noise_multiplier)
    two_var = 2 * (sigma**2) if math.isfinite(sigma) and sigma < 1e150 else 0.0
    if not (0.0 < two_var < math.inf):
        # Extreme noise (sigma**2 overflows or underflows in dp_accounting's own arithmetic):
        # let dp_accounting decide, errors included.
        return _scalar(q, noise_multiplier, orders)
    whole = orders == np.floor(orders)
    integer = (orders > 1) & whole & (orders <= _MAX_INTEGER_ORDER)
    fractional = (orders > 1) & ~whole & ~infinite
    other = ~infinite & ~integer & ~fractional  # orders <= 1, very large integers, NaN
    if integer.any():
        out[integer] = _integer_orders(q, sigma, two_var, orders[integer])
    if fractional.any():
        out[fractional] = _fractional_orders(q, sigma, two_var, orders[fractional])
    if other.any():
        out[other] = _scalar(q, noise_multiplier, orders[other])
    return out


def _scalar(q: float, noise_multiplier: float, orders: np.ndarray) -> np.ndarray:
    """dp_accounting's own values, for the cases the vectorised paths leave to it."""
    values = _rdp._compute_rdp_poisson_subsampled_gaussian(q, noise_multiplier, orders)
    return np.asarray(values, dtype=np.float64).reshape(-1)


def _integer_orders(q: float, sigma: float, two_var: float, orders: np.ndarray) -> np.ndarray:
    """dp_accounting's ``_compute_log_a_int(q, sigma, alpha) / (alpha - 1)`` for each order.

    The terms of all orders are laid end to end in one flat array (an order ``alpha`` has
    ``alpha + 1``), and ``np.logaddexp.reduceat`` adds up each order's run in sequence.
    """
    alphas = orders.astype(np.int64)
    lengths = alphas + 1
    starts = np.zeros(len(alphas), dtype=np.int64)
    np.cumsum(lengths[:-1], out=starts[1:])
    # i runs over 0..alpha within each order's run; alpha is repeated along it.
    alpha = np.repeat(alphas, lengths)
    i = np.arange(alpha.size, dtype=np.int64) - np.repeat(starts, lengths)
    # gammaln(k + 1) for every k the binomial coefficients need, looked up rather than
    # evaluated per term (same argument, so the same value as dp_accounting's _log_comb).
    log_fact = special.gammaln(np.arange(1, alphas.max() + 2, dtype=np.float64))
    log_comb = log_fact[alpha] - log_fact[i] - log_fact[alpha - i]
    log_coef = log_comb + i * math.log(q) + (alpha - i) * math.log1p(-q)
    terms = log_coef + (i * i - i) / two_var
    log_a = np.logaddexp.reduceat(terms, starts)
    values = log_a / (orders - 1)
    # A non-finite term is where np.logaddexp and dp_accounting's _log_add could part ways.
    bad = ~np.logical_and.reduceat(np.isfinite(terms), starts) | ~np.isfinite(values)
    if bad.any():
        values[bad] = _scalar(q, sigma, orders[bad])
    return values


def _fractional_orders(q: float, sigma: float, two_var: float, orders: np.ndarray) -> np.ndarray:
    """dp_accounting's ``_compute_log_a_frac(q, sigma, alpha) / (alpha - 1)`` for each order.

    The series is computed in blocks of terms (16, then 32, 64, ...), each as one 2-D array
    (terms x orders still running), and accumulated along the terms from where the previous
    block left off. An order's value is the running total at the first term where
    dp_accounting's stopping rule holds; from then on it is dropped from the blocks.
    """
    # Written term for term as dp_accounting's _compute_log_a_frac, operand order included,
    # so that every term is the same float.
    z0 = sigma**2 * math.log(1 / q - 1) + 0.5
    log_q, log1mq = math.log(q), math.log1p(-q)
    scale = math.sqrt(2) * sigma
    log_gamma_alpha = special.gammaln(orders + 1)
    values = np.empty(orders.shape)
    running = np.arange(len(orders))  # orders whose series has not stopped yet
    # The state of dp_accounting's loop after the previous block, per running order: the two
    # partial sums (log space) and the last two terms.
    log_a0 = log_a1 = last_s0 = last_s1 = np.full(len(orders), -np.inf)
    start, size = 0, _FIRST_FRACTIONAL_TERMS
    while running.size:
        end = min(start + size, _MAX_FRACTIONAL_TERMS)
        i = np.arange(start, end, dtype=np.float64)[:, None]
        alpha = orders[running][None, :]
        j = alpha - i
        log_coef = log_gamma_alpha[running] - special.gammaln(i + 1) - special.gammaln(j + 1)
        log_t0 = log_coef + i * log_q + j * log1mq
        log_t1 = log_coef + j * log_q + i * log1mq
        # log_e0 depends on i only: one column, broadcast over the orders.
        log_e0 = _LOG_HALF + (_LOG_TWO + special.log_ndtr(-((i - z0) / scale) * _SQRT_TWO_POW))
        log_e1 = _LOG_HALF + (_LOG_TWO + special.log_ndtr(-((z0 - j) / scale) * _SQRT_TWO_POW))
        log_s0 = log_t0 + (i * i - i) / two_var + log_e0
        log_s1 = log_t1 + (j * j - j) / two_var + log_e1
        # Partial sums, one term at a time as dp_accounting's loop adds them (accumulating
        # along axis 0 runs over the orders in the inner loop: contiguous and fast).
        sums0 = np.logaddexp.accumulate(np.vstack([log_a0, log_s0]), axis=0)[1:]
        sums1 = np.logaddexp.accumulate(np.vstack([log_a1, log_s1]), axis=0)[1:]
        total = np.logaddexp(sums0, sums1)
        # dp_accounting's stopping rule: both terms decreasing and below the total by a margin.
        stop = (
            (log_s0 < np.vstack([last_s0, log_s0[:-1]]))
            & (log_s1 < np.vstack([last_s1, log_s1[:-1]]))
            & (np.maximum(log_s0, log_s1) < total - _SERIES_MARGIN)
        )
        found = stop.any(axis=0)
        first = np.where(found, stop.argmax(axis=0), end - start - 1)
        # A non-finite term up to the stop is where np.logaddexp and dp_accounting's _log_add
        # could part ways: such orders are left to dp_accounting.
        upto = np.arange(end - start)[:, None] <= first
        bad = ~np.all(np.isfinite(log_s0) & np.isfinite(log_s1) | ~upto, axis=0)
        done = found & ~bad
        columns = np.flatnonzero(done)
        values[running[done]] = total[first[done], columns] / (alpha[0, done] - 1)
        if bad.any():
            values[running[bad]] = _scalar(q, sigma, orders[running[bad]])
        keep = ~found & ~bad
        running = running[keep]
        log_a0, log_a1 = sums0[-1, keep], sums1[-1, keep]
        last_s0, last_s1 = log_s0[-1, keep], log_s1[-1, keep]
        start, size = end, 2 * size
        if start >= _MAX_FRACTIONAL_TERMS:
            # Not converged within dp_accounting's limit: what dp_accounting does then.
            for alpha_k in orders[running]:
                logging.warning(
                    "_compute_log_a_frac failed to converge after %d iterations with q=%f"
                    ", sigma=%f, alpha=%f. Excluding this order from the epsilon "
                    "computation.",
                    _MAX_FRACTIONAL_TERMS, q, sigma, alpha_k,
                )
            values[running] = np.inf
            break
    return values


def _log_expm1(x: np.ndarray) -> np.ndarray:
    """``log(exp(x) - 1)`` for ``x >= 0``, without overflow or cancellation."""
    with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
        big = x > 30.0
        return np.where(big, x + np.log1p(-np.exp(-np.where(big, x, 30.0))), np.log(np.expm1(x)))


def sampled_gaussian_rdp_over_ratios(
    q: float, ratio: float | np.ndarray, alpha: int
) -> np.ndarray:
    """RDP of one sampled Gaussian step at an integer order, vectorised over noise ratios.

    The same quantity as :func:`poisson_gaussian_rdp` (at one integer order), kept apart on
    purpose for the last-iterate bound's search over noise splits: it takes many noise ratios at
    one order (that search runs about 7 times slower with one :func:`poisson_gaussian_rdp` call per
    ratio), and it adds up ``A_alpha - 1``, not ``A_alpha``, so it keeps full relative precision
    where the RDP is tiny (at ``q = 1e-4``, ratio 100, order 2, about ``2e-15`` relative error
    against ``4e-9`` for dp_accounting's floats). Its values are therefore not dp_accounting's
    bit for bit.

    ``S_alpha(q, ratio) = log(A_alpha) / (alpha - 1)`` with
    ``A_alpha = E_{x ~ N(0, ratio^2)}[(1 - q + q exp((2x - 1) / (2 ratio^2)))^alpha]``: the
    divergence of the mixture ``(1-q) N(0, ratio^2) + q N(1, ratio^2)`` from ``N(0, ratio^2)``.
    This is the standard direction of Mironov, Talwar & Zhang (2019), the number dp_accounting
    computes for a Poisson-sampled Gaussian, and the larger of the two directions; AT22's
    Definition 2.10 prints the other, smaller direction, which gives invalid bounds (spec 7.1).

    For integer orders the binomial expansion is exact:
    ``A_alpha - 1 = sum_{k>=2} C(alpha, k) q^k (1-q)^(alpha-k) (exp((k^2 - k) / (2 ratio^2)) - 1)``;
    summing the ``- 1`` parts analytically keeps full relative precision when ``S`` is tiny.

    Parameters
    ----------
    q : float
        Sampling probability in [0, 1].
    ratio : float or ndarray
        Noise standard deviation over the shift of the sampled component (``z / 2`` for a
        replace-one step with noise multiplier ``z``).
    alpha : int
        RDP order, an integer >= 2.

    Returns
    -------
    ndarray
        ``S_alpha(q, ratio)`` with the shape of ``ratio`` (``inf`` where ``ratio == 0``).
    """
    ratio = np.asarray(ratio, dtype=float)
    alpha = int(alpha)
    if alpha < 2:
        raise ValueError(f"integer orders >= 2 only, got {alpha}")
    with np.errstate(divide="ignore"):
        inv = 1.0 / (2.0 * ratio**2)
    if q <= 0.0:
        return np.zeros_like(ratio)
    if q >= 1.0:
        return alpha * inv
    k = np.arange(2, alpha + 1, dtype=float)
    log_pmf = (
        special.gammaln(alpha + 1)
        - special.gammaln(k + 1)
        - special.gammaln(alpha - k + 1)
        + k * math.log(q)
        + (alpha - k) * math.log1p(-q)
    )
    exponent = np.multiply.outer(inv, k * k - k)  # shape ratio.shape + (alpha - 1,)
    log_a_minus_1 = special.logsumexp(log_pmf + _log_expm1(exponent), axis=-1)
    return np.logaddexp(0.0, log_a_minus_1) / (alpha - 1)


class VectorisedRdpAccountant(_rdp.RdpAccountant):
    """dp_accounting's RDP accountant with the (Poisson-sampled) Gaussian curve of
    :func:`poisson_gaussian_rdp`: the same values, computed in numpy.

    Only a ``GaussianDpEvent`` and a ``PoissonSampledDpEvent`` of one under add-or-remove-one
    (the events of every DP-SGD plan) differ from the parent; every other event, the relation
    checks and the epsilon conversion are the parent's.
    """

    def _maybe_compose(self, event, count, do_compose):
        if do_compose and isinstance(event, dp_event.GaussianDpEvent):
            self._rdp += count * poisson_gaussian_rdp(1.0, event.noise_multiplier, self._orders)
            return None
        if (
            do_compose
            and isinstance(event, dp_event.PoissonSampledDpEvent)
            and isinstance(event.event, dp_event.GaussianDpEvent)
            and self._neighboring_relation is _DpRelation.ADD_OR_REMOVE_ONE
        ):
            self._rdp += count * poisson_gaussian_rdp(
                event.sampling_probability, event.event.noise_multiplier, self._orders
            )
            return None
        return super()._maybe_compose(event, count, do_compose)
