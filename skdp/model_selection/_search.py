"""DPGridSearchCV and DPRandomizedSearchCV: hyperparameter search within one privacy budget.

The two differ only in how their candidates are drawn (``_run_search``) and, for the grid,
whether every candidate runs once (``exhaustive``); the rest of the search is
``BaseDPSearchCV``'s (in ``_base``).
"""

from __future__ import annotations

import numpy as np

from ._base import BaseDPSearchCV, EvaluateCandidates
from ._candidates import SearchSpace
from ._trials import TrialDistribution

__all__ = ["DPGridSearchCV", "DPRandomizedSearchCV"]


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

    def _run_search(self, evaluate_candidates: EvaluateCandidates, space: SearchSpace,
                    trials: TrialDistribution | None, rng: np.random.Generator) -> None:
        # A random number of trials, each candidate drawn parameter by parameter.
        n_trials = trials.sample(rng)
        evaluate_candidates([space.draw_by_parameter(rng) for _ in range(n_trials)])


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

    def _trial_distribution(self) -> TrialDistribution | None:
        return None if self.exhaustive else super()._trial_distribution()

    def _run_search(self, evaluate_candidates: EvaluateCandidates, space: SearchSpace,
                    trials: TrialDistribution | None, rng: np.random.Generator) -> None:
        if trials is None:  # exhaustive: every candidate once, as the plan composed them
            evaluate_candidates(space.every_candidate())
            return
        # A random number of trials, each candidate drawn uniformly from the grid's points.
        n_trials = trials.sample(rng)
        evaluate_candidates([space.draw_point(rng) for _ in range(n_trials)])
