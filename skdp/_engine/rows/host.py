"""Rows on the host, as validated arrays (numpy dense or scipy sparse): the one place for
their per-row quantities and for moving them to the compute device.

Row norms are computed in float64 a block of rows at a time, so a float32 X never gets a
float64 copy; a sparse X never gets a dense one.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
import torch

from .host_sparse import canonical_csr, csr_row_norms
from .sparse import SparseRows

__all__ = [
    "ROW_NORM_SAFETY",
    "block_row_norms",
    "clip_factors_to",
    "row_blocks",
    "check_float32_range",
    "features_to_device",
    "rescale_rows",
    "row_norms",
    "to_tensor",
]

# Rows per block of the host computations: a float64 working copy of one block stays small.
_BLOCK_ROWS = 8192

# Rows are rescaled to a hair below the public bound, so that rounding to float32 can never
# give a row a norm above the one the smoothness constant assumes.
ROW_NORM_SAFETY = 1.0 - 1e-6


def row_blocks(X, block_rows: int = _BLOCK_ROWS):
    """``(start, block)`` for consecutive blocks of rows of a dense ``X``, each a float64 copy
    of at most ``block_rows`` rows (the only float64 copy a blocked pass makes)."""
    X = np.asarray(X)
    for start in range(0, X.shape[0], block_rows):
        yield start, np.array(X[start:start + block_rows], dtype=np.float64)


def clip_factors_to(norms: np.ndarray, max_norm: float) -> np.ndarray:
    """The per-row factors :func:`rescale_rows` applies: ``max_norm * ROW_NORM_SAFETY / norm``
    for rows above that, 1 elsewhere."""
    bound = max_norm * ROW_NORM_SAFETY
    factors = np.ones_like(norms)
    too_long = norms > bound
    factors[too_long] = bound / norms[too_long]
    return factors


def block_row_norms(block: np.ndarray) -> np.ndarray:
    """``||x_i||`` of the rows of a float64 block, for one-pass statistics (einsum: four times
    faster than ``np.linalg.norm(axis=1)``, the same values to a bit or two; :func:`row_norms`
    keeps numpy's norm, whose values the scale search has always released)."""
    return np.sqrt(np.einsum("ij,ij->i", block, block))


def row_norms(X) -> np.ndarray:
    """``||x_i||`` of every row of a numpy or scipy sparse ``X``, in float64."""
    if sp.issparse(X):
        return csr_row_norms(canonical_csr(X, np.float64))
    X = np.asarray(X)
    norms = np.empty(X.shape[0], dtype=np.float64)
    for start in range(0, X.shape[0], _BLOCK_ROWS):
        block = np.asarray(X[start:start + _BLOCK_ROWS], dtype=np.float64)
        norms[start:start + _BLOCK_ROWS] = np.linalg.norm(block, axis=1)
    return norms


def rescale_rows(
    X: np.ndarray | sp.spmatrix | sp.sparray, max_norm: float
) -> np.ndarray | sp.csr_array:
    """Rows with L2 norm above ``max_norm`` scaled down to it: ``x * min(1, max_norm / ||x||)``.

    A per-row transformation with a public bound: changing one row changes one output row, so
    it is free under differential privacy, and afterwards every row (of any possible data set)
    has norm at most ``max_norm``, which is what makes the smoothness constant of the loss
    public. Returns a new float64 array (a canonical CSR array for sparse ``X``, rescaled
    without densifying); ``X`` is left unchanged.
    """
    if sp.issparse(X):
        X = canonical_csr(X, np.float64)
        factors = clip_factors_to(csr_row_norms(X), max_norm)
        X.data *= np.repeat(factors, np.diff(X.indptr))
        return X
    X = np.array(X, dtype=np.float64)
    X *= clip_factors_to(row_norms(X), max_norm)[:, None]  # factor 1: the row is unchanged
    return X


_FLOAT32_MAX = float(np.finfo(np.float32).max)


def check_float32_range(array, name: str) -> None:
    """Compute is float32: refuse values it cannot represent rather than train on infinities."""
    if sp.issparse(array):
        array = array.data  # the stored values; the implicit zeros are representable
    # max and -min rather than abs(array).max(): no temporary copy of the data.
    if array.dtype.kind == "f" and array.size and max(
        float(array.max()), -float(array.min())
    ) > _FLOAT32_MAX:
        raise ValueError(
            f"{name} contains values of magnitude above {_FLOAT32_MAX:.3g}, which skdp's float32 "
            f"computation cannot represent; rescale {name} (features and targets should be on "
            "a public, roughly unit scale)"
        )


def to_tensor(array: np.ndarray, dtype: torch.dtype, device: torch.device) -> torch.Tensor:
    """Host array -> compute tensor; float32 compute, as DP noise dwarfs float32 rounding."""
    array = np.asarray(array)
    if not array.flags.writeable:  # torch refuses to share read-only memory (e.g. memmaps)
        array = array.copy()
    return torch.as_tensor(array, dtype=dtype, device=device)


def features_to_device(X, device: torch.device) -> torch.Tensor | SparseRows:
    """The features as float32 on the compute device: a dense tensor, or for sparse input the
    canonical CSR arrays (:class:`SparseRows`), never a dense copy."""
    if sp.issparse(X):
        return SparseRows.from_scipy(X, torch.float32, device)
    return to_tensor(X, torch.float32, device)
