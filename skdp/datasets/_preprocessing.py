"""Data-independent preprocessing building blocks shared by the bundled data sets.

Everything here is stateless or configured with public constants, so that fitting the
resulting transformers on private data learns nothing from it. All callables are
module-level functions (or :func:`functools.partial` of them) so the transformers
pickle and clone cleanly.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import partial
from typing import Any

import numpy as np
from sklearn.compose import ColumnTransformer
from sklearn.preprocessing import FunctionTransformer, OneHotEncoder

__all__ = ["public_scale", "make_public_preprocessor"]

_KINDS = ("linear", "log", "log1p")


def public_scale(X: Any, *, kind: str, center: float, scale: float) -> np.ndarray:
    """Apply ``(f(X) - center) / scale`` with ``f`` one of identity, log, log1p.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_columns)
        Numeric values (an object array or a DataFrame slice is converted to float64).
        NaN values propagate to the output.
    kind : {"linear", "log", "log1p"}
        The fixed, elementwise function ``f``.
    center, scale : float
        Public constants; ``scale`` must be positive.

    Returns
    -------
    ndarray of shape (n_samples, n_columns), dtype float64
    """
    if kind not in _KINDS:
        raise ValueError(f"kind must be one of {_KINDS}, got {kind!r}")
    if not scale > 0:
        raise ValueError(f"scale must be positive, got {scale!r}")
    values = np.asarray(X, dtype=np.float64)
    if values.ndim == 1:
        values = values.reshape(-1, 1)
    if kind == "log":
        with np.errstate(divide="ignore", invalid="ignore"):
            values = np.log(values)
    elif kind == "log1p":
        with np.errstate(divide="ignore", invalid="ignore"):
            values = np.log1p(values)
    return (values - center) / scale


def _fixed_names(transformer: Any, input_features: Any, *, names: tuple[str, ...]) -> np.ndarray:
    """``feature_names_out`` callable returning fixed names, whatever the input names."""
    return np.asarray(names, dtype=object)


def _prefixed_category(input_feature: str, category: Any, *, prefix: str) -> str:
    """``feature_name_combiner`` for OneHotEncoder: ``"<column>_<category>"``."""
    return f"{prefix}_{category}"


def make_public_preprocessor(
    columns: Sequence[str],
    numeric: Mapping[str, tuple[str, float, float]],
    categories: Mapping[str, Sequence[str]],
) -> ColumnTransformer:
    """Build an unfitted, data-independent ColumnTransformer.

    Parameters
    ----------
    columns : sequence of str
        All input column names, in order. Columns are selected by integer position, so
        the transformer works on numpy arrays and on DataFrames alike.
    numeric : mapping
        ``name -> (kind, center, scale)`` for :func:`public_scale`.
    categories : mapping
        ``name -> list of public categories`` for a one-hot encoding with
        ``handle_unknown="ignore"`` (unknown and missing values give an all-zero block).

    Returns
    -------
    ColumnTransformer
        Output columns follow ``columns`` order; feature names are ``"<column>"`` for
        numeric and ``"<column>_<category>"`` for categorical columns, for both numpy
        and DataFrame input.
    """
    columns = list(columns)
    transformers: list[tuple[str, Any, list[int]]] = []
    for position, name in enumerate(columns):
        if name in numeric:
            kind, center, scale = numeric[name]
            step: Any = FunctionTransformer(
                public_scale,
                kw_args={"kind": kind, "center": float(center), "scale": float(scale)},
                feature_names_out=partial(_fixed_names, names=(name,)),
            )
        elif name in categories:
            step = OneHotEncoder(
                categories=[list(categories[name])],
                handle_unknown="ignore",
                sparse_output=False,
                dtype=np.float64,
                feature_name_combiner=partial(_prefixed_category, prefix=name),
            )
        else:  # pragma: no cover - guarded by the callers' constant tables
            raise ValueError(f"no public preprocessing rule for column {name!r}")
        transformers.append((name, step, [position]))
    return ColumnTransformer(
        transformers,
        remainder="drop",
        sparse_threshold=0.0,
        verbose_feature_names_out=False,
    )
