"""Sparse rows on the host: canonical CSR and its row norms (no dense copy)."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

__all__ = ["canonical_csr", "csr_row_norms"]


def canonical_csr(X, dtype: np.dtype | type | None = None) -> sp.csr_array:
    """``X`` (any scipy sparse format) as a CSR array with sorted, distinct entries per row.

    Duplicate entries are summed: a row's norm is the norm of the sums, not of the stored
    pieces (which can be smaller, and clipping with it would be too weak). ``X`` itself is never
    modified; with ``dtype`` the result is a converted copy.
    """
    X = sp.csr_array(X)  # shares X's arrays when X is already CSR
    if dtype is not None:
        X = X.astype(dtype)  # a copy
    elif not X.has_canonical_format:
        X = X.copy()
    X.sum_duplicates()  # in place, on our own copy (a no-op when already canonical)
    return X


def csr_row_norms(X: sp.csr_array) -> np.ndarray:
    """``||x_i||`` of every row of a canonical CSR array, in float64 (empty rows give 0)."""
    values = X.data.astype(np.float64)
    rows = np.repeat(np.arange(X.shape[0]), np.diff(X.indptr))
    return np.sqrt(np.bincount(rows, weights=values * values, minlength=X.shape[0]))
