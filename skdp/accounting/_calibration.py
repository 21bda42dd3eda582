"""Calibration: the smallest noise scale for which a plan meets a target (epsilon, delta)."""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import dp_accounting
from dp_accounting import mechanism_calibration

from ._accountants import (
    ACCOUNTANTS,
    COARSE_PLD_INTERVAL,
    FINE_PLD_INTERVAL,
    epsilon_of,
    make_accountant,
    quiet_accounting_logs,
)
from ._plan import PrivacyPlan

__all__ = ["Calibration", "calibrate", "UnreachablePrivacyTarget"]

# The noise scales searched. Below the lower end a Gaussian step gives almost no privacy; above
# the upper end the run is pure noise and no accountant answer is worth training for.
_SIGMA_MIN, _SIGMA_MAX = 1e-3, 1e5
# Relative precision in sigma: the calibrated epsilon lands within about 0.5% below the target.
_SIGMA_RTOL = 2e-3


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
    """

    plan: PrivacyPlan
    noise_multiplier: float
    epsilon: float
    delta: float
    accountant: str

    @property
    def is_private(self) -> bool:
        return self.noise_multiplier > 0.0

    @property
    def dp_event(self) -> dp_accounting.DpEvent:
        if not self.is_private:
            return dp_accounting.NonPrivateDpEvent()
        return self.plan.dp_event(self.noise_multiplier)

    @classmethod
    def non_private(cls, plan: PrivacyPlan) -> Calibration:
        return cls(plan, 0.0, math.inf, 0.0, "none")


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


def _initial_guess(plan: PrivacyPlan, epsilon: float, delta: float) -> float:
    # Moments-accountant heuristic (Abadi et al.), only used to start the bracket search.
    q = max(group.sampling_rate for group in plan.groups)
    guess = q * math.sqrt(plan.n_steps * math.log(1.0 / delta)) / max(epsilon, 1e-6)
    return min(max(guess, 0.5), 1e3)


def _bracket(eps_fn, target: float, start: float) -> tuple[float, float]:
    """(lo, hi) with eps(lo) > target >= eps(hi), by doubling or halving from ``start``."""
    sigma = start
    if eps_fn(sigma) <= target:
        while True:
            lower = sigma / 2.0
            if lower < _SIGMA_MIN:
                return _SIGMA_MIN, sigma
            if eps_fn(lower) > target:
                return lower, sigma
            sigma = lower
    while True:
        upper = sigma * 2.0
        if upper > _SIGMA_MAX:
            raise UnreachablePrivacyTarget(
                f"no noise level up to {_SIGMA_MAX:g} reaches the target; the plan has too many "
                "steps or too high a sampling rate for this epsilon. Increase epsilon or delta, or "
                "train for fewer epochs or with smaller batches."
            )
        if eps_fn(upper) <= target:
            return sigma, upper
        sigma = upper


def _refine(
    target: float,
    lo: float,
    hi: float,
    delta: float,
    accountant: str,
    plan: PrivacyPlan,
    pld_interval: float,
) -> float:
    """Largest-privacy-within-budget sigma in [lo, hi], never over the target."""
    if hi <= _SIGMA_MIN:
        return hi
    with quiet_accounting_logs():
        return float(
            mechanism_calibration.calibrate_dp_mechanism(
                make_fresh_accountant=functools.partial(
                    make_accountant,
                    accountant,
                    plan.neighboring_relation,
                    pld_interval=pld_interval,
                ),
                make_event_from_param=plan.dp_event,
                target_epsilon=target,
                target_delta=delta,
                bracket_interval=mechanism_calibration.ExplicitBracketInterval(lo, hi),
                tol=_SIGMA_RTOL * lo,
            )
        )


@functools.lru_cache(maxsize=512)
def calibrate(
    plan: PrivacyPlan, epsilon: float, delta: float, accountant: str = "pld"
) -> Calibration:
    """Find the smallest noise scale for which ``plan`` is ``(epsilon, delta)``-DP.

    The search brackets the answer with a coarse (fast, still pessimistic) PLD, then finishes
    with Brent's method on a fine PLD; with ``accountant='rdp'`` both stages use RDP. The
    returned epsilon is recomputed by the fine accountant on the final plan and is never above
    ``epsilon``. Results are cached: calibration depends only on public inputs.

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
    """
    if accountant not in ACCOUNTANTS:
        raise ValueError(f"accountant must be one of {ACCOUNTANTS}, got {accountant!r}")
    if not (0.0 < epsilon < math.inf):
        raise ValueError(f"epsilon must be positive and finite to calibrate, got {epsilon}")
    if not 0.0 < delta < 1.0:
        raise ValueError(f"delta must be in (0, 1), got {delta}")

    if accountant == "pld":
        coarse = _epsilon_function(plan, delta, "pld", COARSE_PLD_INTERVAL)
        fine = _epsilon_function(plan, delta, "pld", FINE_PLD_INTERVAL)
        lo, hi = _bracket(coarse, epsilon, _initial_guess(plan, epsilon, delta))
        # A finer PLD is usually tighter, so the fine answer lies at or below the coarse one:
        # re-establish the bracket for the fine accountant, starting from the coarse upper end.
        lo, hi = _bracket_near(fine, epsilon, hi)
        interval = FINE_PLD_INTERVAL
    else:
        fine = _epsilon_function(plan, delta, "rdp", FINE_PLD_INTERVAL)
        lo, hi = _bracket(fine, epsilon, _initial_guess(plan, epsilon, delta))
        interval = FINE_PLD_INTERVAL
    sigma = _refine(epsilon, lo, hi, delta, accountant, plan, interval)
    spent = fine(sigma)
    # calibrate_dp_mechanism guarantees this; the check guards the promise we make to users.
    if spent > epsilon:
        raise RuntimeError(
            f"calibration overshot: epsilon {spent} > target {epsilon}; please report this bug"
        )
    return Calibration(plan, sigma, spent, delta, accountant)


def _bracket_near(eps_fn, target: float, start: float) -> tuple[float, float]:
    """Like :func:`_bracket` but with small steps, for a start that is already close."""
    sigma = start
    if eps_fn(sigma) > target:
        while eps_fn(sigma * 1.05) > target:
            sigma *= 1.05
            if sigma > _SIGMA_MAX:
                raise UnreachablePrivacyTarget("no noise level reaches the target")
        return sigma, sigma * 1.05
    factor = 0.9
    while True:
        lower = sigma * factor
        if lower < _SIGMA_MIN:
            return _SIGMA_MIN, sigma
        if eps_fn(lower) > target:
            return lower, sigma
        sigma = lower
        factor = max(factor * 0.8, 0.5)
