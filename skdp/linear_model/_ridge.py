"""DPRidge: ridge regression trained with differential privacy."""

from __future__ import annotations

from numbers import Real

import numpy as np
from sklearn.base import RegressorMixin, _fit_context
from sklearn.utils._param_validation import Interval
from sklearn.utils.validation import validate_data

from .._engine._glm import GLMLoss
from ._base import BaseDPLinearModel

__all__ = ["DPRidge"]


class DPRidge(RegressorMixin, BaseDPLinearModel):
    """Ridge regression trained with differential privacy.

    The model minimises the same objective as scikit-learn's ``Ridge``,
    ``||y - X w - b||^2 + alpha ||w||^2`` (here divided by ``2 n``), by DP-SGD: per-example
    gradients of the squared error (computed in closed form) are clipped to ``max_grad_norm``,
    Gaussian noise calibrated to ``privacy`` is added to their sum, and the noisy mean takes a
    gradient step.

    Features and targets should be on a public, roughly unit scale (see
    :func:`skdp.datasets.diamonds_preprocessor` and :func:`skdp.datasets.scale_diamonds_target`):
    the residuals of the squared loss are unbounded, so large targets are clipped heavily, and
    centring or scaling statistics learned from the private data would leak outside the
    accounting.

    Parameters
    ----------
    privacy : tuple of (float, float), default=(1.0, 1e-5)
        The target ``(epsilon, delta)`` for the whole training run (add/remove-one-row
        neighbouring). ``(float('inf'), 0)`` trains without clipping or noise.
    alpha : float, default=1.0
        L2 regularisation strength, as in scikit-learn's ``Ridge``.
    optimizer : {'noisy_sgd', 'adp_sgd', 'adaclip', 'diff2'}, default='noisy_sgd'
        The DP optimizer. Only ``'noisy_sgd'`` is available in this version; the others raise
        ``NotImplementedError``.
    max_grad_norm : float, default=1.0
        Per-example gradient clipping bound (the L2 sensitivity of each noisy sum).
    learning_rate : {'constant'}, default='constant'
        Step-size schedule.
    eta0 : float, default=0.5
        Step size.
    batch_size : int or 'auto', default='auto'
        Expected batch size of Poisson sampling. ``'auto'`` uses ``n / 32`` clipped to
        [64, 4096]; values of at least ``n`` mean full-batch gradient descent.
    max_iter : int, default=20
        Number of epochs (each made of ``round(n / batch_size)`` steps).
    fit_intercept : bool, default=True
        Whether to fit an (unpenalised) intercept.
    average : bool or float in (0, 1], default=True
        Return the average of the last iterates instead of the last one: ``True`` averages
        the last tenth of the steps, a float sets that fraction, ``False`` returns the last
        iterate. Averaging is post-processing: it costs no privacy and cancels noise.
    accountant : {'pld', 'rdp'}, default='pld'
        The accountant used to calibrate the noise and report the guarantee.
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
    coef_ : ndarray of shape (n_features,) or (n_targets, n_features)
        Coefficients.
    intercept_ : float or ndarray of shape (n_targets,)
        Intercept.
    privacy_spent_ : tuple of (float, float)
        The ``(epsilon, delta)`` proven for this fit; never above ``privacy``.
    dp_event_ : dp_accounting.DpEvent
        A description of the whole run, which any ``dp_accounting`` accountant can re-account.
    noise_multiplier_ : float
        Standard deviation of the noise on each clipped sum divided by ``max_grad_norm``.
    batch_size_ : int
        The expected batch size used.
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
    DPLogisticRegression : Logistic regression trained with differential privacy.

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
    """

    _parameter_constraints: dict = {
        **BaseDPLinearModel._parameter_constraints,
        "alpha": [Interval(Real, 0, None, closed="left")],
    }

    def __init__(
        self,
        privacy=(1.0, 1e-5),
        *,
        alpha=1.0,
        optimizer="noisy_sgd",
        max_grad_norm=1.0,
        learning_rate="constant",
        eta0=0.5,
        batch_size="auto",
        max_iter=20,
        fit_intercept=True,
        average=True,
        accountant="pld",
        budget=None,
        device="auto",
        random_state=None,
        verbose=0,
    ):
        self.privacy = privacy
        self.alpha = alpha
        self.optimizer = optimizer
        self.max_grad_norm = max_grad_norm
        self.learning_rate = learning_rate
        self.eta0 = eta0
        self.batch_size = batch_size
        self.max_iter = max_iter
        self.fit_intercept = fit_intercept
        self.average = average
        self.accountant = accountant
        self.budget = budget
        self.device = device
        self.random_state = random_state
        self.verbose = verbose

    def _l2_strength(self, n_samples: int) -> float:
        return self.alpha / n_samples

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.multi_output = True
        return tags

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y):
        """Fit the model with differential privacy.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training data, on a public, roughly unit scale. Sparse input is not supported.
        y : array-like of shape (n_samples,) or (n_samples, n_targets)
            Targets, on a public, roughly unit scale.

        Returns
        -------
        self : DPRidge
            The fitted estimator.
        """
        X, y = validate_data(
            self, X, y, dtype=[np.float64, np.float32], multi_output=True, y_numeric=True
        )
        y = np.asarray(y, dtype=np.float64)
        targets = y.reshape(-1, 1) if y.ndim == 1 else y
        coef, intercept = self._fit_linear(X, targets, GLMLoss.SQUARED, targets.shape[1])
        if y.ndim == 1:
            self.coef_, self.intercept_ = coef.ravel(), float(intercept[0])
        else:
            self.coef_, self.intercept_ = coef, intercept
        return self

    def predict(self, X):
        """Predict targets.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Samples.

        Returns
        -------
        y_pred : ndarray of shape (n_samples,) or (n_samples, n_targets)
            Predictions.
        """
        X = self._validate_X_predict(X)
        return X @ self.coef_.T + self.intercept_
