"""DPRidge: ridge regression trained with differential privacy."""

from __future__ import annotations

import math
from numbers import Real

import numpy as np
from sklearn.base import RegressorMixin, _fit_context
from sklearn.utils._param_validation import Interval

from .._engine._glm import GLMLoss
from .._fit import docstrings as _doc
from .._fit.flow import FitRecipe, PrivacyTarget
from .._scale.public_scale import range_scale, search_needs
from ..mechanisms._ssp.mechanism import LABEL as SSP_LABEL
from ..mechanisms._ssp.mechanism import SSP, SSPBounds
from ._base import BaseDPLinearModel, linear_params

__all__ = ["DPRidge"]


class DPRidge(RegressorMixin, BaseDPLinearModel):
    __doc__ = _doc.assemble(
        """Ridge regression trained with differential privacy.

        The model minimises the same objective as scikit-learn's ``Ridge``,
        ``||y - X w - b||^2 + alpha ||w||^2`` (here divided by ``2 n``), by DP-SGD: per-example
        gradients of the squared error (computed in closed form) are clipped to
        ``max_grad_norm``, Gaussian noise calibrated to ``privacy`` is added to their sum, and
        the noisy mean takes a gradient step.

        The defaults are scale-free: the fit finds a public bound on the row norms and a public
        centre and range of the targets with a small, accounted DP search
        (``max_row_norm='auto'``) and trains on that scale, with a step size and number of
        epochs that are public functions of ``n``, ``d`` and the calibrated noise
        (``eta0='auto'``, ``max_iter='auto'``), so features and targets may come in any units.
        Centring or scaling statistics learned from the private data outside skdp would leak
        outside the accounting: use :mod:`skdp.preprocessing`.
        """,
        parameters=[
            _doc.PRIVACY,
            """
            alpha : float, default=1.0
                L2 regularisation strength, as in scikit-learn's ``Ridge``.
            """,
            _doc.optimizer(closed_form={"ssp": """
                AdaSSP (Wang 2018), no SGD at all: ``X^T X``, ``X^T y`` and the smallest
                eigenvalue of ``X^T X`` of the clipped rows are released once through Gaussian
                mechanisms (calibrated jointly, PLD), and the ridge system with ``alpha`` plus
                an adaptive ``lambda`` is solved in float64 (see Notes). It needs public bounds
                on the rows and the targets, ``max_row_norm`` and ``target_bound``, or the public
                scale that ``max_row_norm='auto'`` finds privately; the SGD parameters
                (``max_grad_norm``, ``learning_rate``, ``eta0``, ``power_t``,
                ``noise_schedule``, ``noise_decay``, ``batch_size``, ``max_iter``, ``average``,
                ``projection_radius``, ``verbose``) are ignored.
            """}),
            _doc.optimizer_params(closed_form="""
                ``'ssp'``: ``rho``, ``budget_split`` (``'equal'``, ``'autodp'`` or three
                relative noise multipliers of lambda_min, ``X^T X``, ``X^T y``),
                ``symmetric_noise`` (``'goe'`` or ``'mirror'``), ``eigen_floor`` (eigenvalues of
                the noisy ``X^T X`` below ``eigen_floor * lambda`` are raised to it; ``None``
                adds ``lambda`` to all, the paper's rule).
            """),
            _doc.MAX_GRAD_NORM,
            _doc.learning_rate("eta0"),
            _doc.eta0(),
            _doc.POWER_T,
            _doc.NOISE_SCHEDULE,
            _doc.NOISE_DECAY,
            _doc.batch_size(parameter_floor=True),
            _doc.linear_max_iter(),
            _doc.FIT_INTERCEPT,
            _doc.AVERAGE,
            _doc.accountant(last_iterate=True),
            _doc.PROJECTION_RADIUS,
            _doc.entry("max_row_norm : float, 'auto' or None, default='auto'", """
                ``'auto'``: train on a public scale found privately. A noisy binary search (one
                Gaussian mechanism, composed with the training in ``privacy_spent_``; it gets a
                small share of the fit's Gaussian-DP ``mu^2``, more on small data sets where
                that share cannot locate the quantiles) finds a bound ``B`` on the row norms (a
                high quantile) and a low and a high quantile of ``y``. Rows are scaled down to
                ``B`` and divided by it, targets centred, divided by their half-range and
                clipped to [-1, 1], so one step size and clipping bound hold whatever the data's
                units; the coefficients are reported in the original units and
                ``row_norm_bound_`` records ``B``. Where the noise locates only inner quantiles,
                each range is widened (post-processing) to where a normal shape through them
                puts a pair of outer quantiles: clipped to inner quantiles, targets would bias
                every fit towards their centre. When ``n`` is too small for the privacy to
                locate even the quartiles, a :class:`~skdp.PrivacyWarning` says so (with the
                rows or epsilon that would do), and the search looks for medians instead (far
                fewer rows suffice; with ``fit_intercept=True``): of the row norms and of ``y``
                where the noise allows, else of ``y`` alone. Targets are centred on their median
                and keep their units; rows are divided (not clipped) by a fixed fraction of
                their median norm, so that a typical row has the norm that the step for rows
                without a bound assumes. On a few hundred rows the model is then about as good as
                predicting the median. Below that the fit trains on the data as given. The
                quantiles, shares and widening: :doc:`the defaults page
                </user_guide/defaults>`. ``None``: no bound, rows as given.
            """, _doc.GIVEN_ROW_BOUND, """
                With ``optimizer='ssp'`` a float is the bound ``B_x`` (rows are clipped to it).
            """),
            """
            target_bound : float or (low, high), default=None
                Public range of the targets: ``B_y`` for ``[-B_y, B_y]``, or a pair
                ``(low, high)`` (every target, with several). Take it from the documented range
                of the target, never from the private data. With it, ``y`` is centred on the
                range, divided by its half-width and clipped to it (per row, free under DP;
                predictions are in the original units), whatever ``max_row_norm`` is:
                ``max_row_norm='auto'`` then searches only for the rows' scale, and where that
                search is infeasible (small data) the targets are still on a public scale. With
                ``optimizer='ssp'`` it is the bound ``B_y`` of the released ``X^T y`` (with
                several targets, each row of centred ``y`` is clipped to L2 norm
                ``B_y sqrt(n_targets)``).
            """,
            _doc.BUDGET,
            _doc.DEVICE,
            _doc.random_state(initial_weights=False),
            _doc.VERBOSE,
        ],
        attributes=[
            """
            coef_ : ndarray of shape (n_features,) or (n_targets, n_features)
                Coefficients.
            """,
            """
            intercept_ : float or ndarray of shape (n_targets,)
                Intercept.
            """,
            _doc.PRIVACY_SPENT_,
            _doc.dp_event_(last_iterate=True),
            _doc.NOISE_MULTIPLIER_,
            _doc.extend(_doc.BATCH_SIZE_, "Not set with ``optimizer='ssp'``."),
            _doc.extend(_doc.learning_rate_("eta0"), "Not set with ``optimizer='ssp'``."),
            _doc.ROW_NORM_BOUND_,
            _doc.extend(_doc.N_ITER_, "1 for ``optimizer='ssp'``, which reads the data once."),
            _doc.extend(_doc.N_STEPS_, "Not set with ``optimizer='ssp'``."),
            _doc.DEVICE_,
            _doc.N_FEATURES_IN_,
            _doc.FEATURE_NAMES_IN_,
            """
            noise_std_ : dict
                ``optimizer='ssp'`` only: the noise standard deviations of the releases
                ``'lambda_min'``, ``'gram'`` (``X^T X``) and ``'cross'`` (``X^T y``).
            """,
            """
            lambda_min_released_ : float
                ``optimizer='ssp'`` only: the released (noisy, shifted down) smallest eigenvalue
                of ``X^T X`` (NaN without privacy).
            """,
            """
            adaptive_lambda_ : float
                ``optimizer='ssp'`` only: the ridge added for stability, on top of ``alpha``.
            """,
            """
            solver_fallback_ : {None, 'psd_projection', 'lstsq'}
                ``optimizer='ssp'`` only: which fallback of the solve ran, if any.
            """,
        ],
        sections="""
        See Also
        --------
        sklearn.linear_model.Ridge : The non-private estimator it mirrors.
        DPLogisticRegression : Logistic regression trained with differential privacy.

        Notes
        -----
        The number of rows ``n`` is treated as public, as in every DP-SGD library.

        ``accountant='last_iterate'`` (Altschuler & Talwar 2022, eq. B.2/B.3; implementer's notes
        in ``docs/specs/noisy_sgd_last_iterate_privacy.md``) needs every per-example loss to be
        convex and ``M``-smooth for every possible row, with gradients bounded by ``L``, and
        ``eta0 <= 2 / M`` so that every per-example step is a contraction. Here:

        - ``L = max_grad_norm``. Clipping stays on: the clipped squared error is a convex Huber
          loss with no more curvature than the original, so targets need no bound of their own.
        - ``M = R^2 + l2``, with ``R^2 = max_row_norm^2 + 1`` (the intercept acts as a constant
          feature 1; ``R = max_row_norm`` when ``fit_intercept=False``) and ``l2 = alpha / n``.
        - Strong convexity ``m = l2`` when the penalty covers every parameter
          (``fit_intercept=False``): the strongly convex bound (eq. B.3) then reaches its plateau
          after about ``1 / (eta0 * l2)`` steps. The intercept is not penalised, as in
          scikit-learn, so with ``fit_intercept=True`` ``m = 0`` and the convex bound (eq. B.2)
          applies; to get the strongly convex one with an intercept, add a constant column (e.g.
          1) to ``X`` and set ``fit_intercept=False``.

        Without strong convexity, privacy stops growing after a burn-in of about
        ``2 * projection_radius * batch_size / (max_grad_norm * eta0)`` epochs (the bound departs
        from the standard one after one to three times that), so small batches, a small ball and
        the largest allowed step shorten it. The guarantee covers only the last iterate, under the
        replace-one relation: ``dp_event_`` is then the proven RDP curve (no ``dp_accounting``
        event describes this bound), and a ``budget`` must have been created with
        ``neighboring_relation='replace_one'``.

        ``optimizer='ssp'`` (AdaSSP; ``docs/specs/adassp.md``): rows of ``X`` are clipped to
        ``B_x = max_row_norm`` and ``y`` to ``B_y = target_bound``; with ``fit_intercept`` a
        constant column ``c = B_x`` is appended (rows then have norm at most ``sqrt(2) B_x``) and
        its coefficient is not penalised by ``alpha``. Three Gaussian releases (add/remove
        sensitivities ``B^2``, ``B^2``, ``B B_y``) are calibrated jointly so that together they
        spend exactly ``privacy``; ``lambda = max(0, eta - lambda_min~)`` with ``eta`` the
        high-probability bound on the noise's spectral norm. ``alpha`` keeps scikit-learn's
        meaning (sum scale) and adds to ``lambda``. With ``privacy=(inf, 0)`` it is exactly
        scikit-learn's ``Ridge(alpha)``.

        Examples
        --------
        >>> import numpy as np
        >>> from skdp.linear_model import DPRidge
        >>> rng = np.random.default_rng(0)
        >>> X = rng.normal(size=(20000, 5))
        >>> y = X @ np.array([0.5, -0.3, 0.2, 0.0, 0.1]) + 0.1 * rng.normal(size=20000)
        >>> reg = DPRidge(privacy=(1.0, 1e-6), random_state=0).fit(X, y)
        >>> bool(reg.score(X, y) > 0.9)
        True

        The last-iterate accountant with the strongly convex bound (no intercept, so the penalty
        covers every coefficient): rows scaled to norm at most 4, M = 16 + alpha / n.

        >>> reg = DPRidge(
        ...     privacy=(1.0, 1e-6), accountant="last_iterate", alpha=200.0, fit_intercept=False,
        ...     projection_radius=1.0, max_row_norm=4.0, eta0=0.1, average=False, batch_size=64,
        ...     max_iter=10, random_state=0).fit(X, y)
        >>> reg.privacy_spent_[0] <= 1.0
        True
        >>> bool(reg.score(X, y) > 0.9)
        True

        AdaSSP, with public bounds on the rows of X and on y:

        >>> reg = DPRidge(privacy=(1.0, 1e-6), optimizer="ssp", max_row_norm=6.0,
        ...               target_bound=3.0, random_state=0).fit(X, y)
        >>> bool(reg.score(X, y) > 0.9)
        True
        """,
    )

    _parameter_constraints: dict = {
        **BaseDPLinearModel._parameter_constraints,
        "alpha": [Interval(Real, 0, None, closed="left")],
        "target_bound": [Interval(Real, 0, None, closed="neither"), "array-like", None],
    }

    def __init__(
        self,
        privacy=(1.0, 1e-5),
        *,
        alpha=1.0,
        optimizer="noisy_sgd",
        optimizer_params=None,
        max_grad_norm=1.0,
        learning_rate="auto",
        eta0="auto",
        power_t=0.5,
        noise_schedule="constant",
        noise_decay=0.5,
        batch_size="auto",
        max_iter="auto",
        fit_intercept=True,
        average=True,
        accountant="pld",
        projection_radius=None,
        max_row_norm="auto",
        target_bound=None,
        budget=None,
        device="auto",
        random_state=None,
        verbose=0,
    ):
        self.privacy = privacy
        self.alpha = alpha
        self.optimizer = optimizer
        self.optimizer_params = optimizer_params
        self.max_grad_norm = max_grad_norm
        self.learning_rate = learning_rate
        self.eta0 = eta0
        self.power_t = power_t
        self.noise_schedule = noise_schedule
        self.noise_decay = noise_decay
        self.batch_size = batch_size
        self.max_iter = max_iter
        self.fit_intercept = fit_intercept
        self.average = average
        self.accountant = accountant
        self.projection_radius = projection_radius
        self.max_row_norm = max_row_norm
        self.target_bound = target_bound
        self.budget = budget
        self.device = device
        self.random_state = random_state
        self.verbose = verbose

    def _l2_strength(self, n_samples: int) -> float:
        return self.alpha / n_samples

    def _scales_targets(self) -> bool:
        return True  # max_row_norm='auto' also puts y on a public scale

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.multi_output = True
        return tags

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y):
        """Fit the model with differential privacy.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Training data, in any units (see ``max_row_norm``). Sparse matrices (CSR or CSC;
            other formats are converted to CSR) are used without a dense copy.
        y : array-like of shape (n_samples,) or (n_samples, n_targets)
            Targets, in any units (see ``max_row_norm``).

        Returns
        -------
        self : DPRidge
            The fitted estimator.
        """
        X, y, targets = self._validate_regression_data(X, y)
        self._target_range()  # refuse a malformed range before anything is charged
        if self.optimizer == "ssp":
            coef, intercept = self._fit_ssp(X, targets)
        else:
            coef, intercept = self._fit_linear(X, targets, GLMLoss.SQUARED, targets.shape[1])
        if y.ndim == 1:
            self.coef_, self.intercept_ = coef.ravel(), float(intercept[0])
        else:
            self.coef_, self.intercept_ = coef, intercept
        return self

    def _fit_ssp(self, X, targets: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``optimizer='ssp'``: AdaSSP through the shared fit flow; ``(coef, intercept)``."""
        n_samples, n_features = X.shape
        n_targets = targets.shape[1]

        def build(target: PrivacyTarget) -> FitRecipe:
            private = target.private
            params = SSP.parse_params(self.optimizer_params, self.accountant)
            # max_row_norm='auto': the bounds come from a DP search for a public scale, planned
            # now (public n and privacy) and run after the charge; the statistics are then
            # released on that scale, where rows have norm <= 1 and targets lie in [-1, 1].
            # Without privacy nothing is clipped and the solve is scikit-learn's Ridge.
            searches = self.max_row_norm == "auto" and private
            scale_noise = self._scale_noise_multiplier(
                target.epsilon, target.delta, n_samples, n_targets, warn=False,
                centre_only=False,
            ) if searches else None
            if searches and scale_noise is None:
                needs = search_needs(
                    target.epsilon, target.delta, n_samples,
                    self._scale_search_outputs(n_targets),
                )
                raise ValueError(
                    f"optimizer='ssp' with n={n_samples} rows and this privacy cannot find a "
                    f"public scale for the data (max_row_norm='auto'; {needs}); pass public "
                    "bounds max_row_norm and target_bound, or use optimizer='noisy_sgd'"
                )
            bounds = (
                SSPBounds(1.0, 1.0) if scale_noise is not None
                else _ssp_bounds(self, targets, private=private)
            )
            ssp = SSP(params, bounds, alpha=self.alpha, fit_intercept=self.fit_intercept,
                      private=private)
            return FitRecipe(
                ssp, SSP_LABEL, scale_noise=scale_noise, apply_scale=scale_noise is not None,
                training_facts=ssp.training_facts(n_targets),
                scale_rows=False,  # the statistics scale the rows block by block
                work=float(n_samples) * (n_features + 1) ** 2,  # X^T X, one pass
            )

        release = self._private_fit(X, targets, build)
        coef, intercept = linear_params(release.params, n_features, n_targets)
        scale = self._take_fit_scale()
        if scale is not None:
            coef, intercept = scale.to_user_units(coef, intercept)
            self.row_norm_bound_ = scale.row_bound
        return coef, intercept

    def predict(self, X):
        """Predict targets.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Samples.

        Returns
        -------
        y_pred : ndarray of shape (n_samples,) or (n_samples, n_targets)
            Predictions.
        """
        X = self._validate_X_predict(X)
        return X @ self.coef_.T + self.intercept_


def _ssp_bounds(estimator: DPRidge, targets, *, private: bool) -> SSPBounds:
    """The public bounds ``(B_x, B_y)`` of ``optimizer='ssp'``, as numbers.

    The one place they come from: today ``max_row_norm`` and ``target_bound``. Never from
    the data (a maximum of the private rows would leak outside the accounting). Without
    privacy nothing is clipped and missing bounds are allowed. Called before anything is
    charged, so a refusal spends nothing.
    """
    row, target_range = estimator.max_row_norm, estimator._target_range()
    if isinstance(row, str):  # 'auto' is handled by fit_ssp before it asks for bounds
        row = None
    target = center = None
    if target_range is not None:
        # Centred on the range (not without an intercept: the centre would become one), every
        # target lies within the half-width: a row of k of them within half-width * sqrt(k).
        center, halfwidth = range_scale(*target_range, centred=estimator.fit_intercept)
        center, target = float(center), float(halfwidth) * math.sqrt(targets.shape[1])
    if private:
        missing = [
            f"{name} (a public bound on {what})"
            for name, value, what in (
                ("max_row_norm", row, "the L2 norm of the rows of X, B_x"),
                ("target_bound", target, "|y|, B_y"),
            )
            if value is None
        ]
        if missing:
            raise ValueError(
                "optimizer='ssp' releases X^T X and X^T y of clipped rows and needs public "
                "bounds, which may not be learned from the private data: pass "
                + " and ".join(missing)
                + ". Take them from the documented ranges of the features and target, or put "
                "a DP preprocessing step first (skdp.preprocessing.DPStandardScaler publishes "
                "max_row_norm_ for its output)."
            )
    return SSPBounds(
        None if row is None else float(row), target, 0.0 if center is None else center
    )
