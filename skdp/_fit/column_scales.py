"""Warning a non-private fit about columns on very different scales.

skdp's private fits bound every row (``max_row_norm``) or every per-example gradient
(``max_grad_norm``) as a whole. When one column is orders of magnitude larger than the others
(an ID, an income in cents, a lot area next to counts), it alone sets that bound: the other
columns become tiny next to the noise, and DP-SGD's steps barely move their coefficients even
without noise. On such data ``DPRidge(privacy=(inf, 0))`` scored R^2 0.02 where scikit-learn's
``Ridge`` scored 0.70 (raw rand_hie), with nothing said.

Looking at the data is free only without privacy, so only a non-private fit checks; a private fit
cannot look without spending budget, and its documentation says what to do instead.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from .._utils.validation import warn_user

__all__ = ["UNBALANCED_RATIO", "column_scales", "warn_if_columns_unbalanced"]

#: Warn when the largest column scale is this many times the median one: the median column then
#: keeps at most 1% of a row's norm. Raw tables measured 300-60,000 (wine, ames, breast cancer,
#: rand_hie), prepared ones 1-50 (standardised or one-hot columns, pixels, digits, diabetes).
UNBALANCED_RATIO = 100.0


def column_scales(X) -> np.ndarray:
    """Root mean square of each column's nonzero entries (0 for a column without any): the size
    of a value where there is one, so that sparse one-hot or hashed columns count as unit-sized
    rather than tiny."""
    if sp.issparse(X):
        X = sp.csc_array(X)
        counts = np.diff(X.indptr)
        sums = np.asarray((X.multiply(X)).sum(axis=0)).ravel()
    else:
        X = np.asarray(X, dtype=np.float64)
        counts = np.count_nonzero(X, axis=0)
        sums = np.einsum("ij,ij->j", X, X)
    return np.sqrt(sums / np.maximum(counts, 1))


def warn_if_columns_unbalanced(X, estimator: str) -> None:
    """Warn when the columns of ``X`` are on very different scales (see the module docstring).
    Call only for a non-private fit."""
    scales = column_scales(X)
    scales = scales[scales > 0]
    if scales.size < 2:
        return
    largest, median = float(scales.max()), float(np.median(scales))
    if largest <= UNBALANCED_RATIO * median:
        return
    warn_user(
        f"{estimator}: the columns of X are on very different scales (the largest is "
        f"{largest / median:.3g} times the median column). A private fit bounds each row as a "
        "whole, so the small columns are drowned by its noise, and DP-SGD barely trains them "
        "even without privacy. Put the columns on a common scale first: "
        "skdp.preprocessing.DPStandardScaler inside skdp.pipeline.make_private_pipeline, or "
        "public constants. (Only a non-private fit can check this for free.)",
        UserWarning,
    )
