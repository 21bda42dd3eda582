"""Input checks shared by the DP transformers: numeric columns and public bounds."""

from __future__ import annotations

import numbers
from collections.abc import Mapping

import numpy as np
from scipy import sparse
from sklearn.utils.validation import validate_data

__all__ = ["check_bounds", "validate_numeric"]


def validate_numeric(estimator, X, *, reset: bool) -> np.ndarray:
    """``X`` as a float64 array (NaN allowed: missing), with scikit-learn's feature checks.

    Non-numeric columns and infinities get errors that say what to use instead.
    """
    name = type(estimator).__name__
    if sparse.issparse(X):
        raise TypeError(
            f"{name} needs dense input: a sparse matrix usually holds one-hot or hashed "
            "features, which need no scaling or imputation; apply it to the numeric columns "
            "only (e.g. in a ColumnTransformer)"
        )
    try:
        return validate_data(
            estimator, X, reset=reset, dtype=np.float64, ensure_all_finite="allow-nan"
        )
    except ValueError as exc:
        text = str(exc)
        if "could not convert" in text or "dtype" in text and "object" in text:
            raise ValueError(
                f"{name} needs numeric columns, but X has non-numeric values ({text}). Encode "
                "categorical columns with skdp.preprocessing.DPOneHotEncoder (in a "
                "ColumnTransformer) and give this step the numeric columns only."
            ) from exc
        if "infinity" in text:
            raise ValueError(
                f"{name}: X contains infinity ({text}). Replace infinite values (e.g. by NaN, "
                "which this step treats as missing) before fitting."
            ) from exc
        raise


def _bounds_by_name(bounds: Mapping, feature_names, hint: str) -> tuple[list, list]:
    """``{column name: (lower, upper)}`` as two lists in the order of ``feature_names``: a
    data dictionary's ranges, which must name every column and nothing else."""
    if feature_names is None:
        raise ValueError(f"{hint}; a dict of bounds needs X with column names (a DataFrame)")
    names = [str(n) for n in feature_names]
    keys = {str(k): v for k, v in bounds.items()}
    missing = [n for n in names if n not in keys]
    unknown = [k for k in keys if k not in names]
    if missing or unknown:
        raise ValueError(
            f"{hint}; a dict of bounds must give every column of X and nothing else"
            + (f"; missing: {missing}" if missing else "")
            + (f"; not columns of X: {unknown}" if unknown else "")
        )
    pairs = [keys[n] for n in names]
    if not all(hasattr(v, "__len__") and not isinstance(v, str) and len(v) == 2 for v in pairs):
        raise ValueError(f"{hint}; every value of a dict of bounds must be a pair (lower, upper)")
    return [v[0] for v in pairs], [v[1] for v in pairs]


def check_bounds(
    bounds, n_features: int, name: str, feature_names=None
) -> tuple[np.ndarray, np.ndarray]:
    """``(lower, upper)`` arrays of shape (n_features,) from ``bounds=(lower, upper)``, each a
    number or a sequence of one value per feature, or from ``{column name: (lower, upper)}``
    for every column of a DataFrame (``feature_names``); finite, with ``lower <= upper``."""
    hint = (
        f"{name}: bounds must be a pair (lower, upper) of public bounds, each a number or one "
        f"value per feature ({n_features} features), e.g. bounds=(0, 100), or a dict "
        "{column name: (lower, upper)}"
    )
    if isinstance(bounds, Mapping):
        bounds = _bounds_by_name(bounds, feature_names, hint)
    if isinstance(bounds, str) or not hasattr(bounds, "__len__") or len(bounds) != 2:
        raise ValueError(f"{hint}; got {bounds!r}")
    arrays = []
    for part in bounds:
        if isinstance(part, numbers.Real) and not isinstance(part, bool):
            arrays.append(np.full(n_features, float(part)))
            continue
        try:
            array = np.asarray(part, dtype=np.float64)
        except (TypeError, ValueError):
            raise ValueError(f"{hint}; got {bounds!r}") from None
        if array.shape != (n_features,):
            raise ValueError(f"{hint}; got a part of shape {array.shape}")
        arrays.append(array)
    lower, upper = arrays
    if not (np.all(np.isfinite(lower)) and np.all(np.isfinite(upper))):
        raise ValueError(f"{hint}; bounds must be finite, got {bounds!r}")
    if np.any(lower > upper):
        bad = np.flatnonzero(lower > upper).tolist()
        raise ValueError(f"{hint}; lower > upper for features {bad}")
    return lower, upper
