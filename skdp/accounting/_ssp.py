"""Accounting of sufficient-statistics perturbation (AdaSSP): three Gaussian releases.

AdaSSP (Wang, UAI 2018; ``docs/specs/adassp.md``) reads the data once and releases three
statistics of the clipped rows through Gaussian mechanisms: the smallest eigenvalue of
``X^T X``, ``X^T X`` itself and ``X^T y``. Nothing is sampled, so the fit is
``ComposedDpEvent([GaussianDpEvent(m_lambda), GaussianDpEvent(m_gram), GaussianDpEvent(m_cross)])``
with ``m_i = sigma_i / Delta_i`` (spec §4.1). The three multipliers share one scale ``s``:
``m_i = s * w_i`` for public weights ``w`` (the budget split), and ``s`` is calibrated jointly,
together with any Gaussian mechanisms a private pipeline ran before (spec §4.2). Unsampled
Gaussians compose exactly into one Gaussian with ``m_eff^-2 = sum_i m_i^-2``, so the scale has a
closed form from the analytic Gaussian mechanism; the PLD accountant then checks it (and is
what ``privacy_spent_`` reports), nudging ``s`` up if its discretisation needs it.

The neighbouring relation enters through the sensitivities only (spec §4.3): the event is
always composed under add/remove, with ``m = sigma / Delta_relation``.
"""

from __future__ import annotations

import dataclasses
import functools
import math
from dataclasses import dataclass

import dp_accounting
from dp_accounting.gaussian_mechanism import get_sigma_gaussian

from ._accountants import FINEST_RELATIVE, epsilon_of, pld_intervals
from ._calibration import (
    Calibration,
    UnreachablePrivacyTarget,
    check_calibration_target,
    find_sigma,
)
from ._plan import NeighboringRelation

__all__ = [
    "SSP_RELEASES",
    "BUDGET_SPLITS",
    "SSPPlan",
    "SSPSensitivities",
    "calibrate_ssp",
    "resolve_budget_split",
    "ssp_sensitivities",
]

#: The releases, in the order of the event and of the noise draws (spec §5).
SSP_RELEASES = ("lambda_min", "gram", "cross")

#: Named budget splits: relative noise multipliers in the order of :data:`SSP_RELEASES`.
#: 'equal' is the paper's (equal (eps/3, delta/3) charges mean equal multipliers);
#: 'autodp' is the author's later tutorials' noise ratio X^T X : X^T y : lambda_min = 2 : 3 : 5.
BUDGET_SPLITS = {"equal": (1.0, 1.0, 1.0), "autodp": (5.0, 2.0, 3.0)}


def resolve_budget_split(budget_split) -> tuple[float, float, float]:
    """``'equal'``, ``'autodp'`` or three positive weights -> relative noise multipliers."""
    if isinstance(budget_split, str):
        if budget_split not in BUDGET_SPLITS:
            raise ValueError(
                f"optimizer_params['budget_split'] must be one of {sorted(BUDGET_SPLITS)} or "
                f"three positive weights, got {budget_split!r}"
            )
        return BUDGET_SPLITS[budget_split]
    try:
        weights = tuple(float(w) for w in budget_split)
    except (TypeError, ValueError):
        weights = ()
    if len(weights) != 3 or not all(0.0 < w < math.inf for w in weights):
        raise ValueError(
            "optimizer_params['budget_split'] must be 'equal', 'autodp' or three positive "
            "finite weights (relative noise multipliers of lambda_min, X^T X and X^T y), got "
            f"{budget_split!r}"
        )
    return weights  # type: ignore[return-value]


@dataclass(frozen=True)
class SSPSensitivities:
    """L2 sensitivities of the three releases (spec §2), for rows of norm at most ``B`` (the
    augmented bound, intercept column included) and targets of norm at most ``B_y``."""

    lambda_min: float
    gram: float
    cross: float

    def as_tuple(self) -> tuple[float, float, float]:
        return (self.lambda_min, self.gram, self.cross)


def ssp_sensitivities(
    row_bound: float,
    target_bound: float,
    relation: NeighboringRelation = NeighboringRelation.ADD_OR_REMOVE_ONE,
) -> SSPSensitivities:
    """Spec §2: add/remove ``(B^2, B^2, B B_y)``; replace-one ``(B^2, sqrt(2) B^2, 2 B B_y)``.

    ``X^T X`` is released as a symmetric matrix: the Frobenius norm of ``x x^T`` is
    ``||x||^2``, and the upper triangle alone has the same worst case (an axis-aligned row), so
    the duplicated off-diagonals change nothing (spec §3).
    """
    square = row_bound**2
    if NeighboringRelation(relation) is NeighboringRelation.REPLACE_ONE:
        return SSPSensitivities(square, math.sqrt(2.0) * square, 2.0 * row_bound * target_bound)
    return SSPSensitivities(square, square, row_bound * target_bound)


@dataclass(frozen=True)
class SSPPlan:
    """The public layout of an AdaSSP fit: three unsampled Gaussian releases at one scale.

    Duck-types :class:`PrivacyPlan` where the shared fit flow and private pipelines use it
    (``dp_event``, ``with_priors``, ``without_priors``, ``neighboring_relation``).

    Parameters
    ----------
    weights : tuple of 3 floats, default=(1, 1, 1)
        Relative noise multipliers of ``lambda_min``, ``X^T X`` and ``X^T y``.
    neighboring_relation : NeighboringRelation, default=ADD_OR_REMOVE_ONE
        The relation the sensitivities are taken for (the event itself is always composed
        under add/remove, spec §4.3).
    prior_noise_multipliers : tuple of float, default=()
        Gaussian mechanisms of fixed noise that ran on the same rows before (a private
        pipeline's preprocessing), composed with the three releases.
    """

    weights: tuple[float, float, float] = (1.0, 1.0, 1.0)
    neighboring_relation: NeighboringRelation = NeighboringRelation.ADD_OR_REMOVE_ONE
    prior_noise_multipliers: tuple[float, ...] = ()

    def __post_init__(self) -> None:
        if len(self.weights) != 3 or not all(0.0 < w < math.inf for w in self.weights):
            raise ValueError(f"SSP weights must be three positive numbers, got {self.weights}")
        if not all(z > 0.0 and math.isfinite(z) for z in self.prior_noise_multipliers):
            raise ValueError(
                "prior noise multipliers must be positive and finite, got "
                f"{self.prior_noise_multipliers}"
            )

    n_steps = 1  # the data are read once

    def with_priors(self, noise_multipliers: tuple[float, ...]) -> SSPPlan:
        return dataclasses.replace(
            self, prior_noise_multipliers=tuple(float(z) for z in noise_multipliers)
        )

    def without_priors(self) -> SSPPlan:
        return dataclasses.replace(self, prior_noise_multipliers=())

    def noise_multipliers(self, scale: float) -> tuple[float, float, float]:
        """``(m_lambda, m_gram, m_cross)`` at scale ``s``."""
        return tuple(scale * w for w in self.weights)  # type: ignore[return-value]

    def dp_event(self, scale: float) -> dp_accounting.DpEvent:
        """Priors, then the three releases, in one ComposedDpEvent (never sampled)."""
        if not scale > 0.0:
            raise ValueError(f"the noise scale must be positive, got {scale}")
        events = [dp_accounting.GaussianDpEvent(z) for z in self.prior_noise_multipliers]
        events += [dp_accounting.GaussianDpEvent(m) for m in self.noise_multipliers(scale)]
        return dp_accounting.ComposedDpEvent(events)

    def closed_form_scale(self, epsilon: float, delta: float) -> float:
        """The scale at which everything composes to exactly (epsilon, delta) (analytic
        Gaussian; a test oracle and the calibration's starting point)."""
        mu_total_sq = get_sigma_gaussian(epsilon, delta) ** -2
        mu_own_sq = mu_total_sq - sum(z**-2 for z in self.prior_noise_multipliers)
        if not mu_own_sq > 0.0:
            raise UnreachablePrivacyTarget(
                f"the preprocessing's Gaussian mechanisms (noise multipliers "
                f"{self.prior_noise_multipliers}) already spend the whole ({epsilon:g}, "
                f"{delta:g}); nothing is left for the sufficient statistics"
            )
        return math.sqrt(sum(w**-2 for w in self.weights) / mu_own_sq)


@functools.lru_cache(maxsize=256)
def calibrate_ssp(
    plan: SSPPlan, epsilon: float, delta: float, accountant: str = "pld"
) -> Calibration:
    """The smallest scale ``s`` for which ``plan`` (priors included) is (epsilon, delta)-DP.

    With ``accountant='pld'`` the closed form (spec §4.2) is exact up to rounding; the fine
    PLD then proves the guarantee, and ``s`` moves up by a few parts per million if the PLD
    discretisation puts it above the target. With ``'rdp'`` (about 7% more noise) a secant
    search on the RDP bound. The returned epsilon is the accountant's and never exceeds the
    target. Deterministic and cached: it depends on public inputs only.
    """
    check_calibration_target(epsilon, delta, accountant)
    interval = pld_intervals(epsilon, fine_relative=FINEST_RELATIVE)[1]
    start = plan.closed_form_scale(epsilon, delta)

    def eps_at(scale: float) -> float:
        return epsilon_of(plan.dp_event(scale), delta, accountant, pld_interval=interval)

    if accountant == "rdp":
        scale, spent, _ = find_sigma(eps_at, epsilon, start, rtol=5e-3)
    else:
        scale, spent = start * (1.0 + 1e-7), eps_at(start * (1.0 + 1e-7))
        bump = 1e-6
        while spent > epsilon:
            if bump > 0.1:  # pragma: no cover - the PLD is within 1e-6 of the closed form
                raise RuntimeError("SSP calibration did not converge; please report this bug")
            scale = start * (1.0 + bump)
            spent, bump = eps_at(scale), bump * 4.0
    if spent > epsilon:  # pragma: no cover - guarded above
        raise RuntimeError(f"SSP calibration overshot: {spent} > {epsilon}; please report this bug")
    return Calibration(
        plan, scale, spent, delta, accountant, interval if accountant == "pld" else None  # type: ignore[arg-type]
    )
