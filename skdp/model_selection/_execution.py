"""Running a private search's fits: the estimator every trial clones, the trials anywhere
joblib sends them and the refit, with no ledger charged, and a guard that every fit spent
exactly what was accounted."""

from __future__ import annotations

import contextlib
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
from joblib import Parallel, delayed
from sklearn.base import BaseEstimator, clone
from sklearn.pipeline import Pipeline

from .._fit.planned import planned_spend
from .._utils.validation import PrivacyWarning
from ..budget._context import CURRENT_BUDGET
from ..budget._records import with_extra_delta
from ..pipeline import PrivatePipeline
from ._candidates import SearchTarget
from ._scoring import noisy_validation_score

if TYPE_CHECKING:  # the plan is built from this module's planned spends
    from ._plan import SearchPlan
    from ._setup import SearchSplit

__all__ = ["TrialOutcome", "TrialRunner", "candidate_key", "check_spent", "no_current_budget",
           "quiet_planned_spend", "run_trial", "trial_template"]

#: One trial's result: its noisy score sum and its fitted model (never released unless it wins).
TrialOutcome = tuple[float, Any]


@contextlib.contextmanager
def no_current_budget() -> Iterator[None]:
    """Trials and the refit charge nothing: the search charges its total once. This hides an
    enclosing ``with budget:`` block from them (worker processes never see it anyway)."""
    token = CURRENT_BUDGET.set(None)
    try:
        with warnings.catch_warnings():
            # The search warns about a large delta once, for the whole data set.
            warnings.simplefilter("ignore", PrivacyWarning)
            yield
    finally:
        CURRENT_BUDGET.reset(token)


def quiet_planned_spend(estimator: BaseEstimator, X, y) -> Any:
    """The spend ``estimator`` would charge fitting ``(X, y)``, charging nothing."""
    with no_current_budget():
        return planned_spend(estimator, X, y).spend


def trial_template(estimator, target: SearchTarget, y, classifier: bool) -> BaseEstimator:
    """The estimator every trial and the refit clone: RDP accounting (the search composes
    RDP), no ledger (the search charges once), quiet, and every class known."""
    template = clone(estimator).set_params(**{
        f"{target.model_prefix}accountant": "rdp", f"{target.privacy_prefix}budget": None,
        f"{target.model_prefix}verbose": 0,
    })
    step = target.model
    if classifier and "classes" in step.get_params() and step.classes is None:
        # Read from y, as the estimator itself would: the same public assumption, made
        # once, so that every trial and the refit know every class.
        template.set_params(**{f"{target.model_prefix}classes": np.unique(np.asarray(y))})
    return template


@dataclass(frozen=True)
class TrialRunner:
    """Fits candidates as the plan accounted them: from ``template``, at the per-trial privacy,
    with fresh seeds, each fit checked against its planned spend."""

    template: BaseEstimator
    target: SearchTarget
    plan: SearchPlan
    split: SearchSplit
    classifier: bool
    score_clip: float

    def params(self, candidate: dict, seed: int) -> dict:
        """``candidate``'s parameters, the per-trial privacy, and a seed for every DP step."""
        trial_privacy = (self.plan.trial_epsilon, self.plan.trial_delta)
        # Every DP step gets its own fresh seed in every fit: a seed reused across fits on
        # overlapping rows would correlate their noise.
        seeds = np.random.SeedSequence(seed).generate_state(len(self.target.seed_params))
        return {
            **candidate, f"{self.target.privacy_prefix}privacy": trial_privacy,
            **{name: int(s) for name, s in zip(self.target.seed_params, seeds, strict=True)},
        }

    def run(self, candidates: list[dict], seeds: np.ndarray, n_jobs: int | None
            ) -> list[TrialOutcome]:
        """The trials of ``candidates``, ``seeds[i]`` the (fit, score) seeds of the i-th."""
        split = self.split
        outcomes = Parallel(n_jobs=n_jobs)(
            delayed(run_trial)(
                self.template, self.params(candidate, int(fit_seed)),
                split.X_train, split.y_train, split.X_val, split.y_val, int(score_seed),
                self.classifier, self.score_clip, self.plan.score_noise_multiplier,
            )
            for candidate, (fit_seed, score_seed) in zip(candidates, seeds, strict=True)
        )
        for candidate, (_, model) in zip(candidates, outcomes, strict=True):
            check_spent(model, self.plan.planned_fit[candidate_key(candidate)], "a trial")
        return outcomes

    def refit(self, candidate: dict, seed: int, X, y) -> BaseEstimator:
        """``candidate`` fitted on all rows, as verbose as the user's estimator asked."""
        final = clone(self.template).set_params(
            **self.params(candidate, seed),
            **{f"{self.target.model_prefix}verbose": self.target.model.verbose},
        )
        with no_current_budget():
            final.fit(X, y)
        check_spent(final, self.plan.planned_refit[candidate_key(candidate)], "the refit")
        return final


def run_trial(template: BaseEstimator, params: dict, X_train, y_train, X_val, y_val,
              score_seed: int, classifier: bool, score_clip: float,
              score_noise_multiplier: float) -> TrialOutcome:
    """One trial, anywhere joblib sends it: a DP fit, then a noisy validation score.

    Returns ``(noisy score sum, fitted estimator)``; the driver keeps only the best.
    """
    estimator = clone(template).set_params(**params)
    with no_current_budget():
        estimator.fit(X_train, y_train)
    score = noisy_validation_score(
        estimator, X_val, y_val, classifier=classifier, score_clip=score_clip,
        noise_multiplier=score_noise_multiplier, rng=np.random.default_rng(score_seed),
    )
    return score, estimator


def candidate_key(candidate: dict) -> str:
    """A key equal for equal candidates (their values may be unhashable)."""
    return repr(sorted(candidate.items()))


def check_spent(model: BaseEstimator, planned: Any, what: str) -> None:
    """Refuse to release anything if a fit spent other than what was accounted (a bug guard:
    calibration is deterministic, so a fit spends exactly its planned event)."""
    if isinstance(model, PrivatePipeline):  # the whole pipeline's spend
        spent = with_extra_delta(model.dp_event_, model.extra_delta_)
    else:
        while isinstance(model, Pipeline):
            model = model.steps[-1][1]
        spent = model.dp_event_
    if spent != planned:  # pragma: no cover - would be a bug
        raise RuntimeError(
            f"{what} spent {spent}, not the accounted {planned}; nothing is released. "
            "Please report this bug."
        )
