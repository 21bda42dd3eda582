"""PrivatePipeline: a scikit-learn Pipeline with one privacy budget for all its steps."""

from __future__ import annotations

import math
from numbers import Real

import numpy as np
from scipy import sparse
from sklearn.base import clone
from sklearn.pipeline import Pipeline, _name_estimators
from sklearn.utils._param_validation import Interval
from sklearn.utils.validation import _num_samples, check_is_fitted

from .._defaults.preprocessing import PREPROCESSING_SHARE
from .._fit.allocation import attach_allocation, detach_allocation
from .._fit.charging import charge_budget, resolve_budget
from .._fit.leaks import AccountsEveryStep
from .._fit.planned import PlannedSpend, plan_only, planned_spend
from .._utils.html import PrivacyReprMixin
from .._utils.validation import check_privacy, warn_if_delta_large
from ..accounting import Calibration
from ..budget._records import with_extra_delta
from ._html import pipeline_privacy_html
from ._input_check import check_input_before_charging
from ._layout import PipelineLayout, iter_dp_steps, layout_of
from ._report import pipeline_report
from ._split import PipelinePlan, plan_pipeline

__all__ = ["PrivatePipeline", "make_private_pipeline"]


class PrivatePipeline(PrivacyReprMixin, AccountsEveryStep, Pipeline):
    """A ``Pipeline`` whose whole fit, preprocessing and model, is differentially private
    within one privacy budget.

    Every step that learns from the data must do so under DP: skdp's transformers
    (:mod:`skdp.preprocessing`) and, as the final step, an skdp estimator; steps that learn
    nothing from the data (``FunctionTransformer``, ``HashingVectorizer``, encoders with
    public categories, ...) are free, and any other step is refused before the data is read,
    with the skdp replacement named. ``ColumnTransformer``, nested ``Pipeline``,
    ``FeatureUnion`` and ``TransformedTargetRegressor`` may hold them.

    ``fit`` plans everything before reading the data: it splits ``privacy`` among the DP steps
    by a public rule (see Notes), calibrates the model so that the preprocessing and the
    training together meet ``privacy`` exactly (their mechanisms composed by the model's
    accountant, not a sum of epsilons), charges ``budget`` once, and only then fits the steps.
    In every other way it is a scikit-learn ``Pipeline``: ``predict``, ``score``, indexing,
    ``get_params``/``set_params`` with ``step__param`` names, ``clone``, pickling, and use in
    ``cross_val_score`` or skdp's private searches.

    Parameters
    ----------
    steps : list of (str, estimator) tuples
        As for ``Pipeline``.
    privacy : tuple of (float, float), default=(1.0, 1e-5)
        ``(epsilon, delta)`` of everything the fitted pipeline releases, under add/remove-one-
        row neighbouring. ``(float('inf'), 0)`` fits every step without noise (a non-private
        reference). The steps' own ``privacy`` parameters must be left at their defaults.
    budget : skdp.PrivacyBudget, default=None
        A ledger charged once per fit for the whole pipeline (steps may not have their own);
        ``None`` charges the budget of an enclosing ``with budget:`` block, if any.
    preprocessing_share : float in (0, 1), default=0.3
        The share of the budget (of ``mu^2`` in Gaussian-DP terms) that all DP preprocessing
        gets together; the model is calibrated to use the rest.
    step_weights : dict, default=None
        Relative weights of the DP transformers within the preprocessing share, by parameter
        path (e.g. ``{'columntransformer__num__dpstandardscaler': 2}``); unnamed ones weigh 1.
    memory : None
        Must be None: caching fitted steps would reuse noisy statistics across fits.
    transform_input : list of str, default=None
        As for ``Pipeline``.
    verbose : bool, default=False
        As for ``Pipeline``.

    Attributes
    ----------
    privacy_spent_ : tuple of (float, float)
        The ``(epsilon, delta)`` proven for the whole fit; epsilon is never above the target.
    dp_event_ : dp_accounting.DpEvent
        What the pipeline released, as one DpEvent: the preprocessing's Gaussian mechanisms
        (composed exactly into one ``GaussianDpEvent``) followed by the model's training. With
        ``extra_delta_ = p > 0`` it is accounted at ``delta' = (delta - p) / (1 - p)``.
    extra_delta_ : float
        The (0, p) part of partition selection, included in ``privacy_spent_``'s delta.
    step_noise_multipliers_ : dict
        The noise multiplier of each DP transformer's release, by path.

    Notes
    -----
    The budget split (public, the same for every data set; ``skdp/pipeline/_split.py``):
    partition selection gets ``0.1 delta`` of (0, p) probability; of the Gaussian-DP ``mu^2``
    of one ``(epsilon, delta')``-DP Gaussian mechanism, all DP transformers together get
    ``preprocessing_share`` (equally, or by ``step_weights``); the model's noise is then
    calibrated so that the composition of everything is ``(epsilon, delta')``-DP.

    The number of rows and, for classifiers, the set of class labels (unless the model is
    given ``classes=``) are treated as public, as for skdp's estimators; so are the columns,
    their types and every parameter.

    See Also
    --------
    sklearn.pipeline.Pipeline : The non-private pipeline it extends.
    make_private_pipeline : Build one, naming the steps as ``make_pipeline`` does.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from sklearn.compose import ColumnTransformer
    >>> from skdp.linear_model import DPLogisticRegression
    >>> from skdp.pipeline import make_private_pipeline
    >>> from skdp.preprocessing import DPOneHotEncoder, DPStandardScaler
    >>> rng = np.random.default_rng(0)
    >>> X = pd.DataFrame({"age": rng.normal(40, 10, 20000),
    ...                   "city": rng.choice(["a", "b", "c"], 20000)})
    >>> y = (X["age"] + 10 * (X["city"] == "a") > 45).astype(int)
    >>> pre = ColumnTransformer([("num", DPStandardScaler(), ["age"]),
    ...                          ("cat", DPOneHotEncoder(), ["city"])])
    >>> model = make_private_pipeline(pre, DPLogisticRegression(), privacy=(1.0, 1e-5),
    ...                               random_state=0).fit(X, y)
    >>> model.privacy_spent_[0] <= 1.0
    True
    >>> model.score(X, y) > 0.9
    True
    """

    _parameter_constraints: dict = {
        **Pipeline._parameter_constraints,
        "privacy": "no_validation",  # check_privacy gives the messages
        "budget": "no_validation",
        "preprocessing_share": [Interval(Real, 0, 1, closed="neither")],
        "step_weights": [dict, None],
    }

    def __init__(
        self,
        steps,
        *,
        privacy=(1.0, 1e-5),
        budget=None,
        preprocessing_share=PREPROCESSING_SHARE,
        step_weights=None,
        memory=None,
        transform_input=None,
        verbose=False,
    ):
        super().__init__(steps, memory=memory, transform_input=transform_input, verbose=verbose)
        self.privacy = privacy
        self.budget = budget
        self.preprocessing_share = preprocessing_share
        self.step_weights = step_weights

    # --- plan -------------------------------------------------------------------------------
    def _layout(self, X) -> PipelineLayout:
        if self.memory is not None:
            raise ValueError(
                "a private pipeline cannot cache fitted steps (memory=...): a cached step would "
                "reuse noisy statistics across fits and clone steps; use memory=None"
            )
        layout = layout_of(list(self.steps), input_is_sparse=sparse.issparse(X))
        self._validate_steps()
        return layout

    def _plan(self, X, y, layout: PipelineLayout) -> PipelinePlan:
        privacy = check_privacy(self.privacy)
        n_samples = _num_samples(X)
        if math.isfinite(privacy[0]):
            warn_if_delta_large(privacy[1], n_samples)

        def plan_model(allocation) -> Calibration:
            # The model's plan depends on n (and, for classifiers, the labels) only: run its
            # fit as far as calibration on a placeholder of the right number of rows.
            model = clone(layout.model.step)
            attach_allocation(model, allocation)
            placeholder = np.zeros((n_samples, 1))
            return planned_spend(model, placeholder, y).calibration

        return plan_pipeline(
            layout, privacy, float(self.preprocessing_share), self.step_weights, plan_model
        )

    # --- fit --------------------------------------------------------------------------------
    def fit(self, X, y=None, **params):
        """Plan, charge once, then fit every step under its share of the privacy budget.

        Parameters
        ----------
        X : iterable
            Training data (e.g. a DataFrame with the raw columns).
        y : iterable, default=None
            Training targets.
        **params : dict
            Parameters routed to the steps, as for ``Pipeline.fit``.

        Returns
        -------
        self : PrivatePipeline
            The fitted pipeline.
        """
        self._validate_params()
        layout = self._layout(X)
        plan = self._plan(X, y, layout)
        spend = with_extra_delta(plan.event, plan.extra_delta)
        if plan_only():
            raise PlannedSpend(plan.calibration, spend)
        budget = resolve_budget(self.budget)
        if budget is not None:
            # Input the steps would refuse is refused before the ledger is charged.
            check_input_before_charging(list(self.steps), layout.model is not None, X, y)
            params_record = {"steps": [name for name, _ in self.steps],
                             "preprocessing_share": self.preprocessing_share}
            charge_budget(
                budget, spend, owner=type(self).__name__, params=params_record,
                mechanism="private pipeline: DP preprocessing and model, composed",
                is_private=plan.is_private,
            )
        allocated = list(layout.transformers) + ([layout.model] if layout.model else [])
        for step in layout.transformers:
            attach_allocation(step.step, plan.steps[step.path])
        if layout.model is not None:
            attach_allocation(layout.model.step, plan.model)
        try:
            super().fit(X, y, **params)
        finally:
            # Shares are used once; a step fitted later on its own must not find one.
            for step in allocated:
                detach_allocation(step.step)
        self._record(plan, layout)
        return self

    def fit_transform(self, X, y=None, **params):
        """``fit`` then ``transform`` (through the private fit).

        Parameters
        ----------
        X : iterable
            Training data.
        y : iterable, default=None
            Training targets.
        **params : dict
            Parameters routed to the steps.

        Returns
        -------
        Xt : ndarray or sparse matrix
            The transformed training data.
        """
        return self.fit(X, y, **params).transform(X)

    def _record(self, plan: PipelinePlan, layout: PipelineLayout) -> None:
        """Check that every DP step spent exactly its planned share, then record."""
        fitted = dict(iter_dp_steps(self, "", fitted=True))
        for path, allocation in plan.steps.items():
            step = fitted.get(path)
            if step is None:  # e.g. a ColumnTransformer branch that selected no column
                continue
            expected = allocation.noise_multiplier if step._release_weights() else 0.0
            if step.noise_multiplier_ != expected or (
                step.noise_multiplier_ > 0 and step._pipeline_path != path
            ):
                raise RuntimeError(
                    f"step {path!r} did not spend its planned share (noise multiplier "
                    f"{step.noise_multiplier_} instead of {expected}); please report this bug"
                )
        if layout.model is not None:
            model = fitted.get(layout.model.path)
            # The model's own event: the run, after its own scale search if it ran one
            # (priors beyond the preprocessing's, see skdp/_scale/public_scale.py).
            priors = plan.calibration.plan.prior_noise_multipliers
            own = priors[len(plan.model.prior_noise_multipliers):] if plan.model else ()
            planned = plan.calibration.plan.without_priors().with_priors(own)
            if model is None or model.noise_multiplier_ != plan.calibration.noise_multiplier or (
                plan.is_private
                and model.dp_event_ != planned.dp_event(plan.calibration.noise_multiplier)
            ):
                raise RuntimeError(
                    "the model did not train with its planned noise; please report this bug"
                )
        self.privacy_spent_ = (plan.calibration.epsilon, plan.delta)
        self.dp_event_ = plan.event
        self.extra_delta_ = plan.extra_delta
        self.step_noise_multipliers_ = {
            path: a.noise_multiplier for path, a in plan.steps.items()
        }
        self._privacy_plan = plan
        self._privacy_free_steps = layout.free

    def _privacy_html(self) -> str:
        return pipeline_privacy_html(self)

    def privacy_report(self) -> str:
        """The guarantee of the whole fit, the split, and what each step learned.

        Returns
        -------
        report : str
        """
        check_is_fitted(self, "privacy_spent_")
        fitted = dict(iter_dp_steps(self, "", fitted=True))
        return pipeline_report(self, self._privacy_plan, fitted, self._privacy_free_steps)


def make_private_pipeline(
    *steps,
    privacy=(1.0, 1e-5),
    budget=None,
    preprocessing_share=PREPROCESSING_SHARE,
    step_weights=None,
    memory=None,
    transform_input=None,
    verbose=False,
    random_state=None,
) -> PrivatePipeline:
    """Build a :class:`PrivatePipeline` from the steps, naming them as ``make_pipeline`` does.

    Parameters
    ----------
    *steps : list of estimators
        The steps: DP transformers and data-independent ones, then an skdp estimator.
    privacy : tuple of (float, float), default=(1.0, 1e-5)
        ``(epsilon, delta)`` of the whole pipeline.
    budget : skdp.PrivacyBudget, default=None
        A ledger charged once per fit.
    preprocessing_share : float in (0, 1), default=0.3
        The share of the budget all DP preprocessing gets.
    step_weights : dict, default=None
        Relative weights of the DP transformers, by parameter path.
    memory : None
        Must be None.
    transform_input : list of str, default=None
        As for ``make_pipeline``.
    verbose : bool, default=False
        As for ``make_pipeline``.
    random_state : int or None, default=None
        Convenience: sets ``random_state`` on every step (and nested step) that has one and
        has not set it, so a fit is reproducible. ``None`` leaves the steps as they are
        (their noise is drawn from OS entropy).

    Returns
    -------
    PrivatePipeline

    See Also
    --------
    sklearn.pipeline.make_pipeline : The non-private counterpart.
    PrivatePipeline : The class, with the budget split and the report.

    Examples
    --------
    >>> from skdp.linear_model import DPLogisticRegression
    >>> from skdp.pipeline import make_private_pipeline
    >>> from skdp.preprocessing import DPStandardScaler
    >>> model = make_private_pipeline(DPStandardScaler(bounds=(0, 100)), DPLogisticRegression(),
    ...                               privacy=(1.0, 1e-5), random_state=0)
    >>> [name for name, _ in model.steps]
    ['dpstandardscaler', 'dplogisticregression']
    """
    pipeline = PrivatePipeline(
        _name_estimators(steps), privacy=privacy, budget=budget,
        preprocessing_share=preprocessing_share, step_weights=step_weights, memory=memory,
        transform_input=transform_input, verbose=verbose,
    )
    if random_state is not None:
        seeds = np.random.SeedSequence(random_state).generate_state(64)
        params = pipeline.get_params(deep=True)
        keys = sorted(k for k, v in params.items() if k.endswith("random_state") and v is None)
        if len(keys) > seeds.size:
            seeds = np.random.SeedSequence(random_state).generate_state(len(keys))
        pipeline.set_params(**{k: int(seeds[i]) for i, k in enumerate(keys)})
    return pipeline
