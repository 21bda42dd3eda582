"""DPLogisticRegression: binary and multinomial logistic regression trained with DP."""

from __future__ import annotations

from numbers import Real

import numpy as np
from sklearn.base import ClassifierMixin, _fit_context
from sklearn.utils._param_validation import Interval

from .._defaults.linear import LOGISTIC_NON_PRIVATE_STEP, LOGISTIC_USER_SCALE
from .._fit import docstrings as _doc
from .._fit.classes import LogitClassifierMixin, class_facts, encode_classes, output_loss
from ._base import BaseDPLinearModel

__all__ = ["DPLogisticRegression"]


class DPLogisticRegression(LogitClassifierMixin, ClassifierMixin, BaseDPLinearModel):
    __doc__ = _doc.assemble(
        """Logistic regression (binary or multinomial) trained with differential privacy.

        The model minimises the same objective as scikit-learn's ``LogisticRegression`` with an
        L2 penalty, ``mean log-loss + ||w||^2 / (2 C n)``, by DP-SGD: per-example gradients
        (computed in closed form) are clipped to ``max_grad_norm``, Gaussian noise calibrated to
        ``privacy`` is added to their sum, and the noisy mean takes a gradient step. Two classes
        use one logit; more use a softmax over all classes.

        Features should be on a public, roughly unit scale (see
        :func:`skdp.datasets.adult_preprocessor`), or let the fit find one privately:
        ``max_row_norm='auto', eta0='auto', max_iter='auto'`` trains on rows divided by a public
        bound on their norms found by a small, accounted DP search, with a step size and number
        of epochs that are public functions of ``n``, ``d`` and the calibrated noise. That is
        scale-free (one point better on Adult with rows scaled to norm <= 1) but measured up to
        3 points behind these defaults on Fashion-MNIST and 1.9 on Adult at epsilon 0.1, so it is
        not the default. Scaling statistics learned from the private data outside skdp would leak
        outside the accounting: use :mod:`skdp.preprocessing`.
        """,
        parameters=[
            _doc.PRIVACY,
            _doc.optimizer(),
            _doc.optimizer_params(),
            _doc.MAX_GRAD_NORM,
            _doc.learning_rate("eta0"),
            _doc.eta0(user_scale="""
                for mini-batch runs on the user's own row scale (``max_row_norm`` None or a
                float), a step measured on eight data sets for a normalised gradient (most
                per-example gradients are clipped), damped by the calibrated noise per coordinate
                of a mean gradient (public), so that small data at small epsilon take smaller
                steps that average more noise away; without privacy, where nothing is clipped, a
                fixed step. Otherwise (``max_row_norm='auto'``, or full batch:
                ``optimizer='diff2'`` or ``batch_size >= n``)
            """),
            _doc.POWER_T,
            _doc.NOISE_SCHEDULE,
            _doc.NOISE_DECAY,
            _doc.batch_size(parameter_floor=True),
            _doc.linear_max_iter(user_scale="""
                for mini-batch runs on the user's own row scale, the measured number of epochs
                (as for ``eta0``), grown with epsilon above 1 where the noise of that run on a
                mean gradient is small (large data, where iterations rather than noise limit the
                fit); otherwise
            """),
            """
            C : float, default=1.0
                Inverse L2 regularisation strength, as in scikit-learn's ``LogisticRegression``;
                ``np.inf`` for no penalty.
            """,
            _doc.FIT_INTERCEPT,
            _doc.AVERAGE,
            _doc.accountant(last_iterate=True),
            _doc.PROJECTION_RADIUS,
            _doc.entry("max_row_norm : float, 'auto' or None, default=None", """
                ``'auto'``: train on a public scale found privately. A noisy binary search (one
                Gaussian mechanism, composed with the training in ``privacy_spent_``; it gets a
                small share of the fit's Gaussian-DP ``mu^2``, more on small data sets where that
                share cannot locate the quantile) finds a bound ``B`` on the row norms, a high
                quantile of them. Rows are scaled down to ``B`` and divided by it, so one step
                size and clipping bound hold whatever the data's units; the coefficients are
                reported in the original units and ``row_norm_bound_`` records ``B``. When ``n``
                is too small for the privacy to locate even the quartiles, a
                :class:`~skdp.PrivacyWarning` says so and the fit trains on the rows as given.
                The quantile and the shares: :doc:`the defaults page </user_guide/defaults>`.
                ``None``: no bound, rows as given.
            """, _doc.GIVEN_ROW_BOUND),
            """
            classes : array-like of shape (n_classes,), default=None
                The public list of class labels. By default it is read from ``y`` as
                scikit-learn does, which treats the set of labels present in the data as public.
            """,
            _doc.BUDGET,
            _doc.DEVICE,
            _doc.random_state(initial_weights=False),
            _doc.VERBOSE,
        ],
        attributes=[
            """
            classes_ : ndarray of shape (n_classes,)
                Class labels.
            """,
            """
            coef_ : ndarray of shape (1, n_features) or (n_classes, n_features)
                Coefficients.
            """,
            """
            intercept_ : ndarray of shape (1,) or (n_classes,)
                Intercepts.
            """,
            _doc.PRIVACY_SPENT_,
            _doc.dp_event_(last_iterate=True),
            _doc.NOISE_MULTIPLIER_,
            _doc.BATCH_SIZE_,
            _doc.learning_rate_("eta0"),
            _doc.ROW_NORM_BOUND_,
            _doc.N_ITER_,
            _doc.N_STEPS_,
            _doc.DEVICE_,
            _doc.N_FEATURES_IN_,
            _doc.FEATURE_NAMES_IN_,
        ],
        sections="""
        See Also
        --------
        sklearn.linear_model.LogisticRegression : The non-private estimator it mirrors.
        DPRidge : Ridge regression trained with differential privacy.

        Notes
        -----
        The number of rows ``n`` is treated as public, as in every DP-SGD library. Nothing computed
        from the data steers training: the step size, batch size and number of steps are fixed in
        advance, and verbose output shows only released noisy gradients.

        ``accountant='last_iterate'`` (Altschuler & Talwar 2022, eq. B.2/B.3; implementer's notes
        in ``docs/specs/noisy_sgd_last_iterate_privacy.md``) needs every per-example loss to be
        convex and ``M``-smooth for every possible row, with gradients bounded by ``L``, and
        ``eta0 <= 2 / M`` so that every per-example step is a contraction. Here:

        - ``L = max_grad_norm``. Clipping stays on: for two classes the clipped logistic loss is
          a convex "huberised" loss with no more curvature than the original.
        - ``M = R^2 / 4 + l2`` for two classes, ``R^2 / 2 + l2`` for more, with
          ``R^2 = max_row_norm^2 + 1`` (the intercept acts as a constant feature 1;
          ``R = max_row_norm`` when ``fit_intercept=False``) and ``l2 = 1 / (C n)``.
        - With more than two classes, clipping the softmax gradient would break convexity, so it
          must never act: ``max_grad_norm >= sqrt(2) R`` is required.
        - Strong convexity ``m = l2`` when the penalty covers every parameter
          (``fit_intercept=False``): the strongly convex bound (eq. B.3) then reaches its plateau
          after about ``1 / (eta0 * l2)`` steps. scikit-learn does not penalise the intercept, so
          with ``fit_intercept=True`` ``m = 0`` and the convex bound (eq. B.2) applies; to get
          the strongly convex one with an intercept, add a constant column (e.g. 1) to ``X`` and
          set ``fit_intercept=False``.

        Without strong convexity, privacy stops growing after a burn-in of about
        ``2 * projection_radius * batch_size / (max_grad_norm * eta0)`` epochs (the bound departs
        from the standard one after one to three times that), so small batches, a small ball and
        the largest allowed step shorten it. The guarantee covers only the last iterate, under the
        replace-one relation: ``dp_event_`` is then the proven RDP curve (no ``dp_accounting``
        event describes this bound), and a ``budget`` must have been created with
        ``neighboring_relation='replace_one'``.

        Examples
        --------
        >>> from sklearn.datasets import make_classification
        >>> from skdp.linear_model import DPLogisticRegression
        >>> X, y = make_classification(n_samples=5000, random_state=0)
        >>> clf = DPLogisticRegression(privacy=(1.0, 1e-6), random_state=0).fit(X, y)
        >>> clf.privacy_spent_[0] <= 1.0
        True
        >>> bool(clf.score(X, y) > 0.8)
        True

        The last-iterate accountant: rows scaled to norm at most 6 (R^2 = 37 with the intercept,
        M = 37 / 4 + 1 / (C n)), so eta0 must be at most about 0.216.

        >>> clf = DPLogisticRegression(
        ...     privacy=(1.0, 1e-6), accountant="last_iterate", projection_radius=2.0,
        ...     max_row_norm=6.0, eta0=0.2, average=False, batch_size=32, max_iter=20,
        ...     random_state=0).fit(X, y)
        >>> clf.privacy_spent_[0] <= 1.0
        True
        >>> bool(np.linalg.norm(np.r_[clf.coef_.ravel(), clf.intercept_]) <= 2.0)
        True
        """,
    )

    _parameter_constraints: dict = {
        **BaseDPLinearModel._parameter_constraints,
        "C": [Interval(Real, 0, None, closed="right")],  # np.inf: no penalty, as documented
        "classes": ["array-like", None],
    }

    # eta0='auto' and max_iter='auto' on the user's scale (skdp._defaults.linear).
    _USER_SCALE_DEFAULTS = LOGISTIC_USER_SCALE
    _NON_PRIVATE_USER_SCALE_STEP = LOGISTIC_NON_PRIVATE_STEP

    def __init__(
        self,
        privacy=(1.0, 1e-5),
        *,
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
        C=1.0,
        fit_intercept=True,
        average=True,
        accountant="pld",
        projection_radius=None,
        max_row_norm=None,
        classes=None,
        budget=None,
        device="auto",
        random_state=None,
        verbose=0,
    ):
        self.privacy = privacy
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
        self.C = C
        self.fit_intercept = fit_intercept
        self.average = average
        self.accountant = accountant
        self.projection_radius = projection_radius
        self.max_row_norm = max_row_norm
        self.classes = classes
        self.budget = budget
        self.device = device
        self.random_state = random_state
        self.verbose = verbose

    def _l2_strength(self, n_samples: int) -> float:
        return 0.0 if np.isinf(self.C) else 1.0 / (self.C * n_samples)

    def _public_facts(self) -> list[str]:
        return class_facts(self.classes_, given=self.classes is not None)

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y):
        """Fit the model with differential privacy.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Training data, in any units (see ``max_row_norm``). Sparse matrices (CSR or CSC;
            other formats are converted to CSR) are used without a dense copy.
        y : array-like of shape (n_samples,)
            Class labels.

        Returns
        -------
        self : DPLogisticRegression
            The fitted estimator.
        """
        X, y = self._validate_classification_data(X, y)
        self.classes_, targets = encode_classes(y, self.classes, type(self).__name__)
        loss, n_outputs = output_loss(self.classes_)
        coef, intercept = self._fit_linear(X, targets, loss, n_outputs)
        self.coef_, self.intercept_ = coef, intercept
        return self

    def decision_function(self, X):
        """Confidence scores (logits) for each sample.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Samples.

        Returns
        -------
        scores : ndarray of shape (n_samples,) or (n_samples, n_classes)
            Logit of the positive class for binary problems, otherwise one logit per class.
        """
        X = self._validate_X_predict(X)
        scores = X @ self.coef_.T + self.intercept_
        return scores.ravel() if scores.shape[1] == 1 else scores

    def _logits(self, X) -> np.ndarray:
        return self.decision_function(X)
