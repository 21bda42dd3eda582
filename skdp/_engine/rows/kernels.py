"""The operations the models need of a batch of input rows, for every representation.

``h`` is a dense tensor or :class:`~.sparse.SparseRows`; each function here is the one place
that picks the kernel for it, so the models' code (``_glm.py``, ``_mlp.py``, ``_factored.py``)
is written once. A new representation of rows implements the same operations (``mm``,
``t_mm``, ``row_sq_norms_float64``, ``square``, ``index_select``) and is dispatched here.
"""

from __future__ import annotations

import torch

from .dense import dense_row_norms_float64
from .sparse import SparseRows

__all__ = [
    "input_addmm",
    "input_mm",
    "input_sq_norms",
    "input_square",
    "input_t_mm",
    "row_norms_float64",
]


def row_norms_float64(X: torch.Tensor | SparseRows) -> torch.Tensor:
    """``||x_i||`` of every row in float64 (sparse rows sum the squares of their stored values
    in float64: a float64 copy of the values only)."""
    if isinstance(X, SparseRows):
        return X.row_sq_norms_float64().sqrt_()
    return dense_row_norms_float64(X)


def input_mm(h: torch.Tensor | SparseRows, W: torch.Tensor) -> torch.Tensor:
    """``h @ W``."""
    return h.mm(W) if isinstance(h, SparseRows) else h @ W


def input_addmm(
    bias: torch.Tensor, h: torch.Tensor | SparseRows, W: torch.Tensor
) -> torch.Tensor:
    """``h @ W + bias``."""
    if isinstance(h, SparseRows):
        return h.mm(W).add_(bias)
    return torch.addmm(bias, h, W)


def input_t_mm(h: torch.Tensor | SparseRows, R: torch.Tensor, out: torch.Tensor) -> torch.Tensor:
    """``h^T @ R`` into ``out``."""
    if isinstance(h, SparseRows):
        return h.t_mm(R, out)
    return torch.mm(h.T, R, out=out)


def input_sq_norms(h: torch.Tensor | SparseRows) -> torch.Tensor:
    """``||h_i||^2`` in ``h``'s dtype (sparse rows: summed in float64, then rounded once)."""
    if isinstance(h, SparseRows):
        return h.row_sq_norms_float64().to(h.dtype)
    return torch.linalg.vector_norm(h, dim=1).square_()


def input_square(h: torch.Tensor | SparseRows) -> torch.Tensor | SparseRows:
    """The elementwise square of ``h``."""
    return h.square()
