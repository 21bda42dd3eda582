"""DPGridSearchCV and DPRandomizedSearchCV: hyperparameter search within one privacy budget."""

from __future__ import annotations

from copy import deepcopy
from numbers import Integral, Real

import dp_accounting
import numpy as np
from joblib import Parallel, delayed
from sklearn.base import BaseEstimator, MetaEstimatorMixin, _fit_context, clone, is_classifier
from sklearn.pipeline import Pipeline
from sklearn.utils import get_tags
from sklearn.utils._param_validation import HasMethods, Interval, StrOptions
from sklearn.utils.metaestimators import available_if
from sklearn.utils.validation import (
    _num_samples,
    check_consistent_length,
    check_is_fitted,
    check_random_state,
    indexable,
)

from .._fit.charging import resolve_budget
from .._utils.html import PrivacyReprMixin
from .._utils.validation import check_privacy, warn_if_delta_large, warn_user
from ..accounting import epsilon_of, make_accountant
from ..budget import PrivacyBudget
from ..pipeline._input_check import check_input_before_charging
from ._candidates import check_space, sample_candidate, search_target, support
from ._execution import candidate_key, check_spent, no_current_budget, run_trial
from ._plan import plan_search
from ._trials import TRIAL_DISTRIBUTIONS, TrialDistribution

__all__ = ["DPGridSearchCV", "DPRandomizedSearchCV"]


def _search_estimator_has(attr):
    def check(self):
        if hasattr(self, "best_estimator_"):
            return hasattr(self.best_estimator_, attr)
        return hasattr(self.estimator, attr)

    return check


def _safe_take(data, indices):
    from sklearn.utils import _safe_indexing

    return _safe_indexing(data, indices)


class BaseDPSearchCV(PrivacyReprMixin, MetaEstimatorMixin, BaseEstimator):
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

    # Subclasses: the parameter space, and whether every candidate runs once (composed).
    _space_name = ""

    def _space(self):
        raise NotImplementedError

    def _exhaustive(self) -> bool:
        return False

    def _sample_from_grid(self) -> bool:
        return True

    # The fit ----------------------------------------------------------------------------
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
        epsilon, delta = check_privacy(self.privacy)
        if not np.isfinite(epsilon):
            raise ValueError(
                "a private search needs a finite epsilon; for a non-private search use "
                "scikit-learn's GridSearchCV with privacy=(float('inf'), 0) estimators"
            )
        if y is None:
            raise ValueError(
                f"{type(self).__name__} requires y to be passed, but the target y is None"
            )
        X, y = indexable(X, y)
        check_consistent_length(X, y)
        n_samples = _num_samples(X)
        if n_samples < 2:
            raise ValueError(
                f"{type(self).__name__} needs at least 2 samples (a training and a validation "
                f"part), got n_samples={n_samples}"
            )
        warn_if_delta_large(delta, n_samples)
        target = search_target(self.estimator)
        step, prefix = target.model, target.model_prefix
        if step.accountant == "last_iterate":
            raise ValueError(
                "accountant='last_iterate' cannot be used in a private search: its guarantee "
                "is an RDP curve under the replace-one relation, while the search composes "
                "add/remove-one DpEvents; use accountant='pld' or 'rdp'"
            )
        classifier = is_classifier(self.estimator)
        space = check_space(self._space(), self._space_name, self.estimator)
        candidates = support(space)
        exhaustive = self._exhaustive()
        trials = None if exhaustive else TrialDistribution.make(
            self.n_trials_distribution, self.n_iter, self.eta
        )
        budget = self._resolve_budget(target)

        # Public randomness: the split, the number of trials, the candidates, the seeds.
        rng = np.random.default_rng(check_random_state(self.random_state).randint(2**32))
        is_val = rng.random(n_samples) < self.validation_fraction
        val_idx, train_idx = np.flatnonzero(is_val), np.flatnonzero(~is_val)
        if val_idx.size == 0 or train_idx.size == 0:
            raise ValueError(
                f"validation_fraction={self.validation_fraction} leaves an empty training or "
                f"validation part of {n_samples} rows"
            )
        X_train, y_train = _safe_take(X, train_idx), _safe_take(y, train_idx)
        X_val, y_val = _safe_take(X, val_idx), _safe_take(y, val_idx)

        template = clone(self.estimator).set_params(**{
            f"{prefix}accountant": "rdp", f"{target.privacy_prefix}budget": None,
            f"{prefix}verbose": 0,
        })
        if classifier and "classes" in step.get_params() and step.classes is None:
            # Read from y, as the estimator itself would: the same public assumption, made
            # once, so that every trial and the refit know every class.
            template.set_params(**{f"{prefix}classes": np.unique(np.asarray(y))})

        def with_privacy(params, trial_epsilon):
            return {**params, f"{target.privacy_prefix}privacy": (trial_epsilon, plan.trial_delta)}

        def seeded(seed: int) -> dict:
            # Every DP step gets its own fresh seed in every fit: a seed reused across fits on
            # overlapping rows would correlate their noise.
            seeds = np.random.SeedSequence(seed).generate_state(len(target.seed_params))
            return {name: int(s) for name, s in zip(target.seed_params, seeds, strict=True)}

        # Input the estimator would refuse is refused now, before anything is charged (a
        # private pipeline's model sees the preprocessed X only after its steps released).
        steps = list(template.steps) if isinstance(template, Pipeline) else [("model", template)]
        check_input_before_charging(steps, True, X, y)
        plan = plan_search(
            template, target.privacy_prefix, candidates, trials, (X_train, y_train), (X, y),
            (epsilon, delta), bool(self.refit), float(self.score_epsilon_ratio),
        )
        if self.verbose:
            print(
                f"[{type(self).__name__}] {len(candidates)} candidates; "
                + ("every candidate once (composed)" if exhaustive
                   else f"random number of trials, {trials.describe()}")
                + f"; each trial: fit at epsilon={plan.trial_epsilon:.4g}, score noise "
                f"multiplier {plan.score_noise_multiplier:.4g}; total epsilon "
                f"{plan.epsilon:.4g} at delta={delta:g}"
            )

        # Charge once, before the data is used; a refused search charges and runs nothing.
        if budget is not None:
            budget.charge(
                plan.spend,
                estimator=type(self).__name__,
                params=self._public_record(len(candidates)),
                mechanism=self._mechanism(trials, plan.trial_epsilon, plan.trial_delta),
                neighboring_relation="add_or_remove_one",
            )

        if exhaustive:
            drawn = [dict(c) for c in candidates]
        else:
            n_trials = trials.sample(rng)
            grid = candidates if self._sample_from_grid() else None
            drawn = [sample_candidate(space, rng, grid) for _ in range(n_trials)]
        seeds = rng.integers(2**32, size=(len(drawn), 2))
        refit_seed = int(rng.integers(2**32))
        fallback = sample_candidate(space, rng, candidates)

        if self.verbose:
            print(f"[{type(self).__name__}] running the trials")
        results = Parallel(n_jobs=self.n_jobs)(
            delayed(run_trial)(
                template,
                {**with_privacy(cand, plan.trial_epsilon), **seeded(int(fit_seed))},
                X_train, y_train, X_val, y_val, int(score_seed),
                classifier, float(self.score_clip), plan.score_noise_multiplier,
            )
            for cand, (fit_seed, score_seed) in zip(drawn, seeds, strict=True)
        )

        for cand, (_, model) in zip(drawn, results, strict=True):
            check_spent(model, plan.planned_fit[candidate_key(cand)], "a trial")
        if results:
            scores = np.array([s for s, _ in results])
            winner = int(np.argmax(scores))
            self.best_params_ = dict(drawn[winner])
            self.best_score_ = float(scores[winner]) / val_idx.size
            best_trial = results[winner][1]
            if not classifier:
                self._warn_if_scores_saturated(plan.score_noise_multiplier, val_idx.size)
        else:  # Poisson drew no trial: the selection released nothing (public fallback).
            warn_user(
                "the Poisson number of trials was 0 (the selection released nothing); "
                + ("refitting a candidate drawn at random" if self.refit else
                   "no model is released: use refit=True or another n_trials_distribution"),
                RuntimeWarning,
            )
            self.best_params_, self.best_score_, best_trial = dict(fallback), np.nan, None
        if exhaustive:
            self.cv_results_ = {
                "params": [dict(c) for c in drawn],
                "noisy_validation_score": np.array([s for s, _ in results]) / val_idx.size,
            }
        del results  # the other trials' models are never released

        if self.refit:
            if self.verbose:
                print(f"[{type(self).__name__}] refitting the selected candidate on all rows")
            final = clone(template).set_params(
                **with_privacy(self.best_params_, plan.trial_epsilon),
                **seeded(refit_seed), **{f"{prefix}verbose": step.verbose},
            )
            with no_current_budget():
                final.fit(X, y)
            check_spent(final, plan.planned_refit[candidate_key(self.best_params_)], "the refit")
            self.best_estimator_ = final
        elif best_trial is not None:
            self.best_estimator_ = best_trial

        self.privacy_spent_ = (plan.epsilon, delta)
        self.dp_event_ = plan.spend
        self.trial_privacy_ = (plan.trial_epsilon, plan.trial_delta)
        self.score_noise_multiplier_ = plan.score_noise_multiplier
        self.n_candidates_ = len(candidates)
        self.n_validation_ = int(val_idx.size)
        return self

    # Helpers ----------------------------------------------------------------------------
    def _warn_if_scores_saturated(self, score_noise_multiplier: float, n_validation: int):
        """Warn when even the best (noisy, released) score is about ``-score_clip``: nearly every
        validation row's squared error was clipped, so the scores could not tell the
        candidates apart (y in units far from 1, say prices in dollars). Post-processing of
        released values: free."""
        clip = float(self.score_clip)
        noise = score_noise_multiplier * clip / n_validation  # std of the released mean
        if self.best_score_ > -0.9 * clip + 2.0 * noise:
            return
        warn_user(
            f"{type(self).__name__}: even the best validation score ({self.best_score_:.4g}) "
            f"is about -score_clip (-{clip:g}): nearly every row's squared error was clipped, "
            "so the search could not tell the candidates apart and its choice is close to "
            "random. score_clip is in squared units of y: pass a public bound on a row's "
            "squared error, e.g. score_clip=((high - low) / 2)**2 from the targets' "
            "documented range, or put y on a roughly unit scale.",
            UserWarning,
        )

    def _resolve_budget(self, target) -> PrivacyBudget | None:
        """``budget=``, else the estimator's own ``budget`` (the DP estimator's, or the private
        pipeline's), else ``with budget:``."""
        budget = self.budget
        own = self.estimator.get_params()[f"{target.privacy_prefix}budget"]
        if budget is None:
            budget = own
        elif own is not None and own is not budget:
            raise ValueError(
                "the search's budget and its estimator's budget are different ledgers; the "
                "whole search is charged once, to one of them: set only one"
            )
        budget = resolve_budget(budget)
        if budget is not None and budget.neighboring_relation.value != "add_or_remove_one":
            raise ValueError(
                "a private search states its guarantee under the add/remove-one relation; "
                "this budget accounts replace-one spends, and the two cannot be composed"
            )
        return budget

    def _public_record(self, n_candidates: int) -> dict:
        return {
            "privacy": list(check_privacy(self.privacy)),
            "n_iter": self.n_iter,
            "n_trials_distribution": self.n_trials_distribution,
            "eta": self.eta,
            "refit": self.refit,
            "n_candidates": n_candidates,
            "estimator": type(self.estimator).__name__,
        }

    def _mechanism(self, trials, trial_epsilon: float, delta: float) -> str:
        how = ("every candidate once, composed" if trials is None
               else f"repeat-and-select, {trials.describe()}")
        refit = "; refit of the winner on all rows" if self.refit else ""
        return (
            f"private hyperparameter search ({how}); each trial a DP fit at "
            f"({trial_epsilon:.4g}, {delta:g}) plus a Gaussian noisy validation score{refit}"
        )

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

    # Delegation to the selected model ---------------------------------------------------
    @available_if(_search_estimator_has("predict"))
    def predict(self, X):
        """Predict with the selected model.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        y_pred : ndarray
        """
        check_is_fitted(self, "best_estimator_")
        return self.best_estimator_.predict(X)

    @available_if(_search_estimator_has("predict_proba"))
    def predict_proba(self, X):
        """Class probabilities of the selected model.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        proba : ndarray of shape (n_samples, n_classes)
        """
        check_is_fitted(self, "best_estimator_")
        return self.best_estimator_.predict_proba(X)

    @available_if(_search_estimator_has("predict_log_proba"))
    def predict_log_proba(self, X):
        """Log class probabilities of the selected model.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        log_proba : ndarray of shape (n_samples, n_classes)
        """
        check_is_fitted(self, "best_estimator_")
        return self.best_estimator_.predict_log_proba(X)

    @available_if(_search_estimator_has("decision_function"))
    def decision_function(self, X):
        """Decision function of the selected model.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        scores : ndarray
        """
        check_is_fitted(self, "best_estimator_")
        return self.best_estimator_.decision_function(X)

    @available_if(_search_estimator_has("score"))
    def score(self, X, y):
        """The selected model's ``score`` (accuracy or R^2; not private: your test data).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,) or (n_samples, n_outputs)

        Returns
        -------
        score : float
        """
        check_is_fitted(self, "best_estimator_")
        return self.best_estimator_.score(X, y)

    @property
    def classes_(self):
        """Class labels of the selected model."""
        check_is_fitted(self, "best_estimator_")
        return self.best_estimator_.classes_

    @property
    def n_features_in_(self):
        """Number of features seen during fit."""
        try:
            check_is_fitted(self, "best_estimator_")
        except Exception as exc:
            raise AttributeError(
                f"{type(self).__name__} has no n_features_in_ before fit"
            ) from exc
        return self.best_estimator_.n_features_in_

    @property
    def feature_names_in_(self):
        """Names of features seen during fit (when ``X`` had string column names)."""
        try:
            check_is_fitted(self, "best_estimator_")
        except Exception as exc:
            raise AttributeError(
                f"{type(self).__name__} has no feature_names_in_ before fit"
            ) from exc
        return self.best_estimator_.feature_names_in_

    def privacy_report(self) -> str:
        """What the search proved, in words (public facts only).

        Returns
        -------
        report : str
        """
        check_is_fitted(self, "privacy_spent_")
        eps, delta = self.privacy_spent_
        trial_epsilon, trial_delta = self.trial_privacy_
        tighter = ""
        if isinstance(self.dp_event_, dp_accounting.DpEvent) and make_accountant(
            "pld"
        ).supports(self.dp_event_):
            # An exhaustive search's spend is a plain composition, which PLD (what a budget
            # ledger uses) may bound more tightly than the RDP the search was calibrated with.
            pld = epsilon_of(self.dp_event_, delta, "pld")
            if pld < eps:
                tighter = (f" (re-accounted with PLD, as a budget ledger records it: "
                           f"({pld:.4g}, {delta:g}))")
        return (
            f"{type(self).__name__}: ({eps:.4g}, {delta:g})-DP under add/remove-one-row "
            f"neighbouring (RDP accounting), for the whole search"
            + (" including the refit" if self.refit else "") + tighter
            + f". Each trial: a DP fit calibrated to ({trial_epsilon:.4g}, {trial_delta:.3g}) "
            f"on a random training part, plus a noisy validation score (Gaussian noise "
            f"multiplier {self.score_noise_multiplier_:.4g}) on the other "
            f"{self.n_validation_} rows; {self.n_candidates_} candidates. The number of rows "
            "and of validation rows are treated as public."
        )


_SHARED_PARAMS_DOC = """privacy : tuple of (float, float), default=(1.0, 1e-5)
        The total ``(epsilon, delta)`` of the whole search: every trial's fit and noisy score,
        the selection, and the refit. ``epsilon`` must be finite.
    refit : bool, default=True
        Refit the selected candidate on all rows (a DP fit with the per-trial budget, composed
        into ``privacy``). ``False``: ``best_estimator_`` is the winning trial's model, trained
        on the training part only, and the whole budget goes to the trials.
    validation_fraction : float in (0, 1), default=0.2
        Each row goes to the validation part with this probability (public coins), to the
        training part otherwise; the same split serves every trial.
    score_epsilon_ratio : float, default=0.3
        Noise of the validation score: the Gaussian mechanism on the score sum, on its own,
        is ``(score_epsilon_ratio * per-trial epsilon, delta)``-DP.
    score_clip : float, default=4.0
        Regressors only: the squared error of a validation row is clipped to this value (the
        sensitivity of the score sum). Classifiers use accuracy (sensitivity 1). It is in
        squared units of ``y`` (of the estimator's predictions, after any
        ``TransformedTargetRegressor``): 4.0 suits targets on a roughly unit scale. For raw
        units pass a public bound, e.g. ``((high - low) / 2)**2`` from the targets' documented
        range; when even the best score is about ``-score_clip`` the search warns that it could
        not tell the candidates apart.
    budget : skdp.PrivacyBudget, default=None
        A ledger to charge the whole search to, once, before any data is used; a search that
        would exceed it raises :class:`skdp.BudgetExceededError` and charges nothing. ``None``:
        the DP estimator's own ``budget``, else an enclosing ``with budget:`` block. Trials and
        the refit never charge on their own.
    n_jobs : int, default=None
        Trials run through joblib (so a Dask or Ray joblib backend spreads them over a
        cluster); calibration, accounting and selection stay in this process.
    random_state : int, RandomState instance or None, default=None
        Seeds the split, the number of trials, the candidates drawn and every trial.
    verbose : int, default=0
        Print the calibration and the stages of the search. Never the number of trials or
        per-trial results: the guarantee of a random number of trials needs it hidden.
"""

_SHARED_ATTRIBUTES_DOC = """
    best_estimator_ : estimator
        The selected model (refitted on all rows when ``refit=True``).
    best_params_ : dict
        Parameters of the selected candidate.
    best_score_ : float
        The selected trial's noisy validation score (accuracy, or minus the clipped mean squared
        error), released with the selection. Not set to a real value if no trial ran.
    privacy_spent_ : tuple of (float, float)
        The total ``(epsilon, delta)`` of the search (RDP accounting), never above ``privacy``.
    dp_event_ : dp_accounting.DpEvent or skdp.budget.RdpCurve
        What the search spent, as charged to a budget: a DpEvent when one candidate is the
        costliest at every Renyi order, otherwise the RDP curve of the worst case.
    trial_privacy_ : tuple of (float, float)
        The ``(epsilon, delta)`` each trial's fit (and the refit) was calibrated to.
    score_noise_multiplier_ : float
        Standard deviation of the score's noise divided by its sensitivity.
    n_candidates_ : int
        Number of candidates in the parameter space (public).
    n_validation_ : int
        Number of validation rows (treated as public, like the number of rows).
    n_features_in_ : int
        Number of features seen during fit (from ``best_estimator_``).
    feature_names_in_ : ndarray of shape (n_features_in_,)
        Names of features seen during fit (from ``best_estimator_``).
"""


class DPRandomizedSearchCV(BaseDPSearchCV):
    __doc__ = """Private randomized search: a random number of trials, only the best one released.

    Each trial draws a candidate with public coins (a dict of ``param_distributions``, then
    each parameter uniformly from its list), fits it with differential privacy on a random
    training part of the data and scores it with a noisy validation score on the rest. The
    number of trials is random with mean ``n_iter`` (Papernot & Steinke 2022), which makes the
    cost of selecting the best of them grow only like ``log(n_iter)``. Only the selected
    candidate is released (refitted on all rows by default). The per-trial budget is
    calibrated so that the whole search, refit included, is ``privacy``-DP.

    Parameters
    ----------
    estimator : skdp estimator or Pipeline
        A DP estimator, or a Pipeline of data-independent steps ending in one.
    param_distributions : dict or list of dicts
        Parameter names (``clf__max_grad_norm`` in a Pipeline) to finite lists of values.
        Distributions (objects with ``rvs``) are refused: each trial's cost is bounded by the
        worst candidate, which must be enumerable.
    n_iter : float, default=10
        Mean number of trials (> 1).
    n_trials_distribution : {'logarithmic', 'geometric', 'negative_binomial', 'poisson'}, \
default='geometric'
        Distribution of the number of trials: truncated negative binomial with ``eta`` 0
        (logarithmic, cheapest, often a single trial), 1 (geometric), ``eta``
        ('negative_binomial'), or Poisson (may run no trial; costs more at large means).
    eta : float, default=0.5
        Shape of ``'negative_binomial'``.
    """ + _SHARED_PARAMS_DOC + """
    Attributes
    ----------""" + _SHARED_ATTRIBUTES_DOC + """
    See Also
    --------
    sklearn.model_selection.RandomizedSearchCV : The non-private search it mirrors.
    DPGridSearchCV : The same over a grid, or every candidate once.

    Notes
    -----
    Nothing per trial is released: not the number of trials, not which candidates were tried,
    not their scores or models. Knowing the number of trials would void the random-stopping
    bound (the best of a known number ``k`` of runs can cost up to ``k`` runs). There is no
    ``cv_results_``. Timing is not protected.

    Examples
    --------
    >>> from sklearn.datasets import make_classification
    >>> from skdp.linear_model import DPLogisticRegression
    >>> from skdp.model_selection import DPRandomizedSearchCV
    >>> X, y = make_classification(n_samples=2000, random_state=0)
    >>> search = DPRandomizedSearchCV(
    ...     DPLogisticRegression(max_iter=5), {"eta0": [0.5, 1.0, 2.0]},
    ...     privacy=(2.0, 1e-5), n_iter=4, random_state=0).fit(X, y)
    >>> search.privacy_spent_[0] <= 2.0
    True
    >>> sorted(search.best_params_)
    ['eta0']
    """

    _space_name = "param_distributions"
    _parameter_constraints: dict = {
        **BaseDPSearchCV._parameter_constraints,
        "param_distributions": [dict, list],
    }

    def __init__(
        self,
        estimator,
        param_distributions,
        *,
        privacy=(1.0, 1e-5),
        n_iter=10,
        n_trials_distribution="geometric",
        eta=0.5,
        refit=True,
        validation_fraction=0.2,
        score_epsilon_ratio=0.3,
        score_clip=4.0,
        budget=None,
        n_jobs=None,
        random_state=None,
        verbose=0,
    ):
        self.estimator = estimator
        self.param_distributions = param_distributions
        self.privacy = privacy
        self.n_iter = n_iter
        self.n_trials_distribution = n_trials_distribution
        self.eta = eta
        self.refit = refit
        self.validation_fraction = validation_fraction
        self.score_epsilon_ratio = score_epsilon_ratio
        self.score_clip = score_clip
        self.budget = budget
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.verbose = verbose

    def _space(self):
        return self.param_distributions

    def _sample_from_grid(self) -> bool:
        return False


class DPGridSearchCV(BaseDPSearchCV):
    __doc__ = """Private grid search: candidates drawn at random from a grid, or all, composed.

    By default (``exhaustive=False``) it is the private randomized search over the grid's
    points: a random number of trials with mean ``n_iter``, each on a candidate drawn
    uniformly at random from the grid, only the best released, at a selection cost that grows
    like ``log(n_iter)``. With ``exhaustive=True`` every candidate runs once, and the search is
    charged the full composition of all of them (the selection is then free, and the noisy
    validation scores are released in ``cv_results_``); it costs far more for a large grid.

    Parameters
    ----------
    estimator : skdp estimator or Pipeline
        A DP estimator, or a Pipeline of data-independent steps ending in one.
    param_grid : dict or list of dicts
        As in scikit-learn's ``GridSearchCV``.
    exhaustive : bool, default=False
        Try every candidate once, charged the composition of all of them.
    n_iter : float, default=10
        Mean number of trials when ``exhaustive=False`` (> 1).
    n_trials_distribution : {'logarithmic', 'geometric', 'negative_binomial', 'poisson'}, \
default='geometric'
        See :class:`DPRandomizedSearchCV`.
    eta : float, default=0.5
        Shape of ``'negative_binomial'``.
    """ + _SHARED_PARAMS_DOC + """
    Attributes
    ----------""" + _SHARED_ATTRIBUTES_DOC + """    cv_results_ : dict
        Only with ``exhaustive=True``: ``params`` (every candidate, in grid order) and
        ``noisy_validation_score`` (each trial's noisy score, covered by the composition).

    See Also
    --------
    sklearn.model_selection.GridSearchCV : The non-private search it mirrors.
    DPRandomizedSearchCV : Candidates drawn from lists, parameter by parameter.

    Examples
    --------
    >>> from sklearn.datasets import make_classification
    >>> from skdp.linear_model import DPLogisticRegression
    >>> from skdp.model_selection import DPGridSearchCV
    >>> X, y = make_classification(n_samples=2000, random_state=0)
    >>> search = DPGridSearchCV(
    ...     DPLogisticRegression(max_iter=5), {"eta0": [0.5, 2.0]}, exhaustive=True,
    ...     privacy=(2.0, 1e-5), random_state=0).fit(X, y)
    >>> len(search.cv_results_["params"])
    2
    >>> search.privacy_spent_[0] <= 2.0
    True
    """

    _space_name = "param_grid"
    _parameter_constraints: dict = {
        **BaseDPSearchCV._parameter_constraints,
        "param_grid": [dict, list],
        "exhaustive": ["boolean"],
    }

    def __init__(
        self,
        estimator,
        param_grid,
        *,
        exhaustive=False,
        privacy=(1.0, 1e-5),
        n_iter=10,
        n_trials_distribution="geometric",
        eta=0.5,
        refit=True,
        validation_fraction=0.2,
        score_epsilon_ratio=0.3,
        score_clip=4.0,
        budget=None,
        n_jobs=None,
        random_state=None,
        verbose=0,
    ):
        self.estimator = estimator
        self.param_grid = param_grid
        self.exhaustive = exhaustive
        self.privacy = privacy
        self.n_iter = n_iter
        self.n_trials_distribution = n_trials_distribution
        self.eta = eta
        self.refit = refit
        self.validation_fraction = validation_fraction
        self.score_epsilon_ratio = score_epsilon_ratio
        self.score_clip = score_clip
        self.budget = budget
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.verbose = verbose

    def _space(self):
        return self.param_grid

    def _exhaustive(self) -> bool:
        return bool(self.exhaustive)
