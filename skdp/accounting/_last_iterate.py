"""Last-iterate privacy of projected noisy SGD on convex, smooth losses (Altschuler & Talwar).

Altschuler & Talwar (2022), "Privacy of Noisy Stochastic Gradient Descent: More Iterations
without More Privacy Loss" (AT22; implementer's notes in
``docs/specs/noisy_sgd_last_iterate_privacy.md``) show that when only the *last* iterate of
projected noisy SGD on convex, smooth losses is released, its Renyi DP stops growing with the
number of steps after a burn-in of about ``D n / (L eta)`` steps. This module evaluates their
non-asymptotic bounds, eq. (B.2) (convex), (B.3) (strongly convex) and (B.1) (full batch), takes
the per-order minimum with the standard composition bound, and calibrates the noise.

Noise convention (the same as skdp's engine and :class:`~skdp.accounting.Calibration`): the
``noise_multiplier`` ``z`` is the standard deviation of the Gaussian noise added to every
coordinate of the **sum** of the ``batch_size`` clipped per-example gradients, divided by the
clipping bound ``max_grad_norm``. AT22's ``sigma`` (noise on the batch-mean gradient) is
``z * max_grad_norm / batch_size``, so their sampled-Gaussian ratio ``b sigma / (2 L)`` is ``z / 2``
under the replace-one relation.

What the training loop must do for the bound to hold (AT22 section 1, spec section 2.11):

1. Start from a point ``w0`` in the ball, chosen without looking at the data.
2. At every step draw exactly ``batch_size`` distinct rows uniformly at random, independently
   of earlier steps (no Poisson sampling, no per-epoch shuffling); ``batch_size == n_samples``
   is full-batch gradient descent.
3. Clip each per-example gradient of the data term to ``max_grad_norm``, sum, add fresh noise
   ``N(0, (z * max_grad_norm)^2 I)``, divide by ``batch_size`` (never by a realised size), add
   the gradient of a data-independent penalty, and take the step ``w <- w - eta * (...)`` with
   one constant ``learning_rate`` ``eta``.
4. Project onto the ball of radius ``radius`` (diameter ``D = 2 radius``, centre fixed in
   advance) after **every** step, including the last one.
5. Every per-example loss (clipped data term plus penalty) must be convex and ``M``-smooth on
   the ball, with ``eta <= 2 / M`` (``eta < 2 / M`` when using strong convexity ``m > 0``).
   Gradient clipping keeps this true for generalised linear models (the clipped gradient is the
   gradient of a convex "huberised" loss with no larger curvature); it does not for networks.
6. Release only the last iterate. The number of steps, the step size, the radius and all
   constants are fixed in advance, independently of the private data: no averaging, no best
   iterate, no early stopping or loss curve on private data, no warm start from a private fit.

If any of these fails, use the standard accountant (:func:`composition_rdp`, or
:func:`~skdp.accounting.calibrate`), which does not need them. The reported guarantee and the
noise calibration are in ``_last_iterate_calibration.py``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import dp_accounting
import numpy as np
from dp_accounting.rdp import rdp_privacy_accountant
from scipy import special

from ._accountants import quiet_accounting_logs

__all__ = [
    "DEFAULT_ORDERS",
    "LastIterateRun",
    "check_last_iterate_conditions",
    "composition_rdp",
    "last_iterate_rdp",
    "sampled_gaussian_rdp",
]

# The RDP orders of the returned curves: dp_accounting's default grid (also skdp.budget's), so
# that a ledger composing these curves with dp_accounting's RdpAccountant lines up.
DEFAULT_ORDERS: tuple[float, ...] = tuple(
    float(a) for a in rdp_privacy_accountant.DEFAULT_RDP_ORDERS
)

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


# --- the run and its conditions --------------------------------------------------------------


def _is_int(value: object) -> bool:
    return isinstance(value, (int, np.integer)) and not isinstance(value, bool)


def _positive_finite(name: str, value: float, hint: str) -> None:
    if not (
        isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, bool)
    ) or not (0.0 < float(value) < math.inf):
        raise ValueError(f"{name} must be positive and finite, got {value!r}. {hint}")


def check_last_iterate_conditions(
    *,
    n_samples: int,
    batch_size: int,
    n_steps: int,
    learning_rate: float,
    max_grad_norm: float,
    smoothness: float,
    radius: float | None,
    strong_convexity: float = 0.0,
    sampling: str = "fixed_size",
    average: float = 0.0,
) -> None:
    """Check that a training run meets the conditions of the last-iterate bound.

    Raises a :class:`ValueError` that says what to change when it does not. The conditions that
    cannot be checked from numbers (convexity of the loss, projection after every step, batches
    independent of the data, nothing but the last iterate released) are listed in the module
    docstring; the caller must guarantee them.

    Parameters
    ----------
    n_samples : int
        Number of rows ``n`` (public).
    batch_size : int
        Rows per step ``b``, ``1 <= b <= n``; ``b == n`` is full-batch gradient descent.
    n_steps : int
        Number of noisy steps ``T >= 1``, fixed in advance.
    learning_rate : float
        The constant step size ``eta``.
    max_grad_norm : float
        Clipping bound ``L`` of the per-example gradients of the data term.
    smoothness : float
        Smoothness ``M >= 0`` of every per-example loss on the ball, penalty included (for
        example ``R^2 / 4 + l2`` for logistic regression with rows of norm at most ``R``).
        ``0`` is allowed for linear losses.
    radius : float
        Radius of the ball the iterates are projected onto (diameter ``D = 2 * radius``).
    strong_convexity : float, default=0.0
        Strong convexity ``m`` of every per-example loss (``l2`` when an L2 penalty
        ``(l2 / 2) ||w||^2`` covers every coordinate, intercept included; otherwise 0).
    sampling : {'fixed_size', 'full_batch'}, default='fixed_size'
        How batches are drawn. ``'poisson'`` and ``'shuffle'`` (per-epoch reshuffling) are
        rejected: the bound needs batches of exactly ``batch_size`` distinct rows drawn
        independently at every step.
    average : float, default=0.0
        Fraction of the final iterates that are averaged; must be 0 (last iterate only).

    Raises
    ------
    ValueError
        If a condition fails; the message says which and what to change.
    """
    if not _is_int(n_samples) or n_samples < 1:
        raise ValueError(f"n_samples must be a positive integer, got {n_samples!r}")
    if not _is_int(batch_size) or not 1 <= batch_size <= n_samples:
        raise ValueError(
            f"batch_size must be an integer in [1, n_samples={n_samples}], got {batch_size!r}: "
            "the last-iterate bound needs batches of exactly batch_size distinct rows. Use "
            "batch_size=n_samples for full-batch gradient descent."
        )
    if not _is_int(n_steps) or n_steps < 1:
        raise ValueError(f"n_steps must be a positive integer, got {n_steps!r}")
    if sampling == "full_batch" and batch_size != n_samples:
        raise ValueError(
            f"sampling='full_batch' needs batch_size == n_samples ({n_samples}), got {batch_size}"
        )
    if sampling in ("poisson", "shuffle"):
        why = (
            "Poisson batches can be larger than batch_size, and then a step with the fixed "
            "denominator is no longer a contraction"
            if sampling == "poisson"
            else "per-epoch reshuffling makes the batches of different steps dependent"
        )
        raise ValueError(
            f"sampling={sampling!r} voids the last-iterate bound: {why}. Draw exactly "
            "batch_size distinct rows uniformly at random at every step (sampling='fixed_size'), "
            "or use the standard accountant."
        )
    if sampling not in ("fixed_size", "full_batch"):
        raise ValueError(
            f"sampling must be 'fixed_size' or 'full_batch' for the last-iterate bound, got "
            f"{sampling!r}"
        )
    if average != 0:
        raise ValueError(
            f"average={average!r}: the last-iterate bound covers the last iterate only, and "
            "averaged iterates are provably less private. Set average=0, or use the standard "
            "accountant."
        )
    _positive_finite(
        "max_grad_norm", max_grad_norm, "Clip per-example gradients to a public bound."
    )
    _positive_finite("learning_rate", learning_rate, "Use a constant, public step size.")
    if radius is None:
        raise ValueError(
            "radius is None: the last-iterate bound needs the iterates projected onto a ball "
            "of public radius after every step. Set a radius chosen without looking at the "
            "data (the ball must contain the solutions you care about), or use the standard "
            "accountant."
        )
    _positive_finite(
        "radius",
        radius,
        "Project onto a ball of public, finite radius after every step; its diameter sets the "
        "burn-in and the plateau of the bound.",
    )
    for name, value in (("smoothness", smoothness), ("strong_convexity", strong_convexity)):
        if not (
            isinstance(value, (int, float, np.integer, np.floating))
            and 0.0 <= float(value) < math.inf
        ):
            raise ValueError(f"{name} must be non-negative and finite, got {value!r}")
    if strong_convexity > smoothness:
        raise ValueError(
            f"strong_convexity={strong_convexity} exceeds smoothness={smoothness}: a loss "
            "cannot be more strongly convex than it is smooth. Check both constants."
        )
    if smoothness > 0:
        limit = 2.0 / smoothness
        if learning_rate > limit:
            raise ValueError(
                f"learning_rate={learning_rate} is above the smoothness bound 2 / smoothness = "
                f"{limit:.6g}: the bound needs every per-example gradient step to be a "
                "contraction (AT22 Lemma 2.1). Lower learning_rate to at most "
                f"{limit:.6g}, or use the standard accountant."
            )
        if strong_convexity > 0 and learning_rate >= limit:
            raise ValueError(
                f"learning_rate={learning_rate} equals 2 / smoothness: the strongly convex "
                "bound needs a strict contraction. Lower learning_rate below "
                f"{limit:.6g} (2 / (smoothness + strong_convexity) = "
                f"{2 / (smoothness + strong_convexity):.6g} contracts best), or set "
                "strong_convexity=0."
            )


@dataclass(frozen=True)
class LastIterateRun:
    """Public description of a projected noisy SGD run whose last iterate is released.

    Everything here must be fixed without looking at the private data. Creating the object
    checks the conditions of the bound (:func:`check_last_iterate_conditions`); the module
    docstring lists what the training loop must do.

    Parameters
    ----------
    n_samples : int
        Number of rows ``n``.
    batch_size : int
        Rows per step ``b`` (exactly ``b`` distinct rows, uniformly, independently at every
        step); ``b == n`` is full-batch gradient descent.
    n_steps : int
        Number of noisy steps ``T``.
    learning_rate : float
        Constant step size ``eta``, at most ``2 / smoothness``.
    max_grad_norm : float
        Clipping bound ``L`` of per-example gradients of the data term. Under the replace-one
        relation the clipped sum moves by at most ``2 L``.
    smoothness : float
        Smoothness ``M`` of every per-example loss, penalty included.
    radius : float
        Radius of the projection ball (diameter ``D = 2 * radius``).
    strong_convexity : float, default=0.0
        Strong convexity ``m`` of every per-example loss; ``m > 0`` gives the contraction
        factor ``c = max(|1 - eta m|, |1 - eta M|) < 1`` of AT22's eq. (B.3).
    """

    n_samples: int
    batch_size: int
    n_steps: int
    learning_rate: float
    max_grad_norm: float
    smoothness: float
    radius: float
    strong_convexity: float = 0.0

    def __post_init__(self) -> None:
        check_last_iterate_conditions(
            n_samples=self.n_samples,
            batch_size=self.batch_size,
            n_steps=self.n_steps,
            learning_rate=self.learning_rate,
            max_grad_norm=self.max_grad_norm,
            smoothness=self.smoothness,
            radius=self.radius,
            strong_convexity=self.strong_convexity,
        )

    @property
    def diameter(self) -> float:
        return 2.0 * self.radius

    @property
    def sampling_rate(self) -> float:
        """Probability ``b / n`` that a given row is in a step's batch."""
        return self.batch_size / self.n_samples

    @property
    def full_batch(self) -> bool:
        return self.batch_size == self.n_samples

    @property
    def contraction(self) -> float:
        """Contraction factor ``c`` of a gradient step (1.0 without strong convexity)."""
        if self.strong_convexity <= 0:
            return 1.0
        eta = self.learning_rate
        return max(abs(1 - eta * self.strong_convexity), abs(1 - eta * self.smoothness))

    @property
    def burn_in_steps(self) -> int:
        """AT22's threshold ``ceil(D n / (L eta))`` (Theorem 3.1), convex case.

        Indicative only: the numerical bound departs from the composition bound after about 1
        to 3 times this many steps with random batches (2 times with full batches), and much
        earlier with strong convexity.
        """
        return math.ceil(self.diameter * self.n_samples / (self.max_grad_norm * self.learning_rate))


# --- the sampled Gaussian --------------------------------------------------------------------


def _log_expm1(x: np.ndarray) -> np.ndarray:
    """``log(exp(x) - 1)`` for ``x >= 0``, without overflow or cancellation."""
    with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
        big = x > 30.0
        return np.where(big, x + np.log1p(-np.exp(-np.where(big, x, 30.0))), np.log(np.expm1(x)))


def sampled_gaussian_rdp(q: float, ratio: float | np.ndarray, alpha: int) -> np.ndarray:
    """RDP of one sampled Gaussian step at an integer order, vectorised over noise ratios.

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


# --- the two RDP curves ----------------------------------------------------------------------


def _as_orders(orders: float | Sequence[float] | None) -> tuple[float, ...]:
    if orders is None:
        return DEFAULT_ORDERS
    if np.ndim(orders) == 0:
        values: tuple[float, ...] = (float(orders),)  # type: ignore[arg-type]
    else:
        values = tuple(float(a) for a in orders)  # type: ignore[union-attr]
    if not values or not all(a > 1.0 and math.isfinite(a) for a in values):
        raise ValueError(f"RDP orders must be finite and > 1, got {orders!r}")
    return values


def _check_noise(noise_multiplier: float) -> float:
    z = float(noise_multiplier)
    if not 0.0 < z < math.inf:
        raise ValueError(f"noise_multiplier must be positive and finite, got {noise_multiplier}")
    return z


def composition_rdp(
    run: LastIterateRun, noise_multiplier: float, orders: float | Sequence[float] | None = None
) -> np.ndarray:
    """Standard RDP bound: all ``T`` steps composed (holds even if every iterate is released).

    Each step is a sampled Gaussian with ratio ``z / 2`` (replace-one: the clipped sum moves by
    at most ``2 L``), so the curve is ``T * S_alpha(b/n, z/2)``, computed by dp_accounting's
    RdpAccountant. This is the first branch of AT22's (B.2)/(B.3) (the window that starts at
    step 0, where both runs share the starting point).

    For fixed-size batches under replace-one, each step's output is a mixture over which row
    the batch holds instead of the replaced one; by the joint quasi-convexity of Renyi
    divergence one step is bounded by the worst pair ``((1-q) N(0) + q N(u), (1-q) N(0) +
    q N(u'))`` with ``|u|, |u'|, |u - u'| <= 2L/b``, and the worst pair is ``u' = 0`` (checked
    numerically in ``tests/test_last_iterate.py``), which is ``S_alpha(b/n, z/2)`` in the
    standard direction. dp_accounting's add/remove accountant for a Poisson-sampled Gaussian
    with multiplier ``z/2`` computes exactly that number (its replace-one accountant only offers
    the looser Wang-Balle-Kasiviswanathan bound for this sampling).

    Parameters
    ----------
    run : LastIterateRun
        The run.
    noise_multiplier : float
        ``z``: noise std on the clipped gradient sum divided by ``max_grad_norm``.
    orders : float or sequence of float, optional
        RDP orders (default :data:`DEFAULT_ORDERS`).

    Returns
    -------
    ndarray
        RDP at each order.
    """
    orders_t = _as_orders(orders)
    ratio = _check_noise(noise_multiplier) / 2.0
    step: dp_accounting.DpEvent = dp_accounting.GaussianDpEvent(ratio)
    if not run.full_batch:
        step = dp_accounting.PoissonSampledDpEvent(run.sampling_rate, step)
    with quiet_accounting_logs():
        accountant = rdp_privacy_accountant.RdpAccountant(
            list(orders_t), dp_accounting.NeighboringRelation.ADD_OR_REMOVE_ONE
        )
        accountant.compose(dp_accounting.SelfComposedDpEvent(step, run.n_steps))
        return accountant.rdp


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
        q_term = sampled_gaussian_rdp(run.sampling_rate, ratio2, int(alpha))
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
    (:func:`sampled_gaussian_rdp`). Valid for all orders and noise levels (AT22 Remark B.1).

    This branch is *not* by itself a bound below the composition one: take the per-order
    minimum with :func:`composition_rdp` (as :func:`last_iterate_guarantee` does).

    Parameters
    ----------
    run : LastIterateRun
        The run.
    noise_multiplier : float
        ``z``: noise std on the clipped gradient sum divided by ``max_grad_norm``.
    orders : float or sequence of float, optional
        RDP orders (default :data:`DEFAULT_ORDERS`).

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
    orders_arr = np.asarray(_as_orders(orders))
    z = _check_noise(noise_multiplier)
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
