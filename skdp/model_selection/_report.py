"""The words a private search says about its privacy: the calibration line it prints, what it
records in a budget ledger, and :meth:`privacy_report`'s text.

Public facts only: never the number of trials, which candidates ran, or their scores (the
guarantee of a random number of trials needs them hidden).
"""

from __future__ import annotations

from typing import Any

import dp_accounting

from ..accounting import epsilon_of, make_accountant
from ._trials import TrialDistribution

__all__ = ["calibration_line", "ledger_mechanism", "ledger_params", "search_report"]


def calibration_line(name: str, n_candidates: int, trials: TrialDistribution | None,
                     trial_epsilon: float, score_noise_multiplier: float, epsilon: float,
                     delta: float) -> str:
    """What ``verbose`` prints once the search is calibrated."""
    return (
        f"[{name}] {n_candidates} candidates; "
        + ("every candidate once (composed)" if trials is None
           else f"random number of trials, {trials.describe()}")
        + f"; each trial: fit at epsilon={trial_epsilon:.4g}, score noise "
        f"multiplier {score_noise_multiplier:.4g}; total epsilon "
        f"{epsilon:.4g} at delta={delta:g}"
    )


def ledger_params(search, privacy: tuple[float, float], n_candidates: int) -> dict[str, Any]:
    """The search's public parameters, as a ledger records them with its spend."""
    return {
        "privacy": list(privacy),
        "n_iter": search.n_iter,
        "n_trials_distribution": search.n_trials_distribution,
        "eta": search.eta,
        "refit": search.refit,
        "n_candidates": n_candidates,
        "estimator": type(search.estimator).__name__,
    }


def ledger_mechanism(trials: TrialDistribution | None, trial_epsilon: float, delta: float,
                     refit: bool) -> str:
    """The ledger's description of how the search spent."""
    how = ("every candidate once, composed" if trials is None
           else f"repeat-and-select, {trials.describe()}")
    refit_text = "; refit of the winner on all rows" if refit else ""
    return (
        f"private hyperparameter search ({how}); each trial a DP fit at "
        f"({trial_epsilon:.4g}, {delta:g}) plus a Gaussian noisy validation score{refit_text}"
    )


def search_report(search) -> str:
    """:meth:`privacy_report` of a fitted search: what it proved, in words."""
    eps, delta = search.privacy_spent_
    trial_epsilon, trial_delta = search.trial_privacy_
    return (
        f"{type(search).__name__}: ({eps:.4g}, {delta:g})-DP under add/remove-one-row "
        f"neighbouring (RDP accounting), for the whole search"
        + (" including the refit" if search.refit else "") + _tighter_by_pld(search)
        + f". Each trial: a DP fit calibrated to ({trial_epsilon:.4g}, {trial_delta:.3g}) "
        f"on a random training part, plus a noisy validation score (Gaussian noise "
        f"multiplier {search.score_noise_multiplier_:.4g}) on the other "
        f"{search.n_validation_} rows; {search.n_candidates_} candidates. The number of rows "
        "and of validation rows are treated as public."
    )


def _tighter_by_pld(search) -> str:
    """The PLD epsilon a budget ledger records for the same spend, when it is smaller."""
    eps, delta = search.privacy_spent_
    event = search.dp_event_
    if not (isinstance(event, dp_accounting.DpEvent) and make_accountant("pld").supports(event)):
        return ""
    # An exhaustive search's spend is a plain composition, which PLD (what a budget ledger
    # uses) may bound more tightly than the RDP the search was calibrated with.
    pld = epsilon_of(event, delta, "pld")
    if not pld < eps:
        return ""
    return (f" (re-accounted with PLD, as a budget ledger records it: "
            f"({pld:.4g}, {delta:g}))")
