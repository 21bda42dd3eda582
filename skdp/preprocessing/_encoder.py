"""DPOneHotEncoder: one-hot encoding whose categories are public or discovered privately."""

from __future__ import annotations

from numbers import Integral, Real

import numpy as np
from scipy import sparse
from sklearn.base import _fit_context
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import _check_feature_names_in, check_is_fitted

from ._base import BaseDPTransformer, Release
from ._columns import key_columns, key_to_category, sort_keys
from ._mechanisms import (
    column_keys,
    partition_threshold,
    public_key_counts,
    thresholded_key_counts,
)

__all__ = ["DPOneHotEncoder"]


class DPOneHotEncoder(BaseDPTransformer):
    """Encode categorical features as a one-hot array, with categories that are public or
    discovered under differential privacy.

    The private counterpart of scikit-learn's ``OneHotEncoder``. With public ``categories``
    the encoder learns nothing from the data and costs no privacy. With
    ``categories='auto'`` it discovers the frequent categories of each column by Gaussian
    partition selection: every category present gets a noisy count, and those above a
    threshold set from delta are kept (a category held by a single row is kept only with
    probability ``extra_delta_``). Every other value, rare or unseen, maps to one extra
    "infrequent" column per feature, so ``transform`` never fails on unknown categories and
    every row has exactly one 1 per feature. Missing values (None, NaN, pd.NA) are a category
    like any other.

    Parameters
    ----------
    privacy : tuple of (float, float), default=(1.0, 1e-5)
        ``(epsilon, delta)`` of this fit on its own (a tenth of delta goes to the keep
        probability of rare categories). Inside :func:`skdp.pipeline.make_private_pipeline`
        the pipeline's privacy is split among its steps instead, and this parameter must be
        left at its default.
    categories : 'auto' or list of array-like, default='auto'
        ``'auto'``: discovered privately. A list: the public categories of each feature (for
        example from a data dictionary), free; values not listed map to the infrequent column.
    max_categories : int, default=None
        Keep at most this many categories per feature, those with the largest noisy counts
        (post-processing with 'auto'; with public categories it needs a noisy histogram of
        them, which costs privacy).
    min_frequency : int or float, default=None
        Keep only categories whose noisy count is at least this (a float in (0, 1): this
        fraction of the rows). Same cost as ``max_categories``.
    sparse_output : bool, default=True
        Return a CSR matrix (as scikit-learn's encoder), or a dense array.
    dtype : number type, default=np.float64
        Type of the output.
    budget : skdp.PrivacyBudget, default=None
        A ledger to charge this fit to (on its own).
    random_state : int, RandomState instance or None, default=None
        Seeds the noise; ``None`` draws it from OS entropy.

    Attributes
    ----------
    categories_ : list of ndarray
        The kept categories of each feature, sorted (missing values, as ``np.nan``, last).
    category_counts_ : list of ndarray or None
        Their released noisy counts (``None`` for public categories without counts).
    threshold_ : float or None
        The count a category had to exceed to be kept (``None`` for public categories).
    privacy_spent_ : tuple of (float, float)
        The ``(epsilon, delta)`` this fit proves on its own (0 for public categories).
    dp_event_ : dp_accounting.DpEvent
        The Gaussian part of the release (``NoOpDpEvent`` for public categories).
    noise_multiplier_ : float
        Its noise multiplier.
    extra_delta_ : float
        The (0, p) part of partition selection, included in ``privacy_spent_``'s delta.
    n_features_in_ : int
        Number of features seen during fit.
    feature_names_in_ : ndarray of shape (n_features_in_,)
        Names of features seen during fit, when X has string column names.

    See Also
    --------
    sklearn.preprocessing.OneHotEncoder : The non-private encoder.

    Examples
    --------
    >>> import pandas as pd
    >>> from skdp.preprocessing import DPOneHotEncoder
    >>> X = pd.DataFrame({"colour": ["red"] * 3000 + ["blue"] * 2000 + ["rare"] * 3})
    >>> enc = DPOneHotEncoder(privacy=(1.0, 1e-5), random_state=0).fit(X)
    >>> enc.categories_
    [array(['blue', 'red'], dtype=object)]
    >>> enc.get_feature_names_out().tolist()
    ['colour_blue', 'colour_red', 'colour_infrequent']
    >>> enc.transform(pd.DataFrame({"colour": ["red", "green"]})).toarray()
    array([[0., 1., 0.],
           [0., 0., 1.]])
    """

    _parameter_constraints: dict = {
        "privacy": "no_validation",
        "categories": [StrOptions({"auto"}), list],
        "max_categories": [Interval(Integral, 1, None, closed="left"), None],
        "min_frequency": [
            Interval(Integral, 1, None, closed="left"),
            Interval(Real, 0, 1, closed="neither"),
            None,
        ],
        "sparse_output": ["boolean"],
        "dtype": "no_validation",
        "budget": "no_validation",
        "random_state": ["random_state"],
    }

    def __init__(
        self,
        privacy=(1.0, 1e-5),
        *,
        categories="auto",
        max_categories=None,
        min_frequency=None,
        sparse_output=True,
        dtype=np.float64,
        budget=None,
        random_state=None,
    ):
        self.privacy = privacy
        self.categories = categories
        self.max_categories = max_categories
        self.min_frequency = min_frequency
        self.sparse_output = sparse_output
        self.dtype = dtype
        self.budget = budget
        self.random_state = random_state

    # --- hooks of the shared flow -----------------------------------------------------------
    def _public(self) -> bool:
        return not isinstance(self.categories, str)

    def _needs_counts(self) -> bool:
        return self.max_categories is not None or self.min_frequency is not None

    def _release_weights(self) -> dict:
        if self._public() and not self._needs_counts():
            return {}
        return {"counts": 1.0}

    def _uses_partition_selection(self) -> bool:
        return not self._public()

    def _mechanism_name(self) -> str:
        if self._public():
            return "DPOneHotEncoder: Gaussian histogram over public categories"
        return "DPOneHotEncoder: Gaussian partition selection of categories"

    def _validate_fit_input(self, X):
        columns = key_columns(self, X, reset=True)
        if self._public():
            if len(self.categories) != len(columns):
                raise ValueError(
                    f"categories has {len(self.categories)} lists but X has {len(columns)} "
                    "features; give one list of public categories per feature"
                )
        return _Columns(columns)

    def _fit_release(self, X, release: Release, rng) -> list[str]:
        columns = X.columns
        m = len(columns)
        sigma = np.sqrt(m) * release.noise_multiplier_of("counts") if release.weights else 0.0
        if self._public():
            keys = [_public_keys(cats) for cats in self.categories]
            self.threshold_ = None
            if self._needs_counts():
                counts = public_key_counts(columns, keys, sigma, rng)
                kept = [dict(zip(k, c[:-1], strict=True)) for k, c in zip(keys, counts,
                                                                         strict=True)]
                lines = [
                    f"categories: public; their counts released by a Gaussian histogram "
                    f"(noise std {sigma:.4g} per count) for max_categories/min_frequency"
                ]
            else:
                kept = [dict.fromkeys(k) for k in keys]
                lines = ["categories: public (given), cost nothing"]
        else:
            threshold = partition_threshold(sigma, release.extra_delta, m)
            kept = thresholded_key_counts(columns, sigma, threshold, rng)
            self.threshold_ = threshold
            lines = [
                f"categories: discovered privately by Gaussian partition selection: noisy "
                f"counts (noise std {sigma:.4g}) of the categories present, kept above "
                f"{threshold:.4g} (a category of one row is kept with probability at most "
                f"{release.extra_delta:.3g} over all {m} features)"
            ]
        kept = [self._post_process(k, X.n_samples) for k in kept]
        # Public categories keep the user's order (as scikit-learn); found ones are sorted.
        ordered = [list(k) if self._public() else sort_keys(list(k)) for k in kept]
        self._kept_keys = ordered
        self.categories_ = [
            np.array([key_to_category(k) for k in keys], dtype=object) for keys in ordered
        ]
        if any(v is not None for k in kept for v in k.values()):
            self.category_counts_ = [
                np.array([k[key] for key in keys], dtype=np.float64)
                for k, keys in zip(kept, ordered, strict=True)
            ]
        else:
            self.category_counts_ = None
        lines.append(
            "every other value (rare, unseen or unlisted) maps to one 'infrequent' column per "
            "feature"
        )
        return lines

    def _post_process(self, counts: dict, n_samples: int) -> dict:
        """``min_frequency`` and ``max_categories`` on released noisy counts (free)."""
        if self.min_frequency is not None:
            minimum = (
                self.min_frequency * n_samples
                if isinstance(self.min_frequency, Real) and self.min_frequency < 1
                and not isinstance(self.min_frequency, Integral)
                else self.min_frequency
            )
            counts = {k: c for k, c in counts.items() if c >= minimum}
        if self.max_categories is not None and len(counts) > self.max_categories:
            top = sorted(counts.items(), key=lambda kc: -kc[1])[: self.max_categories]
            counts = dict(top)
        return counts

    # --- estimator API ----------------------------------------------------------------------
    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None):
        """Learn (or take) the categories of every feature.

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, n_features)
            Categorical data, of any dtype.
        y : None
            Ignored.

        Returns
        -------
        self : DPOneHotEncoder
            The fitted encoder.
        """
        self._private_fit(X)
        return self

    def transform(self, X):
        """One-hot encode ``X``; values not among ``categories_`` go to the infrequent column.

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, n_features)
            Categorical data.

        Returns
        -------
        X_out : sparse matrix or ndarray of shape (n_samples, n_encoded_features)
            One 1 per feature in every row.
        """
        check_is_fitted(self)
        columns = key_columns(self, X, reset=False)
        n = columns[0].codes.shape[0]
        indices, offset = [], 0
        for column, kept in zip(columns, self._kept_keys, strict=True):
            lookup = {key: offset + i for i, key in enumerate(kept)}
            infrequent = offset + len(kept)
            indices.append(column.lookup(lookup, infrequent).astype(np.int64))
            offset = infrequent + 1
        cols = np.column_stack(indices).ravel()
        out = sparse.csr_matrix(
            (np.ones(cols.size, dtype=self.dtype), cols, np.arange(0, cols.size + 1, len(columns))),
            shape=(n, offset),
        )
        return out if self.sparse_output else out.toarray()

    def get_feature_names_out(self, input_features=None):
        """Output feature names: ``<feature>_<category>`` and ``<feature>_infrequent``.

        Parameters
        ----------
        input_features : array-like of str, default=None
            Input feature names (default: ``feature_names_in_`` or ``x0, x1, ...``).

        Returns
        -------
        names : ndarray of str
        """
        check_is_fitted(self)
        features = _check_feature_names_in(self, input_features)
        names = []
        for feature, categories in zip(features, self.categories_, strict=True):
            names += [f"{feature}_{category}" for category in categories]
            names.append(f"{feature}_infrequent")
        return np.asarray(names, dtype=object)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.categorical = True
        tags.input_tags.string = True
        tags.input_tags.allow_nan = True
        return tags


class _Columns:
    """Validated categorical input: a list of key columns, with the shape the flow needs."""

    def __init__(self, columns: list[np.ndarray]) -> None:
        self.columns = columns
        self.n_samples = int(columns[0].codes.shape[0])
        self.shape = (self.n_samples, len(columns))


def _public_keys(categories) -> list:
    return column_keys(list(categories))
