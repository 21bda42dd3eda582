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

Trials with an extra delta. A candidate (a private pipeline) may spend
``WithExtraDelta(event, p)``: ``event`` composed with a part that is ``(0, p)``-DP (the new-key
part of partition selection). RDP cannot express such a part, and repeat-and-select does not
keep it an atom (how many trials ran, and which one won, may depend on it). The search is
accounted by a hybrid argument instead. Fix neighbouring datasets X and Y and the direction
"output on X versus output on Y". Let M' be the search run on X with every ``(0, p)`` part run
as on Y (a hybrid used only in the proof). Then:

* M'(X) versus M(Y): the ``(0, p)`` parts have the same conditional distributions on both sides
  (given everything before them), so they add nothing to any Renyi divergence, and the trials
  of M' satisfy the RDP bound of their events alone. Repeat-and-select (a pairwise theorem) and
  the refit's composition then bound M'(X) versus M(Y) by the RDP curve computed from the
  events alone, exactly as for a plain search: ``delta_RDP(eps)``.
* M(X) versus M'(X): couple them so that every ``(0, p)`` part gives the same output whenever
  its two conditional distributions (total variation <= p) allow. They differ only if the part
  of some executed trial, or of the refit, is decoupled: probability at most
  ``sum_k P[K >= k] * p_max + p_refit = E[K] * p_max + p_refit = t`` (the number of trials K
  is drawn independently of the data; the trial's candidate and the refit's winner may be any
  candidate, hence the maxima).

So ``P[M(X) in S] <= P[M'(X) in S] + t <= e^eps P[M(Y) in S] + delta_RDP(eps) + t``: the whole
search satisfies ``delta(eps) <= delta_RDP(eps) + t`` with the same ``t`` in both directions
(the hybrid is built on the side whose probability is bounded, so ``t`` is not multiplied by
``e^eps``). The search's epsilon is its RDP curve's at ``delta - t``. This is an *additive*
term, not an atom: it does not give ``t + (1 - t) * delta_RDP``, so the search charges
``WithExtraDelta(spend, t, additive=True)``, which the ledger takes off its delta without the
``1 - P`` factor of atoms (valid for the ledger's other spends too: the coupling above holds
conditionally on any history, so it composes as ``1 - prod(1 - t_j)`` with other additive
terms, and the atoms then compose with the events as usual). ``t`` does not depend on epsilon,
so the charge is valid at every epsilon the ledger may reach.

The exhaustive search needs no such argument: every trial runs once, so it is a plain
(adaptive) composition of the trials and the refit, and their ``(0, p)`` parts compose as atoms
(the refit's, whatever candidate wins, is ``(0, max p_refit)``-DP given what came before). It
charges ``WithExtraDelta(spend, P)`` with ``P = 1 - prod_c (1 - p_c) * (1 - max p_refit)``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import dp_accounting
import numpy as np
from dp_accounting.rdp import rdp_privacy_accountant as _rdp

from ..accounting._accountants import quiet_accounting_logs
from ..accounting._rdp_orders import DEFAULT_ORDERS
from ..budget import RdpCurve, WithExtraDelta
from ..budget._records import events_delta
from ._scoring import gaussian_noise_for
from ._trials import TrialDistribution, dp_accounting_internal

__all__ = ["ORDERS", "SearchCalibration", "SearchEvents", "rdp_of", "search_spend",
           "search_extra_delta", "search_epsilon", "calibrate_search"]

# The search is accounted at the RDP orders of every skdp curve.
ORDERS: tuple[float, ...] = DEFAULT_ORDERS

# The search's extra delta is rounded up by this much (relative), so that floating-point
# rounding of the sum never understates it.
_ROUNDING_MARGIN = 1e-12


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


def search_epsilon(
    curve: np.ndarray, delta: float, extra_delta: float, additive: bool = True
) -> float:
    """The search's epsilon at ``delta`` given its RDP curve and extra delta.

    The curve's epsilon at ``delta - extra_delta`` (additive term, random number of trials), or
    at ``(delta - extra_delta) / (1 - extra_delta)`` (atom, exhaustive search): the reduced
    delta the ledger uses for the same :class:`WithExtraDelta`, so a ledger charged the search
    alone reports the same number. ``inf`` if nothing is left.
    """
    if additive:
        reduced = events_delta(delta, 0.0, extra_delta)
    else:
        reduced = events_delta(delta, extra_delta, 0.0)
    return epsilon_of_curve(curve, reduced) if reduced > 0.0 else math.inf


def _split(spend) -> tuple[dp_accounting.DpEvent, float]:
    """``(event, extra delta)`` of a candidate's planned spend."""
    event, extra = spend, 0.0
    if isinstance(spend, WithExtraDelta):
        event, extra = spend.spend, spend.extra_delta
    if not isinstance(event, dp_accounting.DpEvent):
        raise TypeError(
            "a private search accounts its candidates' fits as dp_accounting DpEvents (with an "
            f"optional extra delta), got {type(event).__name__}"
        )
    return event, extra


@dataclass(frozen=True)
class SearchEvents:
    """The spends of a search at one per-trial budget.

    ``fits[i]`` is the training spend of the i-th group of candidates (candidates with the same
    plan spend the same), ``counts[i]`` how many candidates it holds; ``refits`` the spend of
    refitting each group on all rows (empty: no refit). A spend is a DpEvent, or a
    :class:`~skdp.budget.WithExtraDelta` of one (a private pipeline's).
    """

    fits: tuple[dp_accounting.DpEvent | WithExtraDelta, ...]
    counts: tuple[int, ...]
    refits: tuple[dp_accounting.DpEvent | WithExtraDelta, ...]

    @property
    def fit_events(self) -> tuple[dp_accounting.DpEvent, ...]:
        """The fits without their extra deltas."""
        return tuple(_split(s)[0] for s in self.fits)

    @property
    def refit_events(self) -> tuple[dp_accounting.DpEvent, ...]:
        """The refits without their extra deltas."""
        return tuple(_split(s)[0] for s in self.refits)


def search_extra_delta(events: SearchEvents, trials: TrialDistribution | None) -> float:
    """The extra delta of a search whose fits have extra deltas (0.0 if none).

    For a random number of trials, the additive term ``E[K] * max p_fit + max p_refit``
    (``E[K]`` at most the accounted mean: see :class:`TrialDistribution`). For the exhaustive
    search (``trials=None``), the atom ``1 - prod_c (1 - p_c) * (1 - max p_refit)``. See the
    module docstring for the proofs. Rounded up by a relative 1e-12.
    """
    fit = [_split(s)[1] for s in events.fits]
    refit = [_split(s)[1] for s in events.refits]
    if not any(fit) and not any(refit):
        return 0.0
    if trials is None:
        log_none = math.fsum(
            count * math.log1p(-p) for count, p in zip(events.counts, fit, strict=True)
        )
        if refit:
            log_none += math.log1p(-max(refit))
        total = -math.expm1(log_none)
    else:
        total = trials.mean * max(fit)
        if refit:
            total += max(refit)
    return total * (1.0 + _ROUNDING_MARGIN)


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
) -> tuple[dp_accounting.DpEvent | RdpCurve | WithExtraDelta, np.ndarray]:
    """``(spend, curve)`` of a whole search: what it charges, and the RDP values of its events.

    The spend is a DpEvent (or an RDP curve); when the fits have extra deltas, it is wrapped in
    ``WithExtraDelta(..., search_extra_delta(events, trials))``, additive unless the search is
    exhaustive, and ``curve`` is that of the inner spend. ``trials=None`` is the exhaustive
    search (every candidate once, composed).
    """
    spend, curve = _rdp_spend(events, score_noise_multiplier, trials)
    extra = search_extra_delta(events, trials)
    if extra > 0.0:
        if not extra < 1.0:
            raise SearchTooExpensive(
                f"the extra deltas of this search's trials add up to {extra:.3g}: no guarantee"
            )
        spend = WithExtraDelta(spend, extra, additive=trials is not None)
    return spend, curve


def _rdp_spend(
    events: SearchEvents,
    score_noise_multiplier: float,
    trials: TrialDistribution | None,
) -> tuple[dp_accounting.DpEvent | RdpCurve, np.ndarray]:
    """The search's spend and curve from its events alone (extra deltas aside)."""
    score = dp_accounting.GaussianDpEvent(score_noise_multiplier)
    trial_events = [dp_accounting.ComposedDpEvent([fit, score]) for fit in events.fit_events]
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
        refit_event, refit_curve = _worst(events.refit_events)
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
    spend: dp_accounting.DpEvent | RdpCurve | WithExtraDelta
    epsilon: float  # the total, at ``delta``; never above the target
    extra_delta: float = 0.0  # the search's extra delta (see search_extra_delta; 0: none)


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
    calibrated to ``trial_epsilon`` (and the per-trial delta the caller chose); the validation
    score gets the noise of a Gaussian mechanism that is
    ``(score_epsilon_ratio * trial_epsilon, delta)``-DP on its own. With extra deltas in the
    fits, the total is the RDP curve's epsilon at the delta they leave (:func:`search_epsilon`).
    The returned total epsilon is checked to be at most ``epsilon``.
    """

    # log(total) is close to linear in log(per-trial epsilon): a safeguarded secant search
    # on that scale, keeping a bracket [feasible, infeasible]; the total is at least one trial's
    # fit epsilon, so the per-trial target lies below epsilon.
    log_target = math.log(epsilon)
    feasible: SearchCalibration | None = None
    low, high = -math.inf, log_target  # log per-trial epsilon: low feasible, high not
    points: list[tuple[float, float]] = []  # (log per-trial epsilon, log total) evaluated
    x = math.log(epsilon / 3.0)
    for _ in range(max_evaluations):
        result = _calibration_at(math.exp(x), events_at, trials, delta, score_epsilon_ratio)
        if result is not None and result.epsilon <= epsilon:
            if feasible is None or result.trial_epsilon > feasible.trial_epsilon:
                feasible = result
            low = x
            if result.epsilon >= epsilon * (1.0 - rtol):
                return feasible
        else:
            high = min(high, x)
        if result is not None and math.isfinite(result.epsilon):
            points.append((x, math.log(result.epsilon)))
        x = _next_point(x, points, low, high, log_target + math.log(1.0 - rtol / 2.0))
    if feasible is None:
        raise SearchTooExpensive(
            f"privacy=({epsilon:g}, {delta:g}) is too small for this search: no per-trial "
            "budget found whose search fits in it. Raise epsilon, lower n_iter, or search "
            "fewer/cheaper candidates."
        )
    return feasible


def _calibration_at(trial_epsilon: float, events_at: Callable[[float], SearchEvents],
                    trials: TrialDistribution | None, delta: float,
                    score_epsilon_ratio: float) -> SearchCalibration | None:
    """The search with every fit at ``trial_epsilon`` (``None``: no guarantee there)."""
    try:
        events = events_at(trial_epsilon)
    except (ValueError, RuntimeError):  # a candidate cannot be calibrated to this target
        return None
    sigma = gaussian_noise_for(score_epsilon_ratio * trial_epsilon, delta)
    try:
        spend, curve = search_spend(events, sigma, trials)
    except SearchTooExpensive:  # extra deltas adding up to 1 or more: no guarantee here
        return None
    extra = search_extra_delta(events, trials)
    total = search_epsilon(curve, delta, extra, additive=trials is not None)
    return SearchCalibration(trial_epsilon, delta, sigma, spend, total, extra)


def _next_point(x: float, points: list[tuple[float, float]], low: float, high: float,
                aim: float) -> float:
    """The next log per-trial epsilon to try: the secant through the last two evaluations
    (slope 1 with one point), aimed at ``aim`` (a little below the target), kept strictly
    inside the bracket ``(low, high)``."""
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
    return x_next
