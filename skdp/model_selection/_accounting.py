"""Accounting of a private search, and calibration of its per-trial budget.

One trial is a DP fit on the training part plus a noisy validation score on the held-out part:
``ComposedDpEvent([fit, GaussianDpEvent(score_noise)])``. Candidates differ in their
parameters, so the trial mechanism is "draw a candidate uniformly (public coins), then run its
trial". Its Renyi divergence is at most the largest of the candidates' (Renyi divergence is
jointly quasi-convex, so a mixture of mechanisms is no worse than its worst component), so the
trial's RDP curve is bounded by the pointwise maximum of every candidate's curve. When one
candidate's curve is the largest at every order, that candidate's DpEvent is the bound, and the
whole search is a ``dp_accounting`` DpEvent that anyone can re-account; otherwise the search
spends an RDP curve (:class:`skdp.budget.RdpCurve`), which the ledger composes the same way.

Random search: ``RepeatAndSelectDpEvent(trial, mean, shape)``. Exhaustive search: the
composition of every candidate's trial. An optional refit of the winner on all rows is composed
after it (adaptive composition; again bounded by the worst candidate). Everything is RDP
(dp_accounting's PLD accountant has no repeat-and-select bound).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import dp_accounting
import numpy as np
from dp_accounting.rdp import rdp_privacy_accountant as _rdp

from ..accounting._accountants import quiet_accounting_logs
from ..budget import RdpCurve
from ._scoring import gaussian_noise_for
from ._trials import TrialDistribution, dp_accounting_internal

__all__ = ["ORDERS", "SearchCalibration", "SearchEvents", "rdp_of", "search_spend",
           "calibrate_search"]

ORDERS: tuple[float, ...] = tuple(float(a) for a in _rdp.DEFAULT_RDP_ORDERS)


def rdp_of(event: dp_accounting.DpEvent, orders: Sequence[float] = ORDERS) -> np.ndarray:
    """The RDP curve of ``event`` at ``orders`` (add/remove-one relation)."""
    with quiet_accounting_logs():
        accountant = _rdp.RdpAccountant(list(orders))
        accountant.compose(event)
        return np.asarray(accountant.rdp, dtype=np.float64)


def epsilon_of_curve(curve: np.ndarray, delta: float, orders: Sequence[float] = ORDERS) -> float:
    """Epsilon at ``delta`` of an RDP curve (dp_accounting's conversion)."""
    epsilon, _ = _rdp.compute_epsilon(list(orders), list(curve), delta)
    return float(epsilon)


@dataclass(frozen=True)
class SearchEvents:
    """The DpEvents of a search at one per-trial budget.

    ``fits[i]`` is the training event of the i-th group of candidates (candidates with the same
    plan have the same event), ``counts[i]`` how many candidates it holds; ``refits`` the event
    of refitting each group on all rows (empty: no refit).
    """

    fits: tuple[dp_accounting.DpEvent, ...]
    counts: tuple[int, ...]
    refits: tuple[dp_accounting.DpEvent, ...]


def _worst(events: Sequence[dp_accounting.DpEvent]) -> tuple[dp_accounting.DpEvent | None,
                                                              np.ndarray]:
    """``(event, curve)``: the event whose curve dominates all the others at every order (or
    ``None`` if none does) and the pointwise maximum of the curves."""
    curves = [rdp_of(e) for e in events]
    upper = np.max(np.vstack(curves), axis=0)
    for event, curve in zip(events, curves, strict=True):
        if np.all(curve >= upper):
            return event, upper
    return None, upper


def search_spend(
    events: SearchEvents,
    score_noise_multiplier: float,
    trials: TrialDistribution | None,
) -> tuple[dp_accounting.DpEvent | RdpCurve, np.ndarray]:
    """``(spend, curve)`` of a whole search: the DpEvent (or RDP curve) and its RDP values.

    ``trials=None`` is the exhaustive search (every candidate once, composed).
    """
    score = dp_accounting.GaussianDpEvent(score_noise_multiplier)
    trial_events = [dp_accounting.ComposedDpEvent([fit, score]) for fit in events.fits]
    if trials is None:
        search_event = dp_accounting.ComposedDpEvent(
            [dp_accounting.SelfComposedDpEvent(t, c)
             for t, c in zip(trial_events, events.counts, strict=True)]
        )
        search_curve = rdp_of(search_event)
    else:
        worst, upper = _worst(trial_events)
        if worst is not None:
            search_event = trials.event(worst)
            search_curve = rdp_of(search_event)
        else:
            search_event = None
            search_curve = np.asarray(
                dp_accounting_internal("_compute_rdp_repeat_and_select")(
                    ORDERS, upper, trials.mean, trials.shape
                )
            )
    parts_events = [search_event]
    curve = search_curve
    if events.refits:
        refit_event, refit_curve = _worst(events.refits)
        parts_events.append(refit_event)
        curve = curve + refit_curve
    if all(e is not None for e in parts_events):
        event = parts_events[0] if len(parts_events) == 1 else dp_accounting.ComposedDpEvent(
            parts_events
        )
        return event, rdp_of(event)
    return RdpCurve(ORDERS, tuple(float(v) for v in curve)), curve


@dataclass(frozen=True)
class SearchCalibration:
    """The calibrated search: per-trial budget, score noise, and the total spend."""

    trial_epsilon: float
    delta: float
    score_noise_multiplier: float
    spend: dp_accounting.DpEvent | RdpCurve
    epsilon: float  # the total, at ``delta``; never above the target


class SearchTooExpensive(ValueError):
    """No per-trial budget fits the search into the requested privacy."""


def calibrate_search(
    events_at: Callable[[float], SearchEvents],
    trials: TrialDistribution | None,
    epsilon: float,
    delta: float,
    score_epsilon_ratio: float,
    *,
    rtol: float = 0.01,
    max_evaluations: int = 24,
) -> SearchCalibration:
    """A per-trial fit epsilon whose search spends between ``(1 - rtol) * epsilon`` and
    ``epsilon`` (or the largest feasible one found in ``max_evaluations`` tries).

    ``events_at(trial_epsilon)`` returns the search's events when every candidate's fit is
    calibrated to ``(trial_epsilon, delta)``; the validation score gets the noise of a Gaussian
    mechanism that is ``(score_epsilon_ratio * trial_epsilon, delta)``-DP on its own. The
    returned total epsilon is checked to be at most ``epsilon``.
    """

    def evaluate(trial_epsilon: float) -> SearchCalibration | None:
        try:
            events = events_at(trial_epsilon)
        except (ValueError, RuntimeError):  # a candidate cannot be calibrated to this target
            return None
        sigma = gaussian_noise_for(score_epsilon_ratio * trial_epsilon, delta)
        spend, curve = search_spend(events, sigma, trials)
        total = epsilon_of_curve(curve, delta)
        return SearchCalibration(trial_epsilon, delta, sigma, spend, total)

    # log(total) is close to linear in log(per-trial epsilon): a safeguarded secant search
    # on that scale, keeping a bracket [feasible, infeasible]; the total is at least one trial's
    # fit epsilon, so the per-trial target lies below epsilon.
    log_target = math.log(epsilon)
    feasible: SearchCalibration | None = None
    low, high = -math.inf, log_target  # log per-trial epsilon: low feasible, high not
    points: list[tuple[float, float]] = []  # (log per-trial epsilon, log total) evaluated
    x = math.log(epsilon / 3.0)
    for _ in range(max_evaluations):
        result = evaluate(math.exp(x))
        if result is not None and result.epsilon <= epsilon:
            if feasible is None or result.trial_epsilon > feasible.trial_epsilon:
                feasible = result
            low = x
            if result.epsilon >= epsilon * (1.0 - rtol):
                return feasible
        else:
            high = min(high, x)
        if result is not None:
            points.append((x, math.log(result.epsilon)))
        # Next point: secant through the last two evaluations (slope 1 with one point), aimed
        # a little below the target, kept strictly inside the bracket.
        aim = log_target + math.log(1.0 - rtol / 2.0)
        if len(points) >= 2 and points[-1][0] != points[-2][0]:
            (x1, f1), (x2, f2) = points[-2], points[-1]
            slope = (f2 - f1) / (x2 - x1)
            slope = min(max(slope, 0.2), 5.0)
            x_next = x2 + (aim - f2) / slope
        elif points:
            x_next = points[-1][0] + (aim - points[-1][1])
        else:  # nothing could be calibrated here: more per-trial budget
            x_next = x + math.log(2.0)
        if math.isfinite(low) and not low < x_next < high:
            x_next = (low + high) / 2.0
        elif not x_next < high:
            x_next = high - math.log(2.0) if not math.isfinite(low) else (low + high) / 2.0
        x = x_next
    if feasible is None:
        raise SearchTooExpensive(
            f"privacy=({epsilon:g}, {delta:g}) is too small for this search: no per-trial "
            "budget found whose search fits in it. Raise epsilon, lower n_iter, or search "
            "fewer/cheaper candidates."
        )
    return feasible
