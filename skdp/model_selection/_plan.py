"""Planning a private search before any data is used: every candidate's exact spend, the
per-trial budget calibrated to the total, and the search's spend (all from public facts)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import dp_accounting
from sklearn.base import clone

from ..budget import RdpCurve
from ._accounting import (
    SearchEvents,
    SearchTooExpensive,
    calibrate_search,
    epsilon_of_curve,
    search_spend,
)
from ._execution import candidate_key, quiet_planned_spend
from ._trials import TrialDistribution

__all__ = ["SearchPlan", "plan_search"]


@dataclass(frozen=True)
class SearchPlan:
    """What the search will spend and how: the per-trial fit epsilon, the noise of the
    validation score, the whole search's spend and epsilon, and each candidate's exact fit
    and refit events (checked against the real fits before anything is released)."""

    trial_epsilon: float
    score_noise_multiplier: float
    spend: dp_accounting.DpEvent | RdpCurve
    epsilon: float
    planned_fit: dict
    planned_refit: dict


def plan_search(
    template,
    prefix: str,
    candidates: Sequence[dict],
    trials: TrialDistribution | None,
    train: tuple,
    full: tuple,
    privacy: tuple[float, float],
    refit: bool,
    score_epsilon_ratio: float,
) -> SearchPlan:
    """Calibrate the per-trial budget so that the whole search (repeat-and-select over the
    worst candidate, or the full composition when ``trials`` is None, plus the refit) spends
    at most ``privacy``. ``train`` is the trials' ``(X, y)``, ``full`` the refit's."""
    epsilon, delta = privacy

    def events_for(cands, trial_epsilon):
        fits, refits = [], []
        for cand in cands:
            params = {**cand, f"{prefix}privacy": (trial_epsilon, delta)}
            est = clone(template).set_params(**params)
            fits.append(quiet_planned_spend(est, *train))
            if refit:
                refits.append(quiet_planned_spend(est, *full))
        return fits, refits

    # Candidates with the same plan spend the same: calibrate on one of each.
    reference = epsilon / 3.0
    try:
        fits, refits = events_for(candidates, reference)
    except (ValueError, RuntimeError) as exc:
        raise SearchTooExpensive(
            f"privacy=({epsilon:g}, {delta:g}) is too small for this search: a candidate "
            f"cannot even be calibrated to epsilon={reference:.3g} per trial ({exc})"
        ) from exc
    groups: dict = {}
    for i, key in enumerate(zip(fits, refits or [None] * len(fits), strict=True)):
        groups.setdefault(key, []).append(i)
    representatives = [candidates[idx[0]] for idx in groups.values()]
    counts = tuple(len(idx) for idx in groups.values())

    def events_at(trial_epsilon):
        f, r = events_for(representatives, trial_epsilon)
        return SearchEvents(tuple(f), counts, tuple(r))

    calibration = calibrate_search(events_at, trials, epsilon, delta, score_epsilon_ratio)
    # Check the result with every candidate, not only the representatives.
    f, r = events_for(candidates, calibration.trial_epsilon)
    spend, curve = search_spend(
        SearchEvents(tuple(f), (1,) * len(f), tuple(r)),
        calibration.score_noise_multiplier, trials,
    )
    total = epsilon_of_curve(curve, delta)
    if not total <= epsilon:  # pragma: no cover - the groups are exact
        raise RuntimeError(f"search calibration overshot: {total} > {epsilon}")
    return SearchPlan(
        trial_epsilon=calibration.trial_epsilon,
        score_noise_multiplier=calibration.score_noise_multiplier,
        spend=spend,
        epsilon=total,
        planned_fit={candidate_key(c): e for c, e in zip(candidates, f, strict=True)},
        planned_refit={candidate_key(c): e for c, e in zip(candidates, r, strict=False)},
    )
