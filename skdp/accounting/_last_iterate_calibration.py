"""The reported last-iterate guarantee and noise calibration for it.

The guarantee is the per-order minimum of AT22's last-iterate bound and the standard composition
bound (both in ``_last_iterate.py``), converted to (epsilon, delta) with dp_accounting; the
calibration finds the smallest noise multiplier meeting a target, with the same search and the
same promise as :func:`~skdp.accounting.calibrate` (never above the target, at most 0.5% below).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from dataclasses import dataclass

import dp_accounting
import numpy as np
from dp_accounting.rdp import rdp_privacy_accountant

from ._calibration import (
    EPS_RTOL,
    SIGMA_MAX,
    SIGMA_MIN,
    UnreachablePrivacyTarget,
    find_sigma,
    initial_guess,
)
from ._last_iterate import composition_rdp
from ._last_iterate_bounds import last_iterate_rdp
from ._last_iterate_run import LastIterateRun
from ._plan import NeighboringRelation, PrivacyPlan, Sampling
from ._rdp_curve import RdpCurve
from ._rdp_orders import as_orders as _as_orders
from ._report import last_iterate_lines

__all__ = [
    "LastIterateCalibration",
    "LastIterateGuarantee",
    "last_iterate_guarantee",
    "calibrate_last_iterate",
]


@dataclass(frozen=True)
class LastIterateGuarantee:
    """The privacy of releasing the last iterate of a run at one noise level.

    Attributes
    ----------
    run : LastIterateRun
        The run.
    noise_multiplier : float
        ``z``: noise std on the clipped gradient sum divided by ``max_grad_norm``.
    epsilon, delta : float
        The (epsilon, delta)-DP guarantee, replace-one relation, from the RDP curve below with
        dp_accounting's conversion.
    binding : {'last_iterate', 'standard'}
        Which bound gives the curve at the order that sets epsilon: AT22's last-iterate branch,
        or the standard composition of all steps (before the burn-in).
    orders, rdp : tuple of float
        The RDP curve (per-order minimum of both bounds), for composing this fit with others
        in a ledger.
    optimal_order : float
        The order at which epsilon is attained.
    composition_epsilon : float
        Epsilon of the standard composition bound alone, for comparison.
    neighboring_relation : NeighboringRelation
        Always replace-one (the bound needs fixed-size batches and a public n).
    """

    run: LastIterateRun
    noise_multiplier: float
    epsilon: float
    delta: float
    binding: str
    orders: tuple[float, ...]
    rdp: tuple[float, ...]
    optimal_order: float
    composition_epsilon: float
    neighboring_relation: NeighboringRelation = NeighboringRelation.REPLACE_ONE

    @property
    def noise_std(self) -> float:
        """Noise standard deviation on each coordinate of the clipped gradient sum."""
        return self.noise_multiplier * self.run.max_grad_norm

    @property
    def batch_noise_std(self) -> float:
        """AT22's ``sigma``: noise std on the batch-mean gradient, ``z L / b``."""
        return self.noise_std / self.run.batch_size


@dataclass(frozen=True)
class LastIterateCalibration:
    """The outcome of calibrating a last-iterate run: what the estimators' fit flow records.

    The counterpart of :class:`~skdp.accounting.Calibration` for ``accountant='last_iterate'``
    (same ``noise_multiplier``, ``epsilon``, ``delta``, ``is_private`` and ``accountant``), with
    the proven guarantee attached.

    Attributes
    ----------
    run : LastIterateRun
        The run that was calibrated.
    guarantee : LastIterateGuarantee or None
        The guarantee at the calibrated noise (its RDP curve, the binding bound, ...); ``None``
        for a non-private run (``privacy=(inf, 0)``: no noise, no clipping).
    """

    run: LastIterateRun
    guarantee: LastIterateGuarantee | None
    accountant: str = "last_iterate"
    neighboring_relation: NeighboringRelation = NeighboringRelation.REPLACE_ONE

    @classmethod
    def calibrate(cls, run: LastIterateRun, epsilon: float, delta: float) -> LastIterateCalibration:
        """Calibrate ``run`` to ``(epsilon, delta)`` (:func:`calibrate_last_iterate`)."""
        return cls(run, calibrate_last_iterate(run, epsilon, delta))

    @classmethod
    def non_private(cls, run: LastIterateRun) -> LastIterateCalibration:
        return cls(run, None)

    @property
    def is_private(self) -> bool:
        return self.guarantee is not None

    @property
    def noise_multiplier(self) -> float:
        return self.guarantee.noise_multiplier if self.guarantee is not None else 0.0

    @property
    def epsilon(self) -> float:
        return self.guarantee.epsilon if self.guarantee is not None else math.inf

    @property
    def delta(self) -> float:
        return self.guarantee.delta if self.guarantee is not None else 0.0

    @property
    def spend(self):
        """What the fit spends, as a ledger composes it: no DpEvent describes this bound (the
        standard one would not describe the release once the last-iterate bound binds), so it
        is the RDP curve that was proven, under the replace-one relation."""
        if self.guarantee is None:
            return dp_accounting.NonPrivateDpEvent()
        return RdpCurve(self.guarantee.orders, self.guarantee.rdp)

    def statement_lines(self, **facts) -> list[str]:
        """The lines of ``privacy_report()`` after its first (see
        :func:`~skdp.accounting.privacy_statement`)."""
        return last_iterate_lines(self, **facts)


def last_iterate_guarantee(
    run: LastIterateRun,
    noise_multiplier: float,
    delta: float,
    orders: float | Sequence[float] | None = None,
) -> LastIterateGuarantee:
    """(epsilon, delta) of the last iterate: the better of AT22's bound and composition.

    Both RDP curves bound the same mechanism (the last iterate, a post-processing of the whole
    trajectory), so their per-order minimum is a valid RDP curve; converting it gives
    ``min_alpha conv(min(std, AT)(alpha)) = min(eps_std, eps_AT)`` since the two minimisations
    commute. Taking the minimum per order rather than of two epsilons is equally tight and
    keeps a single curve that a ledger can compose. (A PLD epsilon is not used: dp_accounting
    has no PLD for fixed-size batches under replace-one, and the worst pair of a step may change
    direction from step to step, which PLD composition of one pair does not cover.)

    Parameters
    ----------
    run : LastIterateRun
        The run.
    noise_multiplier : float
        ``z``: noise std on the clipped gradient sum divided by ``max_grad_norm``.
    delta : float
        Target delta in (0, 1).
    orders : float or sequence of float, optional
        RDP orders (default :data:`DEFAULT_ORDERS`).

    Returns
    -------
    LastIterateGuarantee
    """
    if not 0.0 < delta < 1.0:
        raise ValueError(f"delta must be in (0, 1), got {delta}")
    orders_t = _as_orders(orders)
    standard = composition_rdp(run, noise_multiplier, orders_t)
    window = last_iterate_rdp(run, noise_multiplier, orders_t)
    curve = np.minimum(standard, window)
    epsilon, order = rdp_privacy_accountant.compute_epsilon(orders_t, curve, delta)
    composition_epsilon, _ = rdp_privacy_accountant.compute_epsilon(orders_t, standard, delta)
    i = orders_t.index(float(order))
    return LastIterateGuarantee(
        run=run,
        noise_multiplier=float(noise_multiplier),
        epsilon=float(epsilon),
        delta=float(delta),
        binding="last_iterate" if window[i] < standard[i] else "standard",
        orders=orders_t,
        rdp=tuple(float(r) for r in curve),
        optimal_order=float(order),
        composition_epsilon=float(composition_epsilon),
    )


def _start(run: LastIterateRun, epsilon: float, delta: float) -> float:
    """Starting noise for the search: the Gaussian-DP estimate of composition over the steps
    that matter, about three burn-ins at most (replace-one doubles the add/remove noise)."""
    steps = min(run.n_steps, 3 * run.burn_in_steps)
    if run.contraction < 1.0:
        steps = min(steps, max(1, math.ceil(3.0 / -math.log(max(run.contraction, 1e-12)))))
    sampling = Sampling.FULL_BATCH if run.full_batch else Sampling.POISSON
    plan = PrivacyPlan.constant(steps, run.sampling_rate, sampling)
    return 2.0 * initial_guess(plan, epsilon, delta)


def calibrate_last_iterate(
    run: LastIterateRun,
    epsilon: float,
    delta: float,
    orders: float | Sequence[float] | None = None,
) -> LastIterateGuarantee:
    """Smallest noise multiplier whose last iterate is ``(epsilon, delta)``-DP.

    The same safeguarded secant search as :func:`~skdp.accounting.calibrate`: the returned
    guarantee's epsilon is never above the target and at most 0.5% below it. (One exception:
    a target below what any RDP order can convert is met only through dp_accounting's
    total-variation shortcut, with epsilon 0 and enormous noise.) Results are cached (they
    depend on public inputs only).

    Parameters
    ----------
    run : LastIterateRun
        The run.
    epsilon : float
        Target epsilon, positive and finite.
    delta : float
        Target delta in (0, 1).
    orders : float or sequence of float, optional
        RDP orders of the returned curve (default :data:`DEFAULT_ORDERS`).

    Returns
    -------
    LastIterateGuarantee
        ``noise_multiplier`` is the noise to train with (std ``noise_multiplier *
        max_grad_norm`` on the clipped sum); ``rdp`` is the curve to record in a ledger.

    Raises
    ------
    UnreachablePrivacyTarget
        If no noise level reaches the target.

    Examples
    --------
    >>> from skdp.accounting import LastIterateRun, calibrate_last_iterate
    >>> run = LastIterateRun(n_samples=10_000, batch_size=100, n_steps=100_000,
    ...                      learning_rate=4.0, max_grad_norm=1.0, smoothness=0.25, radius=1.0)
    >>> g = calibrate_last_iterate(run, epsilon=1.0, delta=1e-5)
    >>> g.binding, 0.995 <= g.epsilon <= 1.0
    ('last_iterate', True)
    """
    return _calibrate(run, float(epsilon), float(delta), _as_orders(orders))


@functools.lru_cache(maxsize=256)
def _calibrate(
    run: LastIterateRun, epsilon: float, delta: float, orders: tuple[float, ...]
) -> LastIterateGuarantee:
    if not 0.0 < epsilon < math.inf:
        raise ValueError(f"epsilon must be positive and finite to calibrate, got {epsilon}")
    if not 0.0 < delta < 1.0:
        raise ValueError(f"delta must be in (0, 1), got {delta}")
    seen: dict[float, LastIterateGuarantee] = {}

    def guarantee_at(z: float) -> LastIterateGuarantee:
        if z not in seen:
            seen[z] = last_iterate_guarantee(run, z, delta, orders)
        return seen[z]

    def smooth_eps(z: float) -> float:
        g = guarantee_at(z)
        return _smooth_epsilon(g.orders, g.rdp, delta)

    try:
        z, _, _ = find_sigma(smooth_eps, epsilon, _start(run, epsilon, delta), rtol=EPS_RTOL)
    except UnreachablePrivacyTarget:
        z = _total_variation_route(guarantee_at, epsilon)
        if z is None:
            raise UnreachablePrivacyTarget(
                f"no noise multiplier up to {SIGMA_MAX:g} reaches ({epsilon:g}, {delta:g})-DP "
                f"for the last iterate of this run: RDP orders up to {max(orders):g} cannot "
                "convert the remaining RDP into so small an epsilon. Increase epsilon or delta."
            ) from None
    guarantee = guarantee_at(z)
    # The search only returns feasible points; the check guards the promise made to users.
    if guarantee.epsilon > epsilon:
        raise RuntimeError(
            f"calibration overshot: epsilon {guarantee.epsilon} > target {epsilon}; please "
            "report this bug"
        )
    return guarantee


def _smooth_epsilon(orders: Sequence[float], rdp: Sequence[float], delta: float) -> float:
    """dp_accounting's RDP-to-DP conversion without its total-variation shortcut.

    ``compute_epsilon`` returns 0 as soon as one order's RDP is below about ``delta^2`` (the
    KL divergence then bounds the total variation by ``delta``), so epsilon jumps to 0 as the
    noise grows and a secant search cannot land near the target. The continuous part,
    ``min_alpha rdp + log1p(-1/alpha) - log(delta alpha)/(alpha - 1)`` over ``alpha > 1.01``
    (Canonne, Kamath & Steinke 2020, Prop. 12; the same orders as dp_accounting), is never below
    the reported epsilon, so searching on it keeps the reported epsilon <= target.
    """
    a = np.asarray(orders, dtype=float)
    r = np.asarray(rdp, dtype=float)
    with np.errstate(invalid="ignore"):
        values = r + np.log1p(-1.0 / a) - np.log(delta * a) / (a - 1.0)
    values = np.where((a > 1.01) & (r >= 0), values, np.inf)
    return max(0.0, float(np.min(values)))


def _total_variation_route(guarantee_at, epsilon: float) -> float | None:
    """Smallest noise whose epsilon is <= target through dp_accounting's total-variation
    shortcut alone (epsilon 0 once some order's RDP is below ~delta^2), or ``None``.

    Reached only for targets below what any order can convert, with enormous noise; epsilon is
    then 0, below the usual 0.5% window.
    """
    if guarantee_at(SIGMA_MAX).epsilon > epsilon:
        return None
    lo, hi = math.log(SIGMA_MIN), math.log(SIGMA_MAX)  # lo infeasible, hi feasible
    if guarantee_at(SIGMA_MIN).epsilon <= epsilon:
        return SIGMA_MIN
    while hi - lo > 1e-7:
        mid = (lo + hi) / 2
        if guarantee_at(math.exp(mid)).epsilon <= epsilon:
            hi = mid
        else:
            lo = mid
    return math.exp(hi)
