"""Calibration: the smallest noise scale for which a plan meets a target (epsilon, delta)."""

from __future__ import annotations

import dataclasses
import functools
import math
from dataclasses import dataclass

import dp_accounting
from scipy import optimize, special

from ._accountants import (
    ACCOUNTANTS,
    epsilon_of,
    pld_intervals,
)
from ._plan import NeighboringRelation, PrivacyPlan
from ._report import standard_lines

__all__ = ["Calibration", "calibrate", "UnreachablePrivacyTarget"]

# The noise scales searched. Below the lower end a Gaussian step gives almost no privacy; above
# the upper end the run is pure noise and no accountant answer is worth training for.
SIGMA_MIN, SIGMA_MAX = 1e-3, 1e5
# The calibrated epsilon lands in [target * (1 - EPS_RTOL), target].
EPS_RTOL = 5e-3


class UnreachablePrivacyTarget(ValueError):
    """The requested (epsilon, delta) cannot be met by any noise level for this plan."""


@dataclass(frozen=True)
class Calibration:
    """The outcome of calibrating a plan: a noise scale and the guarantee it proves.

    Attributes
    ----------
    plan : PrivacyPlan
        The plan that was calibrated.
    noise_multiplier : float
        The overall noise scale ``sigma`` (``0.0`` for a non-private run).
    epsilon, delta : float
        The guarantee of the calibrated run, from the accountant; ``epsilon`` never exceeds the
        target.
    accountant : str
        ``'pld'`` or ``'rdp'`` (``'none'`` for a non-private run).
    pld_interval : float or None
        The PLD value discretisation that computed ``epsilon`` (``None`` unless
        ``accountant='pld'``), so that anyone can reproduce the number exactly.
    """

    plan: PrivacyPlan
    noise_multiplier: float
    epsilon: float
    delta: float
    accountant: str
    pld_interval: float | None = None

    @property
    def is_private(self) -> bool:
        return self.noise_multiplier > 0.0

    @property
    def dp_event(self) -> dp_accounting.DpEvent:
        if not self.is_private:
            return dp_accounting.NonPrivateDpEvent()
        return self.plan.dp_event(self.noise_multiplier)

    @property
    def spend(self) -> dp_accounting.DpEvent:
        """What the run spends, as a ledger composes it (and ``dp_event_`` records)."""
        return self.dp_event

    @property
    def neighboring_relation(self) -> NeighboringRelation:
        return self.plan.neighboring_relation

    def alone(self, own_priors: tuple[float, ...] = ()) -> Calibration:
        """The run without the mechanisms it was composed after (a private pipeline's
        preprocessing), with its own earlier searches ``own_priors``: its epsilon alone at the
        same delta and noise."""
        if not self.is_private:
            return self
        own = self.plan.without_priors().with_priors(own_priors)
        kwargs = {} if self.pld_interval is None else {"pld_interval": self.pld_interval}
        epsilon = epsilon_of(
            own.dp_event(self.noise_multiplier), self.delta, self.accountant,
            own.neighboring_relation, **kwargs,
        )
        return dataclasses.replace(self, plan=own, epsilon=epsilon)

    def statement_lines(self, **facts) -> list[str]:
        """The lines of ``privacy_report()`` after its first (see
        :func:`~skdp.accounting.privacy_statement`)."""
        return standard_lines(self, **facts)

    @classmethod
    def non_private(cls, plan: PrivacyPlan) -> Calibration:
        return cls(plan, 0.0, math.inf, 0.0, "none")


def check_calibration_target(epsilon: float, delta: float, accountant: str) -> None:
    """Refuse a target no calibration can meet, or an accountant skdp does not have."""
    if accountant not in ACCOUNTANTS:
        raise ValueError(f"accountant must be one of {ACCOUNTANTS}, got {accountant!r}")
    if not (0.0 < epsilon < math.inf):
        raise ValueError(f"epsilon must be positive and finite to calibrate, got {epsilon}")
    if not 0.0 < delta < 1.0:
        raise ValueError(f"delta must be in (0, 1), got {delta}")


def _epsilon_function(plan: PrivacyPlan, delta: float, accountant: str, pld_interval: float):
    def eps(sigma: float) -> float:
        return epsilon_of(
            plan.dp_event(sigma),
            delta,
            accountant,
            plan.neighboring_relation,
            pld_interval=pld_interval,
        )

    return eps


def initial_guess(plan: PrivacyPlan, epsilon: float, delta: float) -> float:
    """A close starting point from the central-limit (Gaussian DP) approximation of DP-SGD.

    The approximation (Bu, Dong, Long & Su) slightly underestimates epsilon, so it is only used
    to start the search; the accountants decide.
    """
    def gdp_delta(mu: float) -> float:
        return float(
            special.ndtr(-epsilon / mu + mu / 2)
            - math.exp(epsilon) * special.ndtr(-epsilon / mu - mu / 2)
        )

    try:
        mu = optimize.brentq(lambda m: gdp_delta(m) - delta, 1e-6, 1e3)
    except ValueError:
        return 1.0
    # mu = q sqrt(sum_t (exp(1 / sigma_t^2) - 1)) for the steps' noise multipliers sigma_t.
    q = max(group.sampling_rate for group in plan.groups)
    weighted = sum(g.count / g.relative_noise**2 for g in plan.groups) / plan.n_steps
    ratio = (mu / (q * math.sqrt(plan.n_steps))) ** 2
    sigma = 1.0 / math.sqrt(max(math.log1p(ratio) / weighted, 1e-12))
    return min(max(sigma, SIGMA_MIN), SIGMA_MAX)


def find_sigma(
    eps_fn, target: float, start: float, rtol: float, slope: float = -1.5
) -> tuple[float, float, float]:
    """Smallest-noise sigma whose epsilon lies in [target * (1 - rtol), target].

    epsilon falls smoothly and monotonically with sigma, nearly linearly in log-log coordinates,
    so a safeguarded secant in (log sigma, log epsilon) converges in a few evaluations: first
    extrapolate until the target is bracketed, then regula falsi (Illinois) inside the bracket.
    Returns ``(sigma, epsilon(sigma), slope)``; ``epsilon(sigma) <= target`` always.
    """
    aim = math.log(target) + math.log1p(-rtol / 2)  # aim inside the acceptance window
    lo = hi = None  # (log sigma, log eps): lo infeasible (eps > target), hi feasible
    x = math.log(min(max(start, SIGMA_MIN), SIGMA_MAX))
    previous = None
    side = 0
    for _ in range(60):
        eps = eps_fn(math.exp(x))
        fx = math.log(eps) if eps > 0 else -50.0
        if previous is not None and x != previous[0]:
            secant = (fx - previous[1]) / (x - previous[0])
            if secant < 0:
                slope = secant
        previous = (x, fx)
        if eps <= target:
            if eps == 0.0 and lo is not None:
                # RDP's conversion levels off at log(1/delta) / (largest order - 1) and then
                # drops to 0 where the orders' values underflow: a target below that floor is
                # only "met" by that numerical cliff, which proves nothing useful.
                raise UnreachablePrivacyTarget(
                    f"this accountant cannot prove epsilon <= {target:g} at this delta: its bound "
                    f"levels off near {math.exp(lo[1]):.3g} however large the noise. Use "
                    "accountant='pld' (no such floor), or a larger epsilon or delta."
                )
            hi = (x, fx, eps)
            if eps >= target * (1 - rtol) or x <= math.log(SIGMA_MIN):
                return math.exp(x), eps, slope
            side_now = 1
        else:
            lo = (x, fx)
            if x >= math.log(SIGMA_MAX):
                raise UnreachablePrivacyTarget(
                    f"no noise level up to {SIGMA_MAX:g} reaches the target; the plan has too "
                    "many steps or too high a sampling rate for this epsilon. Increase epsilon "
                    "or delta, or train for fewer epochs or with smaller batches."
                )
            side_now = -1
        if lo is not None and hi is not None:
            if hi[0] - lo[0] < 1e-6:
                return math.exp(hi[0]), hi[2], slope
            f_lo, f_hi = lo[1] - aim, hi[1] - aim
            # Illinois: when the same end moves twice, halve the other end's weight.
            if side_now == side == 1:
                f_lo /= 2
            elif side_now == side == -1:
                f_hi /= 2
            x = lo[0] + (hi[0] - lo[0]) * f_lo / (f_lo - f_hi)
            x = min(max(x, lo[0] + 0.01 * (hi[0] - lo[0])), hi[0] - 0.01 * (hi[0] - lo[0]))
        else:
            step = (aim - fx) / slope
            x = x + min(max(step, -math.log(4.0)), math.log(4.0))
            x = min(max(x, math.log(SIGMA_MIN)), math.log(SIGMA_MAX))
        side = side_now
    raise RuntimeError("noise calibration did not converge; please report this bug")


@functools.lru_cache(maxsize=512)
def calibrate(
    plan: PrivacyPlan, epsilon: float, delta: float, accountant: str = "pld"
) -> Calibration:
    """Find the smallest noise scale for which ``plan`` is ``(epsilon, delta)``-DP.

    A secant search in log-log coordinates first gets close with a coarse PLD (fast, and still
    a valid upper bound), then finishes with a fine PLD; with ``accountant='rdp'`` it runs on
    RDP alone. The returned epsilon is the fine accountant's value for the returned noise
    scale: it is never above ``epsilon`` and at most 0.5% below it. Results are cached:
    calibration depends only on public inputs.

    Parameters
    ----------
    plan : PrivacyPlan
        The run to calibrate.
    epsilon : float
        Target epsilon, positive and finite.
    delta : float
        Target delta, in (0, 1).
    accountant : {'pld', 'rdp'}, default='pld'
        The accountant that proves the guarantee.

    Returns
    -------
    Calibration
        The noise multiplier, the epsilon it proves and how it was computed.

    Raises
    ------
    UnreachablePrivacyTarget
        When no noise level up to 1e5 meets the target.

    Examples
    --------
    Adult's default fit: 20 epochs of 32 Poisson-sampled steps at rate 1018 / 32561.

    >>> from skdp.accounting import PrivacyPlan, calibrate
    >>> cal = calibrate(PrivacyPlan.constant(640, 1018 / 32561), 1.0, 1e-5)
    >>> round(cal.noise_multiplier, 3), round(cal.epsilon, 4), cal.accountant
    (3.103, 0.9976, 'pld')
    """
    check_calibration_target(epsilon, delta, accountant)

    # Discretisation relative to the target: the same relative precision at every epsilon
    # (every interval gives a valid, pessimistic bound).
    coarse_interval, fine_interval = pld_intervals(epsilon)
    fine = _epsilon_function(plan, delta, accountant, fine_interval)
    start, slope = initial_guess(plan, epsilon, delta), -1.5
    if accountant == "pld":
        # A coarse PLD (fast, still a valid upper bound) gets close; the fine one finishes.
        coarse = _epsilon_function(plan, delta, "pld", coarse_interval)
        start, _, slope = find_sigma(coarse, epsilon, start, rtol=0.05, slope=slope)
    sigma, spent, _ = find_sigma(fine, epsilon, start, rtol=EPS_RTOL, slope=slope)
    # find_sigma only returns feasible points; the check guards the promise made to users.
    if spent > epsilon:
        raise RuntimeError(
            f"calibration overshot: epsilon {spent} > target {epsilon}; please report this bug"
        )
    return Calibration(
        plan, sigma, spent, delta, accountant, fine_interval if accountant == "pld" else None
    )


