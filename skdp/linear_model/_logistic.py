"""DPLogisticRegression: binary and multinomial logistic regression trained with DP."""

from __future__ import annotations

from numbers import Real

import numpy as np
from sklearn.base import ClassifierMixin, _fit_context
from sklearn.utils._param_validation import Interval

from .._defaults.linear import LOGISTIC_NON_PRIVATE_STEP, LOGISTIC_USER_SCALE
from .._fit.classes import LogitClassifierMixin, class_facts, encode_classes, output_loss
from ._base import BaseDPLinearModel

__all__ = ["DPLogisticRegression"]


class DPLogisticRegression(LogitClassifierMixin, ClassifierMixin, BaseDPLinearModel):
    """Logistic regression (binary or multinomial) trained with differential privacy.

    The model minimises the same objective as scikit-learn's ``LogisticRegression`` with an L2
    penalty, ``mean log-loss + ||w||^2 / (2 C n)``, by DP-SGD: per-example gradients (computed in
    closed form) are clipped to ``max_grad_norm``, Gaussian noise calibrated to ``privacy`` is
    added to their sum, and the noisy mean takes a gradient step. Two classes use one logit;
    more use a softmax over all classes.

    Features should be on a public, roughly unit scale (see
    :func:`skdp.datasets.adult_preprocessor`), or let the fit find one privately:
    ``max_row_norm='auto', eta0='auto', max_iter='auto'`` trains on rows divided by a public
    bound on their norms found by a small, accounted DP search, with a step size and number of
    epochs that are public functions of ``n``, ``d`` and the calibrated noise. That is
    scale-free (one point better on Adult with rows scaled to norm <= 1) but measured up to 3
    points behind these defaults on Fashion-MNIST and 1.9 on Adult at epsilon 0.1, so it is
    not the default (``docs/benchmarks.md``, "Defaults on data they were not tuned on").
    Scaling statistics learned from the private data outside skdp would leak outside the
    accounting: use :mod:`skdp.preprocessing`.

    Parameters
    ----------
    privacy : tuple of (float, float), default=(1.0, 1e-5)
        The target ``(epsilon, delta)``. The noise is calibrated so that the whole training run
        is (epsilon, delta)-DP under add/remove-one-row neighbouring. ``(float('inf'), 0)``
        trains without clipping or noise (a non-private reference).
    optimizer : {'noisy_sgd', 'adp_sgd', 'adaclip', 'diff2'}, default='noisy_sgd'
        The DP optimizer. ``'noisy_sgd'``: DP-SGD. ``'adp_sgd'``: ADP-SGD (Wu et al.), whose
        per-step noise multiplier is proportional to ``1 / sqrt(step size)``, calibrated with
        the real accountant over the resulting non-uniform noise; with a constant step size it
        is exactly ``'noisy_sgd'``. ``'adaclip'``: coordinate-wise adaptive clipping
        (Pichapati et al.; not Opacus' quantile-based ``AdaClipDPOptimizer``), which clips
        ``(g - a) / b`` with a centre and scale learned from the released noisy gradients.
        ``'diff2'``: DIFF2-GD (Murata & Suzuki), full-batch gradient descent that sends
        clipped gradient differences between restarts; ``max_iter`` counts its rounds.
    optimizer_params : dict, default=None
        Hyperparameters of the chosen optimizer. ``'adaclip'``: ``gamma`` (0.25), ``beta1``
        (0.99), ``beta2`` (0.9), ``variance_floor`` (1e-6), ``variance_cap`` (1.0).
        ``'diff2'``: ``restart_period`` (10), ``budget_split`` (0.8), ``diff_clip`` (1.0),
        ``n_clients`` (1); see ``docs/user_guide/optimizers.md``. The other optimizers take
        none.
    max_grad_norm : float, default=1.0
        Per-example gradient clipping bound (the L2 sensitivity of each noisy sum).
    learning_rate : {'auto', 'constant', 'invscaling', 'adagrad_norm'}, default='auto'
        Step-size schedule. ``'auto'``: ``'invscaling'`` with ``optimizer='adp_sgd'`` (ADP-SGD as
        its paper defines it: decaying steps, noise shaped to them), ``'constant'`` otherwise.
        ``'constant'``: ``eta0`` at every step. ``'invscaling'``:
        ``eta0 / (1 + epoch) ** power_t``, with ``epoch = step / steps_per_epoch`` (scikit-learn's
        inverse scaling, counted in epochs). ``'adagrad_norm'``: ``eta0 / b_t`` with ``b_t^2``
        accumulating the squared norms of the *released noisy* gradients (minus their expected
        noise energy), so it is post-processing and costs no privacy.
    eta0 : float or 'auto', default='auto'
        Step size. ``'auto'``: for mini-batch runs on the user's scale (``max_row_norm`` None
        or a float), ``4.0 / (1 + 80 z / b)``: a normalised-gradient step (most per-example
        gradients are clipped) measured on eight data sets, damped by the calibrated noise per
        coordinate of a mean gradient (noise multiplier ``z``, batch size ``b``; public), so
        that small data at small epsilon take smaller steps that average more noise away (2.0
        without privacy, where nothing is clipped); otherwise
        (``max_row_norm='auto'``, or full batch: ``optimizer='diff2'`` or ``batch_size >= n``) a
        public function of the loss's curvature on the rows' public scale and of the calibrated
        noise (``skdp/linear_model/_defaults.py``): smaller steps when the noise on each mean
        gradient is large (rows without a bound are assumed to have norm about 2).
        ``learning_rate_`` says which step was used.
    power_t : float, default=0.5
        Exponent of ``'invscaling'``.
    noise_schedule : {'constant', 'exp_decay', 'step_decay', 'time_decay', 'poly_decay'}, \
default='constant'
        Public shape of the noise over the run, for any optimizer: the noise of the last step
        is ``noise_decay`` times that of the first (``'exp_decay'``: geometric;
        ``'step_decay'``: constant within an epoch, geometric across epochs; ``'time_decay'``:
        ``1 / (1 + k u)``; ``'poly_decay'``: cubic, with ``u`` the progress from 0 to 1). Only
        the shape is chosen: the accountant scales it so that the run spends exactly
        ``privacy``, composing the actual per-step noise levels (the shape is quantised to at
        most 16 levels, which are what is run).
    noise_decay : float in (0, 1], default=0.5
        Noise at the last step relative to the first, for a decaying ``noise_schedule``.
    batch_size : int or 'auto', default='auto'
        Expected batch size of Poisson sampling. ``'auto'`` uses ``n / 32`` clipped to
        [m, 4096] with ``m = max(64, 8 sqrt(n_params))`` (many parameters on small data need
        larger batches against the noise), and never above ``n``; values of at least ``n``
        mean full-batch gradient descent.
    max_iter : int or 'auto', default='auto'
        Number of epochs (each made of ``round(n / batch_size)`` steps). More epochs need more noise
        for the same privacy. ``'auto'``: 20 epochs for mini-batch runs on the user's scale (the
        measured default, as for ``eta0``), grown to ``20 epsilon^0.8`` (at most 100) at epsilon
        above 1 when the noise of the 20-epoch run on a mean gradient is small (at most 0.1 of
        the clipping bound: large data), and 100 without privacy; otherwise enough epochs for
        1000 steps and at least 20 (a public function of ``n`` and the batch size; full-batch
        ``'diff2'`` makes one step, a round, per epoch: with 20 rounds it was 2.8-7.3 points
        behind noisy_sgd on Adult).
    C : float, default=1.0
        Inverse L2 regularisation strength, as in scikit-learn's ``LogisticRegression``;
        ``np.inf`` for no penalty.
    fit_intercept : bool, default=True
        Whether to fit an (unpenalised) intercept.
    average : bool or float in (0, 1], default=True
        Return the average of the last iterates instead of the last one: ``True`` averages
        the last tenth of the steps, a float sets that fraction, ``False`` returns the last
        iterate. Averaging is post-processing: it costs no privacy and cancels noise.
    accountant : {'pld', 'rdp', 'last_iterate'}, default='pld'
        The accountant used to calibrate the noise and report the guarantee. ``'pld'`` and
        ``'rdp'`` account the whole training trajectory (add/remove-one-row neighbouring,
        Poisson sampling). ``'last_iterate'`` accounts only the released last iterate, with
        the bound of Altschuler & Talwar (2022) for projected noisy SGD on convex losses
        (reported as the minimum of it and the standard bound, under replace-one-row
        neighbouring): past a burn-in, more epochs cost no more privacy. It also changes the
        training: batches of exactly ``batch_size`` distinct rows drawn at random at every
        step, projection onto the ball of radius ``projection_radius`` after every step, and
        no averaging. It requires ``optimizer='noisy_sgd'``, ``projection_radius``,
        ``max_row_norm``, ``average=False``, ``verbose=0``, ``learning_rate='constant'``,
        constant noise and ``eta0 <= 2 / M`` (see Notes), and is refused otherwise, before
        anything is charged or trained.
    projection_radius : float, default=None
        Radius of the L2 ball, centred at 0, onto which all parameters (coefficients and
        intercept together) are projected after every step; ``None``: no projection.
        Required by ``accountant='last_iterate'``, whose bound grows with the diameter
        ``2 * projection_radius``: a smaller ball gives a shorter burn-in and less noise but
        may exclude the best model. Choose it without looking at the private data. With the
        other accountants it is optional (projection is post-processing).
    max_row_norm : float, 'auto' or None, default=None
        ``'auto'``: train on a public scale found privately. A noisy binary search (one Gaussian
        mechanism, composed with the training in ``privacy_spent_``; it gets 5% of the fit's
        Gaussian-DP ``mu^2``, more on small data sets where 5% cannot locate the quantiles) finds a
        bound ``B`` on the row norms (the 0.95-quantile). Rows are scaled down to ``B`` and divided
        by it, so one step size and clipping bound hold whatever the data's units; the coefficients
        are reported in the original units and ``row_norm_bound_`` records ``B``. When ``n`` is too
        small for the privacy to locate even the quartiles, a :class:`~skdp.PrivacyWarning` says so
        and the fit trains on the rows as given. ``None``: no bound, rows as given.
        A float:
        Public bound on the L2 norm of the rows of ``X``: during ``fit``, rows with a larger
        norm are scaled down to it (a per-row transformation, free under DP; predictions use
        rows as given). Required by ``accountant='last_iterate'``, whose step-size limit
        depends on the smoothness of the loss, which must hold for every possible row and so
        cannot come from the data (see Notes). Take it from the public ranges of the
        features. Optional with the other accountants.
    classes : array-like of shape (n_classes,), default=None
        The public list of class labels. By default it is read from ``y`` as scikit-learn
        does, which treats the set of labels present in the data as public.
    budget : skdp.PrivacyBudget, default=None
        A privacy ledger to charge: the fit's spend is recorded there before the data is
        touched, and a fit that would exceed the budget raises
        :class:`skdp.BudgetExceededError` without training or recording anything. ``None``
        charges the budget of an enclosing ``with budget:`` block, if any. Clones (e.g. in
        ``GridSearchCV``) and worker processes charge the same ledger.
    device : {'auto', 'cpu', 'cuda'} or torch.device, default='auto'
        Where to train. ``'auto'`` uses CUDA when available.
    random_state : int, RandomState instance or None, default=None
        Seeds batch sampling and noise. ``None`` draws the seed from OS entropy.
    verbose : int, default=0
        Print progress once per epoch (computed only from released noisy values).

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        Class labels.
    coef_ : ndarray of shape (1, n_features) or (n_classes, n_features)
        Coefficients.
    intercept_ : ndarray of shape (1,) or (n_classes,)
        Intercepts.
    privacy_spent_ : tuple of (float, float)
        The ``(epsilon, delta)`` proven for this fit by the accountant; never above ``privacy``.
    dp_event_ : dp_accounting.DpEvent or skdp.budget.RdpCurve
        What the fit spent, as charged to a ``budget``: with ``accountant='pld'`` or ``'rdp'`` a
        DpEvent of the whole run, which any ``dp_accounting`` accountant can re-account; with
        ``accountant='last_iterate'`` the RDP curve of the released last iterate (orders and
        RDP values, replace-one relation), which converts to at most ``privacy_spent_``.
    noise_multiplier_ : float
        Standard deviation of the noise on each clipped sum divided by ``max_grad_norm``
        (0 for a non-private fit).
    batch_size_ : int
        The expected batch size used.
    learning_rate_ : float
        The (initial) step size used: ``eta0``, or the one ``eta0='auto'`` chose.
    row_norm_bound_ : float
        With ``max_row_norm='auto'``: the public bound on the row norms that the fit found
        (a DP release) and trained with.
    n_iter_ : int
        Number of epochs run.
    n_steps_ : int
        Number of noisy gradient steps.
    device_ : str
        The device the model was trained on.
    n_features_in_ : int
        Number of features seen during fit.
    feature_names_in_ : ndarray of shape (n_features_in_,)
        Names of features seen during fit, when ``X`` has string column names.

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
    """

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
