"""DPStandardScaler: standardisation with means and scales learned under differential privacy."""

from __future__ import annotations

from dataclasses import dataclass
from numbers import Real

import numpy as np
from sklearn.base import OneToOneFeatureMixin, _fit_context
from sklearn.utils.validation import check_is_fitted

from .._defaults.preprocessing import BOUNDS_SHARE
from ._base import BaseDPTransformer, Release
from ._bounds import plan_quantiles, search_bounds
from ._mechanisms import moment_sensitivity, noisy_moment_sums, normalised_values
from ._validation import check_bounds, validate_numeric

__all__ = ["DPStandardScaler", "Moments", "private_moments"]

# Share of the budget of the bounds search when bounds are not given (spec §6.2): the search
# needs more (17 probes, and bounds set the scale of everything after them).


@dataclass(frozen=True)
class Moments:
    """Released moments of clipped columns: ``mean``, ``var`` (or None), the noisy observed
    ``count`` they were divided by, and the noise ``sigma`` of every sum."""

    mean: np.ndarray
    var: np.ndarray | None
    count: np.ndarray
    sigma: float


def private_moments(
    X: np.ndarray,
    lower: np.ndarray,
    upper: np.ndarray,
    noise_multiplier: float,
    rng: np.random.Generator,
    with_variance: bool = True,
) -> Moments:
    """DP means (and variances) of the columns of ``X`` clipped to ``[lower, upper]``, from one
    Gaussian release of the normalised sums and the observed counts (spec §2.1); NaN are
    missing values and do not count.

    Post-processing: ``var`` is debiased for the noise and floored at one standard error (a
    noisy near-zero variance would blow up a standardised column), capped at the largest
    variance possible within the bounds. Columns with ``lower == upper`` get mean ``lower``
    and variance 0.
    """
    d = X.shape[1]
    if noise_multiplier == 0.0:
        return _exact_moments(X, lower, upper, with_variance)
    sigma = moment_sensitivity(d, with_variance) * noise_multiplier
    sums = noisy_moment_sums(X, lower, upper, sigma, rng, with_second=with_variance)
    centre, radius = (lower + upper) / 2.0, (upper - lower) / 2.0
    count = np.maximum(sums.count, 1.0)
    u_mean = np.clip(sums.first / count, -1.0, 1.0)
    mean = centre + radius * u_mean
    if not with_variance:
        return Moments(mean, None, count, sigma)
    second = np.clip((sums.second / count + 1.0) / 2.0, 0.0, 1.0)  # estimates E[u^2]
    var_u = second - u_mean**2 + (sigma / count) ** 2
    standard_error = (sigma / count) * np.sqrt(0.25 + 4.0 * u_mean**2)
    var_u = np.minimum(np.maximum(var_u, standard_error), 1.0)
    return Moments(mean, radius**2 * var_u, count, sigma)


def _exact_moments(X, lower, upper, with_variance):
    """Without privacy: the exact mean and variance of the clipped values (the ``(u, 2u^2 - 1)``
    sums would lose the variance of columns much narrower than their bounds to rounding)."""
    u, observed = normalised_values(X, lower, upper)
    count = np.maximum(observed.sum(axis=0), 1)
    centre, radius = (lower + upper) / 2.0, (upper - lower) / 2.0
    u_mean = u.sum(axis=0) / count
    mean = centre + radius * u_mean
    if not with_variance:
        return Moments(mean, None, observed.sum(axis=0).astype(np.float64), 0.0)
    var_u = (np.where(observed, u - u_mean, 0.0) ** 2).sum(axis=0) / count
    return Moments(mean, radius**2 * var_u, observed.sum(axis=0).astype(np.float64), 0.0)


class DPStandardScaler(OneToOneFeatureMixin, BaseDPTransformer):
    """Standardise features by removing the mean and scaling to unit variance, with the means
    and scales learned under differential privacy.

    The private counterpart of scikit-learn's ``StandardScaler``: ``z = (clip(x) - mean_) /
    scale_``. Values are clipped to per-column bounds, public (``bounds=``, free) or found
    privately by a noisy binary search for the ``quantiles`` of each column; the means and
    variances of the clipped values come from one Gaussian release of their normalised sums.
    NaN are treated as missing: ignored in ``fit``, kept in ``transform`` (as scikit-learn's
    scaler does), so a later ``SimpleImputer(strategy='constant', fill_value=0)`` imputes the
    private mean at no cost.

    Because its output is clipped, every transformed row has a public L2 norm bound
    (``max_row_norm_``) that downstream estimators can use.

    Parameters
    ----------
    privacy : tuple of (float, float), default=(1.0, 1e-5)
        ``(epsilon, delta)`` of this fit on its own. Inside
        :func:`skdp.pipeline.make_private_pipeline` the pipeline's privacy is split among its
        steps instead, and this parameter must be left at its default. ``(float('inf'), 0)``
        computes everything exactly, still on values clipped to the bounds (the exact
        ``quantiles`` when none are given), so it equals ``StandardScaler`` only with bounds
        wider than the data.
    bounds : tuple of (float or array-like, float or array-like) or dict, default=None
        Public bounds ``(lower, upper)`` of the features, each a number or one value per
        feature, or a dict ``{column name: (lower, upper)}`` naming every column of a DataFrame:
        values are clipped to them, and they cost no privacy. Take them from the data's
        documentation (a data dictionary, the range of a questionnaire item), never from the
        private data. ``None``: found privately (three quarters of this step's budget).
    quantiles : tuple of (float, float), default=(0.01, 0.99)
        The quantiles a private bounds search looks for. At small n or strong privacy they are
        moved inward to what the search can resolve (``quantiles_``).
    with_mean : bool, default=True
        Centre the data before scaling.
    with_std : bool, default=True
        Scale the data to unit variance.
    clip : bool, default=True
        Clip values to the bounds in ``transform`` too (so the output has a public bound).
    budget : skdp.PrivacyBudget, default=None
        A ledger to charge this fit to (on its own); ``None`` charges the budget of an
        enclosing ``with budget:`` block, if any.
    random_state : int, RandomState instance or None, default=None
        Seeds the noise; ``None`` draws it from OS entropy.

    Attributes
    ----------
    mean_ : ndarray of shape (n_features,)
        The private means of the clipped features.
    var_ : ndarray of shape (n_features,) or None
        The private variances (``None`` when ``with_std=False``).
    scale_ : ndarray of shape (n_features,)
        ``sqrt(var_)`` (1 where it is 0, or when ``with_std=False``).
    bounds_ : ndarray of shape (n_features, 2)
        The bounds values are clipped to (given, or found privately).
    quantiles_ : tuple of (float, float) or None
        The quantiles the bounds search used (``None`` when bounds were given).
    output_bounds_ : ndarray of shape (n_features, 2)
        The range of every transformed feature.
    max_row_norm_ : float
        A bound on the L2 norm of every transformed row (NaN entries aside).
    privacy_spent_ : tuple of (float, float)
        The ``(epsilon, delta)`` this fit proves on its own.
    dp_event_ : dp_accounting.DpEvent
        Everything this fit released, as one ``GaussianDpEvent``.
    noise_multiplier_ : float
        The noise multiplier of that Gaussian mechanism.
    extra_delta_ : float
        Always 0 (no partition selection).
    n_features_in_ : int
        Number of features seen during fit.
    feature_names_in_ : ndarray of shape (n_features_in_,)
        Names of features seen during fit, when X has string column names.

    See Also
    --------
    sklearn.preprocessing.StandardScaler : The non-private scaler.
    skdp.pipeline.make_private_pipeline : One privacy budget for preprocessing and model.

    Examples
    --------
    >>> import numpy as np
    >>> from skdp.preprocessing import DPStandardScaler
    >>> X = np.random.default_rng(0).normal(50, 10, size=(5000, 2))
    >>> scaler = DPStandardScaler(privacy=(1.0, 1e-5), bounds=(0, 100), random_state=0)
    >>> scaler.fit(X).mean_.round(0)
    array([50., 50.])
    >>> scaler.privacy_spent_[0] <= 1.0
    True
    """

    _parameter_constraints: dict = {
        "privacy": "no_validation",  # check_privacy gives the messages
        "bounds": "no_validation",  # check_bounds gives the messages
        "quantiles": "no_validation",
        "with_mean": ["boolean"],
        "with_std": ["boolean"],
        "clip": ["boolean"],
        "budget": "no_validation",
        "random_state": ["random_state"],
    }

    def __init__(
        self,
        privacy=(1.0, 1e-5),
        *,
        bounds=None,
        quantiles=(0.01, 0.99),
        with_mean=True,
        with_std=True,
        clip=True,
        budget=None,
        random_state=None,
    ):
        self.privacy = privacy
        self.bounds = bounds
        self.quantiles = quantiles
        self.with_mean = with_mean
        self.with_std = with_std
        self.clip = clip
        self.budget = budget
        self.random_state = random_state

    # --- hooks of the shared flow -----------------------------------------------------------
    def _learns_moments(self) -> bool:
        return self.with_mean or self.with_std

    def _release_weights(self) -> dict:
        weights = {}
        if self.bounds is None:
            weights["bounds"] = BOUNDS_SHARE if self._learns_moments() else 1.0
        if self._learns_moments():
            weights["moments"] = 1.0 - weights.get("bounds", 0.0)
        return weights

    def _validate_fit_input(self, X):
        check_quantiles(self.quantiles)
        X = validate_numeric(self, X, reset=True)
        if self.bounds is not None:
            check_bounds(self.bounds, X.shape[1], type(self).__name__,
                         getattr(self, "feature_names_in_", None))
        return X

    def _quantile_plan(self, n_samples, n_features, release: Release):
        return plan_quantiles(
            self.quantiles, n_samples, n_features, release.noise_multiplier_of("bounds"),
            type(self).__name__,
        )

    def _fit_release(self, X, release: Release, rng) -> list[str]:
        n_samples, n_features = X.shape
        lines = []
        if self.bounds is None:
            plan = self._quantile_plan(n_samples, n_features, release)
            lower, upper = search_bounds(X, plan, rng)
            self.quantiles_ = plan.quantiles
            lines.append(
                f"bounds: found privately, a noisy binary search for the {plan.quantiles[0]:.3g}"
                f" and {plan.quantiles[1]:.3g} quantiles of every column (17 probes, noise "
                f"std {plan.sigma:.4g} per count)"
                + (" (moved inward: the search cannot resolve the requested quantiles)"
                   if plan.relaxed else "")
            )
        else:
            lower, upper = check_bounds(
                self.bounds, n_features, type(self).__name__,
                getattr(self, "feature_names_in_", None),
            )
            self.quantiles_ = None
            lines.append("bounds: given (public), cost nothing")
        self.bounds_ = np.column_stack([lower, upper])
        if self._learns_moments():
            moments = private_moments(
                X, lower, upper, release.noise_multiplier_of("moments"), rng,
                with_variance=self.with_std,
            )
            mean, var, sigma = moments.mean, moments.var, moments.sigma
            lines.append(
                "means" + (" and variances" if self.with_std else "") + " of the clipped "
                f"values: one Gaussian release of their normalised sums and observed counts "
                f"(noise std {sigma:.4g} per sum, sums of values in [-1, 1])"
            )
        else:
            mean, var = (lower + upper) / 2.0, None
        self.mean_ = mean
        self.var_ = var
        if self.with_std:
            scale = np.sqrt(var)
            self.scale_ = np.where(scale > 0, scale, 1.0)
        else:
            self.scale_ = np.ones(n_features)
        self.output_bounds_ = np.column_stack(
            [self._forward(lower), self._forward(upper)]
        )
        self.max_row_norm_ = float(np.linalg.norm(np.abs(self.output_bounds_).max(axis=1)))
        return lines

    # --- estimator API ----------------------------------------------------------------------
    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None):
        """Learn private means and scales of ``X``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Numeric data; NaN marks missing values, which are ignored.
        y : None
            Ignored.

        Returns
        -------
        self : DPStandardScaler
            The fitted scaler.
        """
        self._private_fit(X)
        return self

    def _forward(self, X: np.ndarray) -> np.ndarray:
        return (X - self.mean_ if self.with_mean else X) / self.scale_

    def transform(self, X):
        """Clip to the bounds (if ``clip``), centre and scale.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Numeric data; NaN stays NaN.

        Returns
        -------
        X_tr : ndarray of shape (n_samples, n_features)
            The transformed data.
        """
        check_is_fitted(self)
        X = validate_numeric(self, X, reset=False)
        if self.clip:
            X = np.clip(X, self.bounds_[:, 0], self.bounds_[:, 1])
        return self._forward(X)

    def inverse_transform(self, X):
        """Undo the scaling (clipping cannot be undone).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Transformed data.

        Returns
        -------
        X_original : ndarray of shape (n_samples, n_features)
            ``X * scale_ + mean_``.
        """
        check_is_fitted(self)
        X = validate_numeric(self, X, reset=False)
        X = X * self.scale_
        return X + self.mean_ if self.with_mean else X

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = True
        return tags


def check_quantiles(quantiles) -> None:
    ok = (
        hasattr(quantiles, "__len__")
        and len(quantiles) == 2
        and all(isinstance(q, Real) and not isinstance(q, bool) for q in quantiles)
        and 0.0 < quantiles[0] < 0.5 < quantiles[1] < 1.0
    )
    if not ok:
        raise ValueError(
            "quantiles must be a pair (low, high) with 0 < low < 0.5 < high < 1, e.g. "
            f"(0.01, 0.99); got {quantiles!r}"
        )
