"""The private search's base class: ``fit`` as the steps of a search within one budget.

Built like scikit-learn's ``BaseSearchCV``: :meth:`BaseDPSearchCV.fit` runs the steps shared by
every private search, and a subclass says only how its candidates are drawn, in
:meth:`~BaseDPSearchCV._run_search` (and, through :meth:`~BaseDPSearchCV._trial_distribution`,
whether a random number of them run or every candidate once). Unlike scikit-learn's, the whole
search is planned and charged before any trial runs, so ``_run_search`` may hand the trials over
only once, drawn as the plan accounted them.
"""

from __future__ import annotations

from collections.abc import Callable
from copy import deepcopy
from numbers import Integral, Real
from typing import Any

import numpy as np
from sklearn.base import BaseEstimator, MetaEstimatorMixin, _fit_context, is_classifier
from sklearn.utils import get_tags
from sklearn.utils._param_validation import HasMethods, Interval, StrOptions
from sklearn.utils.validation import check_is_fitted

from .._utils.html import PrivacyReprMixin
from ._candidates import SearchSpace
from ._delegation import SelectedModelMixin
from ._execution import TrialOutcome, TrialRunner, trial_template
from ._plan import SearchPlan, plan_search
from ._report import calibration_line, ledger_mechanism, ledger_params, search_report
from ._selection import results_table, select_best, warn_if_scores_saturated
from ._setup import (
    SearchInputs,
    SearchSplit,
    check_search_data,
    check_search_input,
    check_search_privacy,
    check_search_target,
    public_rng,
    resolve_search_budget,
    split_rows,
)
from ._trials import TRIAL_DISTRIBUTIONS, TrialDistribution

__all__ = ["BaseDPSearchCV", "EvaluateCandidates"]

#: What :meth:`BaseDPSearchCV._run_search` is given: runs one trial per candidate it is passed.
EvaluateCandidates = Callable[[list[dict]], None]


class BaseDPSearchCV(PrivacyReprMixin, SelectedModelMixin, MetaEstimatorMixin, BaseEstimator):
    """Shared private search: plan, calibrate, charge once, run the trials, select, refit."""

    _parameter_constraints: dict = {
        "estimator": [HasMethods(["fit"])],
        "privacy": "no_validation",  # check_privacy gives the messages
        "n_iter": [Interval(Real, 1, None, closed="neither")],
        "n_trials_distribution": [StrOptions(set(TRIAL_DISTRIBUTIONS))],
        "eta": [Interval(Real, 0, None, closed="neither")],
        "refit": ["boolean"],
        "validation_fraction": [Interval(Real, 0, 1, closed="neither")],
        "score_epsilon_ratio": [Interval(Real, 0, None, closed="neither")],
        "score_clip": [Interval(Real, 0, None, closed="neither")],
        "budget": "no_validation",
        "n_jobs": [Integral, None],
        "random_state": ["random_state"],
        "verbose": ["verbose"],
    }

    #: The name of the subclass's parameter space parameter (``param_grid``, ...).
    _space_name = ""

    # What subclasses decide ---------------------------------------------------------------
    def _trial_distribution(self) -> TrialDistribution | None:
        """How many trials run: a random number (``TrialDistribution``), or ``None`` for every
        candidate once (the plan then composes them all)."""
        return TrialDistribution.make(self.n_trials_distribution, self.n_iter, self.eta)

    def _run_search(self, evaluate_candidates: EvaluateCandidates, space: SearchSpace,
                    trials: TrialDistribution | None, rng: np.random.Generator) -> None:
        """Draw the candidates with the public ``rng`` and pass them, once, to
        ``evaluate_candidates``; ``trials`` is :meth:`_trial_distribution`'s."""
        raise NotImplementedError

    # The fit ------------------------------------------------------------------------------
    @_fit_context(prefer_skip_nested_validation=False)
    def fit(self, X, y):
        """Run the private search and keep the selected model.

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, n_features)
            Training data (all of it private). Split at random, with public coins, into a
            training part for the trials' fits and a validation part for their noisy scores.
        y : array-like of shape (n_samples,) or (n_samples, n_outputs)
            Targets.

        Returns
        -------
        self : object
            The fitted search.
        """
        search = self._check_inputs(X, y)
        # Public coins, in a fixed order: the split, then the trials, then the refit's seed.
        rng = public_rng(self.random_state)
        split = split_rows(search.X, search.y, self.validation_fraction, rng)
        template = trial_template(self.estimator, search.target, search.y, search.classifier)
        plan = self._plan_and_charge(search, template, split)
        runner = TrialRunner(template, search.target, plan, split, search.classifier,
                             float(self.score_clip))
        drawn, outcomes = self._run_trials(runner, search, rng)
        refit_seed = int(rng.integers(2**32))
        fallback = search.space.draw_point(rng)  # what is refitted if no trial ran
        best_trial = self._select(drawn, outcomes, fallback, search, plan, split)
        del outcomes  # the other trials' models are never released
        self._refit(best_trial, runner, refit_seed, search)
        self._record(search, plan, split)
        return self

    # The steps of the fit -----------------------------------------------------------------
    def _check_inputs(self, X, y) -> SearchInputs:
        """Everything that can be refused before any data is used, in this order: the privacy,
        the data, the estimator, the space, the number of trials, the ledger."""
        privacy = check_search_privacy(self.privacy)
        X, y = check_search_data(X, y, privacy[1], type(self).__name__)
        target = check_search_target(self.estimator)
        classifier = is_classifier(self.estimator)
        space = SearchSpace.checked(getattr(self, self._space_name), self._space_name,
                                    self.estimator)
        trials = self._trial_distribution()
        budget = resolve_search_budget(self.budget, self.estimator, target)
        return SearchInputs(X, y, privacy, target, classifier, space, trials, budget)

    def _plan_and_charge(self, search: SearchInputs, template: BaseEstimator,
                         split: SearchSplit) -> SearchPlan:
        """Calibrate the per-trial budget to the whole search and charge it once, before the
        data is used: a refused search charges and runs nothing."""
        check_search_input(template, search.X, search.y)
        n_candidates = len(search.space.candidates)
        plan = plan_search(
            template, search.target.privacy_prefix, search.space.candidates, search.trials,
            (split.X_train, split.y_train), (search.X, search.y), search.privacy,
            bool(self.refit), float(self.score_epsilon_ratio),
        )
        if self.verbose:
            print(calibration_line(
                type(self).__name__, n_candidates, search.trials, plan.trial_epsilon,
                plan.score_noise_multiplier, plan.epsilon, search.privacy[1],
            ))
        if search.budget is not None:
            search.budget.charge(
                plan.spend,
                estimator=type(self).__name__,
                params=ledger_params(self, search.privacy, n_candidates),
                mechanism=ledger_mechanism(search.trials, plan.trial_epsilon, plan.trial_delta,
                                           self.refit),
                neighboring_relation="add_or_remove_one",
            )
        return plan

    def _run_trials(self, runner: TrialRunner, search: SearchInputs, rng: np.random.Generator
                    ) -> tuple[list[dict], list[TrialOutcome]]:
        """The trials of the candidates :meth:`_run_search` draws, each with a fresh fit seed
        and score seed; returns the candidates and their outcomes, in order."""
        drawn: list[dict] = []
        outcomes: list[TrialOutcome] = []
        evaluated = False

        def evaluate_candidates(candidates: list[dict]) -> None:
            nonlocal evaluated
            if evaluated:  # the plan accounted one batch of trials, drawn as planned
                raise RuntimeError("a private search evaluates its candidates once")
            evaluated = True
            seeds = rng.integers(2**32, size=(len(candidates), 2))
            if self.verbose:
                print(f"[{type(self).__name__}] running the trials")
            drawn.extend(candidates)
            outcomes.extend(runner.run(candidates, seeds, self.n_jobs))

        self._run_search(evaluate_candidates, search.space, search.trials, rng)
        return drawn, outcomes

    def _select(self, drawn: list[dict], outcomes: list[TrialOutcome], fallback: dict,
                search: SearchInputs, plan: SearchPlan, split: SearchSplit) -> Any | None:
        """Keep the best trial (``best_params_``, ``best_score_``; ``cv_results_`` when every
        candidate ran) and return its model, or ``None`` if no trial ran."""
        selection = select_best(drawn, outcomes, split.n_validation, fallback, self.refit)
        self.best_params_, self.best_score_ = selection.params, selection.score
        if outcomes and not search.classifier:
            warn_if_scores_saturated(type(self).__name__, self.best_score_,
                                     float(self.score_clip), plan.score_noise_multiplier,
                                     split.n_validation)
        if search.exhaustive:  # every score is covered by the composition charged
            self.cv_results_ = results_table(drawn, outcomes, split.n_validation)
        return selection.model

    def _refit(self, best_trial: Any | None, runner: TrialRunner, seed: int,
               search: SearchInputs) -> None:
        """``best_estimator_``: the selected candidate refitted on all rows, or with
        ``refit=False`` the winning trial's model."""
        if self.refit:
            if self.verbose:
                print(f"[{type(self).__name__}] refitting the selected candidate on all rows")
            self.best_estimator_ = runner.refit(self.best_params_, seed, search.X, search.y)
        elif best_trial is not None:
            self.best_estimator_ = best_trial

    def _record(self, search: SearchInputs, plan: SearchPlan, split: SearchSplit) -> None:
        """The fitted attributes of the search's guarantee (public facts only)."""
        self.privacy_spent_ = (plan.epsilon, search.privacy[1])
        self.dp_event_ = plan.spend
        self.trial_privacy_ = (plan.trial_epsilon, plan.trial_delta)
        self.score_noise_multiplier_ = plan.score_noise_multiplier
        self.n_candidates_ = len(search.space.candidates)
        self.n_validation_ = split.n_validation

    # After the fit ------------------------------------------------------------------------
    def privacy_report(self) -> str:
        """What the search proved, in words (public facts only).

        Returns
        -------
        report : str
        """
        check_is_fitted(self, "privacy_spent_")
        return search_report(self)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        sub = get_tags(self.estimator)
        tags.estimator_type = sub.estimator_type
        tags.classifier_tags = deepcopy(sub.classifier_tags)
        tags.regressor_tags = deepcopy(sub.regressor_tags)
        tags.target_tags = deepcopy(sub.target_tags)
        tags.target_tags.required = True
        tags.input_tags = deepcopy(sub.input_tags)
        tags.non_deterministic = sub.non_deterministic
        return tags
