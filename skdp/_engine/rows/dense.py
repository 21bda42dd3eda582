"""Dense rows on the device (a torch tensor): their per-row quantities, in float64 without a
float64 copy of X."""

from __future__ import annotations

import torch

__all__ = ["dense_row_norms_float64"]

# Rows per chunk: the float64 working copy of one chunk stays small (2048 x d doubles) while
# each chunk is large enough to keep the reduction efficient.
_CHUNK_ROWS = 2048


def dense_row_norms_float64(X: torch.Tensor) -> torch.Tensor:
    """``||x_i||`` of every row, in float64: huge rows get a large but exact norm.

    ``vector_norm(X, dtype=float64)`` would cast all of ``X`` first (twice its float32 size:
    360 MiB for Fashion-MNIST); chunking keeps the extra memory to one chunk.
    """
    norms = torch.empty(X.shape[0], dtype=torch.float64, device=X.device)
    for start in range(0, X.shape[0], _CHUNK_ROWS):
        stop = start + _CHUNK_ROWS
        torch.linalg.vector_norm(X[start:stop], dim=1, dtype=torch.float64, out=norms[start:stop])
    return norms
