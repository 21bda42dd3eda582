"""DPSimpleImputer: missing values replaced by statistics learned under differential privacy."""

from __future__ import annotations

import numpy as np
from sklearn.base import _fit_context
from sklearn.utils._param_validation import StrOptions
from sklearn.utils.validation import _check_feature_names_in, check_is_fitted

from .._defaults.preprocessing import BOUNDS_SHARE, MIN_COUNT_IN_SIGMAS
from ._base import BaseDPTransformer, Release
from ._bounds import plan_quantiles, search_bounds, search_quantiles
from ._columns import input_columns, is_numeric_column, sort_keys
from ._mechanisms import KeyColumn, partition_threshold, thresholded_key_counts
from ._scaler import check_quantiles, private_moments
from ._validation import check_bounds, validate_numeric

__all__ = ["DPSimpleImputer"]



class DPSimpleImputer(BaseDPTransformer):
    """Replace missing values by a per-column statistic learned under differential privacy.

    The private counterpart of scikit-learn's ``SimpleImputer``:

    * ``'mean'``: the private mean of each column's observed values, clipped to bounds that are
      public (``bounds=``) or found privately (as :class:`DPStandardScaler` finds them);
    * ``'median'``: a private median, by a noisy binary search;
    * ``'most_frequent'``: the most frequent value among those kept by Gaussian partition
      selection (as :class:`DPOneHotEncoder` finds categories); works on strings too. A column
      whose values are all rare (e.g. continuous) keeps none, and is filled with
      ``fill_value``;
    * ``'constant'``: ``fill_value``, which learns nothing and costs no privacy.

    Unlike scikit-learn's imputer it keeps every column, even one that is all missing (dropping
    it would reveal that), filling such columns with a public fallback (the centre of the
    bounds, or ``fill_value``). With ``add_indicator=True`` it appends a missing-value indicator
    for *every* feature: choosing only the features with missing values would reveal which
    have some.

    Parameters
    ----------
    privacy : tuple of (float, float), default=(1.0, 1e-5)
        ``(epsilon, delta)`` of this fit on its own. Inside
        :func:`skdp.pipeline.make_private_pipeline` the pipeline's privacy is split among its
        steps instead, and this parameter must be left at its default.
    strategy : {'mean', 'median', 'most_frequent', 'constant'}, default='mean'
        The statistic.
    fill_value : str or number, default=None
        The value of ``'constant'``, and the fallback of ``'most_frequent'`` (``None``: 0 for
        numeric data, ``'missing_value'`` for strings).
    bounds : tuple of (float or array-like, float or array-like) or dict, default=None
        Public bounds ``(lower, upper)`` for ``'mean'`` (each a number or one value per
        feature, or a dict ``{column name: (lower, upper)}`` naming every column of a
        DataFrame); ``None``: found privately.
    quantiles : tuple of (float, float), default=(0.01, 0.99)
        The quantiles a private bounds search looks for (``'mean'`` without bounds).
    add_indicator : bool, default=False
        Append a 0/1 missing indicator for every feature.
    budget : skdp.PrivacyBudget, default=None
        A ledger to charge this fit to (on its own).
    random_state : int, RandomState instance or None, default=None
        Seeds the noise; ``None`` draws it from OS entropy.

    Attributes
    ----------
    statistics_ : ndarray of shape (n_features,)
        The fill value of each feature.
    bounds_ : ndarray of shape (n_features, 2) or None
        The bounds of ``'mean'`` (given, or found privately).
    privacy_spent_ : tuple of (float, float)
        The ``(epsilon, delta)`` this fit proves on its own (0 for ``'constant'``).
    dp_event_ : dp_accounting.DpEvent
        Everything released, as one ``GaussianDpEvent``.
    noise_multiplier_ : float
        Its noise multiplier.
    extra_delta_ : float
        The (0, p) part of partition selection (``'most_frequent'``), included in
        ``privacy_spent_``'s delta.
    n_features_in_ : int
        Number of features seen during fit.
    feature_names_in_ : ndarray of shape (n_features_in_,)
        Names of features seen during fit, when X has string column names.

    See Also
    --------
    sklearn.impute.SimpleImputer : The non-private imputer.

    Examples
    --------
    >>> import numpy as np
    >>> from skdp.preprocessing import DPSimpleImputer
    >>> X = np.random.default_rng(0).uniform(0, 10, size=(10000, 1))
    >>> X[::10] = np.nan
    >>> imp = DPSimpleImputer(privacy=(1.0, 1e-5), bounds=(0, 10), random_state=0).fit(X)
    >>> imp.statistics_.round(1)
    array([5.])
    >>> bool(np.isnan(imp.transform(X)).any())
    False
    """

    _parameter_constraints: dict = {
        "privacy": "no_validation",
        "strategy": [StrOptions({"mean", "median", "most_frequent", "constant"})],
        "fill_value": "no_validation",
        "bounds": "no_validation",
        "quantiles": "no_validation",
        "add_indicator": ["boolean"],
        "budget": "no_validation",
        "random_state": ["random_state"],
    }

    def __init__(
        self,
        privacy=(1.0, 1e-5),
        *,
        strategy="mean",
        fill_value=None,
        bounds=None,
        quantiles=(0.01, 0.99),
        add_indicator=False,
        budget=None,
        random_state=None,
    ):
        self.privacy = privacy
        self.strategy = strategy
        self.fill_value = fill_value
        self.bounds = bounds
        self.quantiles = quantiles
        self.add_indicator = add_indicator
        self.budget = budget
        self.random_state = random_state

    # --- hooks of the shared flow -----------------------------------------------------------
    def _numeric(self) -> bool:
        return self.strategy in ("mean", "median")

    def _release_weights(self) -> dict:
        if self.strategy == "constant":
            return {}
        if self.strategy == "mean":
            if self.bounds is None:
                return {"bounds": BOUNDS_SHARE, "moments": 1.0 - BOUNDS_SHARE}
            return {"moments": 1.0}
        if self.strategy == "median":
            return {"median": 1.0}
        return {"counts": 1.0}

    def _uses_partition_selection(self) -> bool:
        return self.strategy == "most_frequent"

    def _validate_fit_input(self, X):
        if self._numeric():
            if self.strategy == "mean" and self.bounds is None:
                check_quantiles(self.quantiles)
            X = validate_numeric(self, X, reset=True)
            if self.bounds is not None and self.strategy == "mean":
                check_bounds(self.bounds, X.shape[1], type(self).__name__,
                         getattr(self, "feature_names_in_", None))
            self._numeric_output = True
            return X
        columns = input_columns(self, X, reset=True)
        # Whether the output is numeric is decided by the columns' types (a public schema).
        self._numeric_output = all(is_numeric_column(col) for col in columns)
        return _KeyColumns([KeyColumn.from_values(col) for col in columns])

    def _quantile_plan(self, n_samples, n_features, release: Release):
        if self.strategy == "mean" and self.bounds is None:
            return plan_quantiles(
                self.quantiles, n_samples, n_features, release.noise_multiplier_of("bounds"),
                type(self).__name__,
            )
        if self.strategy == "median":
            return plan_quantiles(
                (0.5,), n_samples, n_features, release.noise_multiplier_of("median"),
                type(self).__name__,
            )
        return None

    def _fit_release(self, X, release: Release, rng) -> list[str]:
        self.bounds_ = None
        if self.strategy == "constant":
            fill = self._fill(self._numeric_output)
            self.statistics_ = np.full(X.shape[1], fill, dtype=object)
            return [f"fill value: the constant {fill!r} (public), costs nothing"]
        if self._numeric():
            return self._fit_numeric(X, release, rng)
        return self._fit_most_frequent(X, release, rng)

    def _fit_numeric(self, X, release, rng) -> list[str]:
        n_samples, n_features = X.shape
        plan = self._quantile_plan(n_samples, n_features, release)
        if self.strategy == "median":
            low, high = search_quantiles(X, plan, rng)
            self.statistics_ = (low[:, 0] + high[:, 0]) / 2.0
            return [
                f"fill value: a private median per column, by a noisy binary search (17 "
                f"probes, noise std {plan.sigma:.4g} per count)"
            ]
        lines = []
        if self.bounds is None:
            lower, upper = search_bounds(X, plan, rng)
            lines.append(
                f"bounds: found privately, a noisy binary search for the {plan.quantiles[0]:.3g}"
                f" and {plan.quantiles[1]:.3g} quantiles (noise std {plan.sigma:.4g} per count)"
            )
        else:
            lower, upper = check_bounds(
                self.bounds, n_features, type(self).__name__,
                getattr(self, "feature_names_in_", None),
            )
            lines.append("bounds: given (public), cost nothing")
        self.bounds_ = np.column_stack([lower, upper])
        moments = private_moments(
            X, lower, upper, release.noise_multiplier_of("moments"), rng, with_variance=False
        )
        # A column with (nearly) no observed values has a mean that is noise: use the public
        # fallback, decided from the released noisy count (post-processing).
        mostly_missing = moments.count < max(MIN_COUNT_IN_SIGMAS * moments.sigma, 1.0)
        self.statistics_ = np.where(mostly_missing, (lower + upper) / 2.0, moments.mean)
        lines.append(
            "fill value: the private mean of the clipped observed values (one Gaussian release "
            f"of normalised sums and observed counts, noise std {moments.sigma:.4g} per sum); "
            "the centre of the bounds where the noisy observed count is below "
            f"{MIN_COUNT_IN_SIGMAS:g} noise std"
        )
        return lines

    def _fit_most_frequent(self, X, release, rng) -> list[str]:
        m = X.shape[1]
        sigma = np.sqrt(m) * release.noise_multiplier_of("counts")
        threshold = partition_threshold(sigma, release.extra_delta, m)
        # Missing values are not candidates for the fill value (removing them is a per-row map
        # that keeps one key or none per row and column: the sensitivity does not grow).
        kept = thresholded_key_counts(X.columns, sigma, threshold, rng, exclude_missing=True)
        fill = self._fill(self._numeric_output)
        stats = []
        for counts in kept:
            if counts:
                best = max(counts.values())  # ties broken by the smallest key
                stats.append(sort_keys([k for k, c in counts.items() if c == best])[0])
            else:
                stats.append(fill)
        self.statistics_ = np.asarray(stats, dtype=object)
        return [
            f"fill value: the most frequent value among those kept by Gaussian partition "
            f"selection (noise std {sigma:.4g}, kept above {threshold:.4g}); {fill!r} where "
            "none was kept"
        ]

    def _fill(self, numeric: bool):
        if self.fill_value is not None:
            return self.fill_value
        return 0.0 if numeric else "missing_value"

    # --- estimator API ----------------------------------------------------------------------
    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None):
        """Learn the fill value of every feature.

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, n_features)
            Data with missing values (NaN; also None and pd.NA in non-numeric columns).
        y : None
            Ignored.

        Returns
        -------
        self : DPSimpleImputer
            The fitted imputer.
        """
        self._private_fit(X)
        return self

    def transform(self, X):
        """Fill missing values (and append indicators if ``add_indicator``).

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, n_features)
            Data with missing values.

        Returns
        -------
        X_out : ndarray of shape (n_samples, n_features) or (n_samples, 2 * n_features)
            Float when the data (and fill values) are numeric, object otherwise.
        """
        check_is_fitted(self)
        if self._numeric_output:
            values = validate_numeric(self, X, reset=False)
            missing = np.isnan(values)
            filled = np.where(missing, self.statistics_.astype(np.float64)[None, :], values)
        else:
            columns = input_columns(self, X, reset=False)
            missing = np.column_stack([KeyColumn.from_values(c).is_missing() for c in columns])
            values = np.column_stack([np.asarray(col, dtype=object) for col in columns])
            filled = np.where(missing, self.statistics_[None, :], values)
        if self.add_indicator:
            return np.hstack([filled, missing.astype(filled.dtype)])
        return filled

    def get_feature_names_out(self, input_features=None):
        """Output feature names: the input names, then ``missingindicator_<name>`` if
        ``add_indicator``.

        Parameters
        ----------
        input_features : array-like of str, default=None
            Input feature names.

        Returns
        -------
        names : ndarray of str
        """
        check_is_fitted(self)
        features = _check_feature_names_in(self, input_features)
        names = list(features)
        if self.add_indicator:
            names += [f"missingindicator_{f}" for f in features]
        return np.asarray(names, dtype=object)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = True
        tags.input_tags.string = True
        return tags


class _KeyColumns:
    """Validated mixed-type input: key columns, with the shape the shared flow reads."""

    def __init__(self, columns: list[np.ndarray]) -> None:
        self.columns = columns
        self.shape = (int(columns[0].codes.shape[0]), len(columns))
