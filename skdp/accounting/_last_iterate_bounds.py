"""AT22's last-iterate branch of the RDP bound: eq. (B.2), (B.3) and, for full batches, (B.1).

The branch for the windows that start after step 0 (Altschuler & Talwar 2022, appendix B; spec
``docs/specs/noisy_sgd_last_iterate_privacy.md`` sections 2.5 and 4.2): at each order, the
minimum over noise splits and window lengths of a sampled-Gaussian term plus a shifted-divergence
(PABI) term. It is not a bound below the standard composition by itself: the reported guarantee
takes the per-order minimum with :func:`~skdp.accounting._last_iterate.composition_rdp`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from ._gaussian_rdp import sampled_gaussian_rdp_over_ratios
from ._last_iterate_run import LastIterateRun, check_noise_multiplier
from ._rdp_orders import as_orders

__all__ = ["last_iterate_rdp"]

# Noise splits theta = sigma1^2 / sigma^2 tried for every order (spec 4.2): a linear grid plus
# points packed near 0 and 1, because with strong convexity the best split is often ~0.004 (almost
# all noise on the sampling term). Any split gives a valid bound; the grid only affects tightness,
# and each order is refined twice around its best grid point.
_THETAS = np.unique(
    np.concatenate(
        [np.linspace(0.01, 0.99, 99), np.logspace(-8, -1, 50), 1.0 - np.logspace(-8, -1, 50)]
    )
)
_REFINE_POINTS, _REFINE_ROUNDS = 17, 2
# A contraction factor below this is treated as equal to it (a larger c is always valid: a
# c-contraction is also a c'-contraction for c' >= c); avoids log(0) when eta = 1/m = 1/M.
_MIN_CONTRACTION = 1e-12


def _window_min(q_term: np.ndarray, k_term: np.ndarray, n_windows: int, log_c: float | None):
    """``min over integer R in [1, n_windows] of R * Q + K * h(R)``, elementwise.

    ``h(R) = 1 / R`` (convex, eq. B.2) or ``(1 - c^2) / (c^(-2R) - 1)`` (strongly convex, eq.
    B.3: the optimal PABI weights, spec 2.5). The objective is convex in R, so the integer
    minimum is at the floor or ceiling of the stationary point.
    """
    with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
        if log_c is None:
            r_star = np.sqrt(k_term / q_term)

            def h(r):
                return 1.0 / r
        else:
            lam = -log_c  # > 0
            f = -math.expm1(-2.0 * lam)  # 1 - c^2

            def h(r):
                return f * np.exp(-2.0 * lam * r) / -np.expm1(-2.0 * lam * r)

            # Stationary point: u = c^(-2R) solves u^2 - (2 + g) u + 1 = 0, g = 2 K f lam / Q.
            g = 2.0 * k_term * f * lam / q_term
            r_star = np.log1p((g + np.sqrt(g) * np.sqrt(g + 4.0)) / 2.0) / (2.0 * lam)
        r_star = np.nan_to_num(r_star, nan=1.0, posinf=float(n_windows))
        best = np.full(np.shape(q_term), np.inf)
        for r in (np.floor(r_star), np.ceil(r_star)):
            r = np.clip(r, 1.0, float(n_windows))
            value = r * q_term + k_term * h(r)
            best = np.fmin(best, np.where(np.isnan(value), np.inf, value))
    return best


def _split_branch(alpha: float, thetas: np.ndarray, run: LastIterateRun, z: float) -> np.ndarray:
    """AT22 (B.2)/(B.3) window branch at order ``alpha`` for noise splits ``thetas``.

    ``theta = sigma1^2 / sigma^2``: ``sigma1`` pays the shifted-divergence (PABI) term, ``sigma2``
    the sampled-Gaussian term ``Q = S_alpha(b/n, b sigma2 / (2L)) = S_alpha(b/n, z sqrt(1-theta)
    / 2)``. The PABI constant is ``K = alpha D^2 / (2 eta^2 sigma1^2)`` with
    ``sigma1 = sqrt(theta) z L / b``. Windows are ``R = T - tau in {1, ..., T-1}``.
    """
    ratio2 = z * np.sqrt(1.0 - thetas) / 2.0
    if run.full_batch:
        with np.errstate(divide="ignore"):
            q_term = alpha / (2.0 * ratio2**2)
    else:
        q_term = sampled_gaussian_rdp_over_ratios(run.sampling_rate, ratio2, int(alpha))
    sigma1_sq = thetas * (z * run.max_grad_norm / run.batch_size) ** 2
    k_term = alpha * run.diameter**2 / (2.0 * run.learning_rate**2 * sigma1_sq)
    c = run.contraction
    log_c = None if c >= 1.0 else math.log(max(c, _MIN_CONTRACTION))
    return _window_min(q_term, k_term, run.n_steps - 1, log_c)


def _best_split(alpha: float, run: LastIterateRun, z: float) -> float:
    """Minimum over noise splits: the fixed grid, then two local refinements."""
    values = _split_branch(alpha, _THETAS, run, z)
    thetas = _THETAS
    best = float(np.min(values))
    for _ in range(_REFINE_ROUNDS):
        i = int(np.argmin(values))
        lo, hi = thetas[max(i - 1, 0)], thetas[min(i + 1, len(thetas) - 1)]
        thetas = np.linspace(lo, hi, _REFINE_POINTS)[1:-1]
        values = _split_branch(alpha, thetas, run, z)
        best = min(best, float(np.min(values)))
    return best


def _full_batch_pabi(orders: np.ndarray, run: LastIterateRun, z: float) -> np.ndarray:
    """AT22 (B.1): full-batch PABI without noise splitting, windows ``R in {1..T}``.

    ``alpha / (2 eta^2 sigma^2) * min_R R (D~/R + s)^2`` with ``s = 2 eta L / n`` and
    ``D~ = D + s``. In units of the iterate noise ``eta sigma = eta z L / n``: ``s -> 2 / z``.
    """
    eta, n, lip = run.learning_rate, run.n_samples, run.max_grad_norm
    s = 2.0 / z
    a = (run.diameter + 2.0 * eta * lip / n) * n / (eta * z * lip)
    r_star = a / s
    best = math.inf
    for r in {math.floor(r_star), math.ceil(r_star)}:
        r = min(max(r, 1), run.n_steps)
        best = min(best, a * a / r + 2.0 * a * s + r * s * s)
    return orders / 2.0 * best


def last_iterate_rdp(
    run: LastIterateRun, noise_multiplier: float, orders: float | Sequence[float] | None = None
) -> np.ndarray:
    """AT22's last-iterate branch of the RDP bound (windows that start after step 0).

    At each order: the minimum over noise splits ``sigma1^2 + sigma2^2 = sigma^2`` and windows
    ``R in {1, ..., T-1}`` of ``R * S_alpha(b/n, b sigma2/(2L)) + PABI(R)``, with
    ``PABI(R) = alpha D^2 / (2 eta^2 sigma1^2 R)`` (convex, eq. B.2) or
    ``alpha D^2 (1 - c^2) / (2 eta^2 sigma1^2 (c^(-2R) - 1))`` (strongly convex, eq. B.3); for
    full batches also eq. (B.1). ``S_alpha`` is the standard sampled-Gaussian RDP
    (:func:`~skdp.accounting._gaussian_rdp.sampled_gaussian_rdp_over_ratios`). Valid for all
    orders and noise levels (AT22 Remark B.1).

    This branch is *not* by itself a bound below the composition one: take the per-order
    minimum with :func:`~skdp.accounting._last_iterate.composition_rdp` (as
    :func:`~skdp.accounting.last_iterate_guarantee` does).

    Parameters
    ----------
    run : LastIterateRun
        The run.
    noise_multiplier : float
        ``z``: noise std on the clipped gradient sum divided by ``max_grad_norm``.
    orders : float or sequence of float, optional
        RDP orders (default :data:`~skdp.accounting._rdp_orders.DEFAULT_ORDERS`).

    Returns
    -------
    ndarray
        The branch at each order (``inf`` when ``n_steps == 1`` and ``batch_size < n_samples``:
        there is no window). With random batches the sampled-Gaussian term is exact at integer
        orders only; at a fractional order the branch is interpolated from the two neighbouring
        integer orders, which is valid because ``(alpha - 1) D_alpha`` is convex in ``alpha``
        (it is the log-moment-generating function of the privacy loss) and is 0 at
        ``alpha = 1``; dp_accounting bounds sampling without replacement the same way.
    """
    orders_arr = np.asarray(as_orders(orders))
    z = check_noise_multiplier(noise_multiplier)
    if run.full_batch:
        # Everything is in closed form at every order: (B.1), and (B.2)/(B.3) with q = 1.
        out = _full_batch_pabi(orders_arr, run, z)
        if run.n_steps >= 2:
            out = np.minimum(out, [_best_split(float(a), run, z) for a in orders_arr])
        return out
    if run.n_steps < 2:
        return np.full(orders_arr.shape, np.inf)
    needed = set()
    for alpha in orders_arr:
        needed.update({math.floor(alpha), math.ceil(alpha)} - {1})
    at_int = {a: _best_split(float(a), run, z) for a in sorted(needed)}
    at_int[1] = 0.0  # (alpha - 1) D_alpha vanishes at alpha = 1
    out = np.empty(orders_arr.shape)
    for i, alpha in enumerate(orders_arr):
        lo, hi = math.floor(alpha), math.ceil(alpha)
        if lo == hi:
            out[i] = at_int[lo]
        else:
            t = alpha - lo
            cgf = (1 - t) * (lo - 1) * at_int[lo] + t * (hi - 1) * at_int[hi]
            out[i] = cgf / (alpha - 1)
    return out
