"""Columns of mixed-type input (DataFrames, object arrays) for the categorical DP transformers."""

from __future__ import annotations

import numpy as np
from scipy import sparse
from sklearn.utils.validation import _check_feature_names, _check_n_features, check_array

from ._mechanisms import MISSING, KeyColumn

__all__ = ["input_columns", "is_numeric_column", "key_columns", "sort_keys", "key_to_category"]


def key_columns(estimator, X, *, reset: bool) -> list[KeyColumn]:
    """:func:`input_columns` as :class:`KeyColumn` objects."""
    return [KeyColumn.from_values(col) for col in input_columns(estimator, X, reset=reset)]


def is_numeric_column(column: np.ndarray) -> bool:
    """Whether a column holds numbers only (missing values aside)."""
    import pandas as pd

    if column.dtype.kind in "iuf":
        return True
    kind = pd.api.types.infer_dtype(column, skipna=True)
    return kind in ("integer", "floating", "mixed-integer-float", "empty")


def input_columns(estimator, X, *, reset: bool) -> list[np.ndarray]:
    """The columns of ``X`` (a DataFrame or 2-d array of any dtype), each as an array in its
    own dtype, with scikit-learn's checks of the feature names and their number."""
    if sparse.issparse(X):
        raise TypeError(
            f"{type(estimator).__name__} needs dense input (a DataFrame or an array of "
            "categories), got a sparse matrix"
        )
    _check_feature_names(estimator, X, reset=reset)
    if hasattr(X, "iloc"):  # a DataFrame: column by column, each in its own dtype
        if X.shape[0] == 0 or X.shape[1] == 0:
            check_array(np.empty(X.shape))  # scikit-learn's messages for empty input
        columns = [X.iloc[:, j].to_numpy() for j in range(X.shape[1])]
    else:
        # scikit-learn's checks and messages (1-d input, complex numbers, empty arrays).
        array = check_array(X, dtype=None, ensure_all_finite=False)
        columns = [array[:, j] for j in range(array.shape[1])]
        X = array
    _check_n_features(estimator, X, reset=reset)
    return columns


def sort_keys(keys) -> list:
    """Keys in scikit-learn's order: sorted, missing last; mixed types by type name, then value."""
    present = [k for k in keys if k is not MISSING]
    try:
        ordered = sorted(present)
    except TypeError:
        ordered = sorted(present, key=lambda k: (type(k).__name__, str(k)))
    return ordered + ([MISSING] if any(k is MISSING for k in keys) else [])


def key_to_category(key):
    """How a key is shown in ``categories_``: missing values as ``np.nan``, as scikit-learn."""
    return np.nan if key is MISSING else key
