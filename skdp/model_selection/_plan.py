"""Planning a private search before any data is used: every candidate's exact spend, the
per-trial budget calibrated to the total, and the search's spend (all from public facts).

When the candidates' fits carry extra deltas (private pipelines: ``WithExtraDelta``), the search
pays them as an extra delta ``t`` of its own (see :mod:`._accounting`), about ``E[K] + 1``
times a trial's extra delta (the number of candidates + 1 when exhaustive). Handing the trials
the search's delta would then leave nothing (a pipeline's extra delta is a share of the delta
it is given), so the per-trial delta is lowered until ``t`` is at most :data:`ATOM_SHARE` of
the search's delta.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import dp_accounting
from sklearn.base import BaseEstimator, clone

from ..accounting import UnreachablePrivacyTarget
from ..budget import RdpCurve, WithExtraDelta
from ..budget._codec import CodecError, encode_spend
from ._accounting import (
    SearchEvents,
    SearchTooExpensive,
    calibrate_search,
    search_epsilon,
    search_extra_delta,
    search_spend,
)
from ._execution import candidate_key, quiet_planned_spend
from ._trials import TrialDistribution

__all__ = ["ATOM_SHARE", "SearchPlan", "plan_search"]

#: The largest share of the search's delta that the trials' extra deltas may take (the per-trial
#: delta is lowered until they fit in it).
ATOM_SHARE = 0.1
_MAX_DELTA_STEPS = 8


@dataclass(frozen=True)
class SearchPlan:
    """What the search will spend and how: the per-trial fit epsilon, the noise of the
    validation score, the whole search's spend and epsilon, and each candidate's exact fit
    and refit events (checked against the real fits before anything is released).

    ``trial_delta`` is the delta every trial's fit (and the refit) is calibrated to: the
    search's delta, unless the fits have extra deltas (then lower, see the module docstring).
    ``extra_delta`` is the search's extra delta (0.0 without extra deltas; additive for a random
    number of trials, an atom for the exhaustive search, as in ``spend``); ``epsilon`` is its
    RDP curve's epsilon at the delta that leaves."""

    trial_epsilon: float
    score_noise_multiplier: float
    spend: dp_accounting.DpEvent | RdpCurve | WithExtraDelta
    epsilon: float
    planned_fit: dict
    planned_refit: dict
    trial_delta: float
    extra_delta: float = 0.0


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
    planner = _Planner(template, prefix, trials, train, full, refit)
    trial_delta, fits, refits = _trial_delta(planner, candidates, epsilon, delta)
    # Candidates with the same plan spend the same: calibrate on one of each.
    representatives, counts = _groups(candidates, fits, refits)

    def events_at(trial_epsilon):
        f, r = planner.spends(representatives, trial_epsilon, trial_delta)
        return SearchEvents(tuple(f), counts, tuple(r))

    calibration = calibrate_search(events_at, trials, epsilon, delta, score_epsilon_ratio)
    # Check the result with every candidate, not only the representatives.
    f, r = planner.spends(candidates, calibration.trial_epsilon, trial_delta)
    every = SearchEvents(tuple(f), (1,) * len(f), tuple(r))
    spend, curve = search_spend(every, calibration.score_noise_multiplier, trials)
    extra = search_extra_delta(every, trials)
    total = search_epsilon(curve, delta, extra, additive=trials is not None)
    if not total <= epsilon:  # pragma: no cover - the groups are exact
        raise RuntimeError(f"search calibration overshot: {total} > {epsilon}")
    return SearchPlan(
        trial_epsilon=calibration.trial_epsilon,
        score_noise_multiplier=calibration.score_noise_multiplier,
        spend=spend,
        epsilon=total,
        planned_fit={candidate_key(c): e for c, e in zip(candidates, f, strict=True)},
        planned_refit={candidate_key(c): e for c, e in zip(candidates, r, strict=False)},
        trial_delta=trial_delta,
        extra_delta=extra,
    )


@dataclass(frozen=True)
class _Planner:
    """The candidates' exact spends at a per-trial privacy, from ``template`` (public facts
    only: the planned spends run each fit only as far as its calibration)."""

    template: BaseEstimator
    prefix: str
    trials: TrialDistribution | None
    train: tuple
    full: tuple
    refit: bool

    def spends(self, candidates: Sequence[dict], trial_epsilon: float, trial_delta: float
               ) -> tuple[list, list]:
        """Each candidate's fit on the training part and, with a refit, on all rows."""
        fits, refits = [], []
        for cand in candidates:
            params = {**cand, f"{self.prefix}privacy": (trial_epsilon, trial_delta)}
            est = clone(self.template).set_params(**params)
            fits.append(quiet_planned_spend(est, *self.train))
            if self.refit:
                refits.append(quiet_planned_spend(est, *self.full))
        return fits, refits

    def extra_delta(self, fits: list, refits: list) -> float:
        """The search's extra delta if every candidate spent these."""
        return search_extra_delta(
            SearchEvents(tuple(fits), (1,) * len(fits), tuple(refits)), self.trials
        )


def _trial_delta(planner: _Planner, candidates: Sequence[dict], epsilon: float, delta: float
                 ) -> tuple[float, list, list]:
    """The per-trial delta, and every candidate's fits and refits at it and a reference
    epsilon: the search's delta, lowered while the trials' extra deltas take more than
    :data:`ATOM_SHARE` of it."""
    reference = epsilon / 3.0
    trial_delta = delta
    try:
        fits, refits = planner.spends(candidates, reference, trial_delta)
        extra = planner.extra_delta(fits, refits)
        # Extra deltas scale with the delta a trial is given: lower it until the search's
        # extra delta fits in ATOM_SHARE of delta (one step when they are proportional; the
        # share is a soft target, so a hair above it is fine).
        target = ATOM_SHARE * delta
        for _ in range(_MAX_DELTA_STEPS):
            if extra <= target * (1.0 + 1e-3):
                break
            lower = trial_delta * target / extra
            lower_fits, lower_refits = planner.spends(candidates, reference, lower)
            lower_extra = planner.extra_delta(lower_fits, lower_refits)
            if not lower_extra < extra:  # they do not shrink with the trial's delta: keep it
                break
            trial_delta, fits, refits, extra = lower, lower_fits, lower_refits, lower_extra
    except (UnreachablePrivacyTarget, RuntimeError) as exc:
        # Only a target the calibration cannot reach: bad input or parameters keep their own
        # errors (they used to read as "too small for this search").
        raise SearchTooExpensive(
            f"privacy=({epsilon:g}, {delta:g}) is too small for this search: a candidate "
            f"cannot even be calibrated to ({reference:.3g}, {trial_delta:.3g}) per trial "
            f"({exc})"
        ) from exc
    if not extra < delta:
        raise SearchTooExpensive(
            f"privacy=({epsilon:g}, {delta:g}) is too small for this search: the extra deltas "
            f"of its trials add up to {extra:.3g} (with a per-trial delta of "
            f"{trial_delta:.3g}), not below delta. Raise delta, lower n_iter, or give the "
            "candidates' delta-only steps a smaller share."
        )
    return trial_delta, fits, refits


def _groups(candidates: Sequence[dict], fits: list, refits: list
            ) -> tuple[list[dict], tuple[int, ...]]:
    """One representative of each group of candidates with the same spends, and the groups'
    sizes."""
    groups: dict = {}
    for i, key in enumerate(zip(fits, refits or [None] * len(fits), strict=True)):
        groups.setdefault(tuple(_group_key(e) for e in key), []).append(i)
    representatives = [candidates[idx[0]] for idx in groups.values()]
    return representatives, tuple(len(idx) for idx in groups.values())


def _group_key(spend) -> str | None:
    """A hashable key equal for equal spends (some DpEvents hold lists, so are unhashable)."""
    if spend is None:
        return None
    try:
        return encode_spend(spend)
    except CodecError:  # pragma: no cover - planned spends are always encodable
        return repr(spend)
