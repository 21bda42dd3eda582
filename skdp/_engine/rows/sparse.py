"""Sparse rows of the private features (CSR): gathers, products and norms without a dense copy.

One-hot and hashed features arrive as scipy sparse matrices with a handful of non-zeros per row
and up to millions of columns, whose dense form could take gigabytes. :class:`SparseRows` keeps
the CSR arrays on the compute device and gives the models what they need of a batch of input
rows ``h``: ``h @ W`` (forward), ``h^T @ R`` (the weight-gradient product), per-row squared norms
(summed in float64, like the dense path's precomputed norms) and the elementwise square
(adaclip's ``h^2 @ w``). The ``input_*`` functions at the end dispatch between dense tensors and
:class:`SparseRows`, so that the kernels of ``_glm.py``, ``_mlp.py`` and ``_factored.py`` are
written once and the dense path runs exactly the operations it ran before.

Kernel choice (micro-benchmarks on CPU, one thread, batches of 1,000 rows with 12-50 non-zeros;
``benchmarks/bench_sparse.py`` times whole epochs): ``h @ W`` is ``embedding_bag`` (a weighted
sum of rows of ``W`` per bag: 2-3x faster than torch's sparse CSR product and than scipy for 100
outputs, within a few microseconds of scipy for one). ``h^T @ R`` scatters rows of ``R`` into
``W``'s shape; on the CPU scipy's CSC product does this 2.5-5x faster than torch's
``index_add_`` (and 5-20x faster than a torch sparse product); on CUDA ``index_add_`` is the
natural kernel (not measured: no GPU was available). Small batches of narrow matrices (one-hot
data) are densified instead, from a padded copy of the rows: see ``DENSE_BATCH_MAX_ELEMENTS``.
A dense copy of the whole matrix is never made.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
import torch
import torch.nn.functional as F

from .host_sparse import canonical_csr

# Batches of at most this many values (rows x columns) are gathered as dense tensors, from a
# padded copy of the rows, and run the dense kernels. Measured on CPU (one thread, 1,000-row
# batches, 12 non-zeros per row): 2-4x faster than the sparse kernels at 105 columns (the
# gather is two index_selects instead of a dozen CSR index operations), even at 256 columns
# for one output, but 1.7x slower at 256 columns for 100 outputs and slower from 512 columns
# whatever the outputs (the dense products and the zero fill grow with rows x columns). 2**17
# values (512 KiB in float32) covers one-hot data such as Adult (105 columns, ~1,000 rows).
DENSE_BATCH_MAX_ELEMENTS = 2**17

__all__ = ["DENSE_BATCH_MAX_ELEMENTS", "SparseRows"]


class SparseRows:
    """Rows of a CSR matrix on the compute device: ``crow`` (n + 1 row pointers), ``col`` and
    ``val`` (one entry per stored value), all torch tensors; ``n_cols`` columns.

    Every entry is a distinct ``(row, column)`` pair (the CSR is canonical), which is what makes
    the sums of squared values the squared row norms. Duck-types the few tensor attributes the
    engine reads of ``X`` (``shape``, ``dtype``, ``device``, ``index_select``).
    """

    def __init__(self, crow: torch.Tensor, col: torch.Tensor, val: torch.Tensor, n_cols: int):
        self.crow = crow
        self.col = col
        self.val = val
        self.shape = (crow.shape[0] - 1, int(n_cols))
        self._host: sp.csr_array | None = None
        self._padded: tuple[torch.Tensor, torch.Tensor] | None | bool = False  # not built yet

    @classmethod
    def from_scipy(cls, X, dtype: torch.dtype, device: torch.device) -> SparseRows:
        """A canonical CSR copy of the scipy matrix or array ``X`` (any format) on ``device``.

        Duplicate entries are summed first: a row's norm is the norm of the sums, not of the
        stored pieces (which could be smaller, and clipping with it too weak). ``X`` itself is
        never modified, and no dense copy is made.
        """
        X = canonical_csr(X)
        # astype copies: the tensors never share memory with the caller's matrix.
        return cls(
            torch.from_numpy(X.indptr.astype(np.int64)).to(device),
            torch.from_numpy(X.indices.astype(np.int64)).to(device),
            torch.from_numpy(X.data.astype(np.float32)).to(device=device, dtype=dtype),
            X.shape[1],
        )

    # --- the tensor attributes the engine reads --------------------------------------------
    @property
    def dtype(self) -> torch.dtype:
        return self.val.dtype

    @property
    def device(self) -> torch.device:
        return self.val.device

    def index_select(self, dim: int, idx: torch.Tensor) -> torch.Tensor | SparseRows:
        """The rows ``idx`` (in that order): a dense tensor when the batch is small (at most
        ``DENSE_BATCH_MAX_ELEMENTS`` values) and the rows have a compact padded copy, else
        :class:`SparseRows` gathered from the CSR arrays in O(batch + nnz)."""
        if dim != 0:
            raise ValueError("SparseRows can only select rows (dim=0)")
        if idx.shape[0] * self.shape[1] <= DENSE_BATCH_MAX_ELEMENTS:
            padded = self._padded_rows()
            if padded is not None:
                cols, vals = padded
                batch = torch.zeros(idx.shape[0], self.shape[1], dtype=self.dtype,
                                    device=self.device)
                # Distinct columns per row, padding adds 0: the exact dense rows.
                return batch.scatter_add_(1, cols.index_select(0, idx), vals.index_select(0, idx))
        starts = self.crow.index_select(0, idx)
        lengths = self.crow.index_select(0, idx + 1).sub_(starts)
        crow = torch.zeros(idx.shape[0] + 1, dtype=self.crow.dtype, device=self.crow.device)
        torch.cumsum(lengths, 0, out=crow[1:])
        nnz = int(crow[-1])  # one host synchronisation per batch on a GPU
        # Position in col/val of the j-th stored value of batch row i: starts[i] + j.
        pos = torch.repeat_interleave(starts.sub_(crow[:-1]), lengths, output_size=nnz)
        pos.add_(torch.arange(nnz, dtype=pos.dtype, device=pos.device))
        return SparseRows(crow, self.col.index_select(0, pos), self.val.index_select(0, pos),
                          self.shape[1])

    # --- kernels ----------------------------------------------------------------------------
    def square(self) -> SparseRows:
        """The elementwise square (same sparsity pattern)."""
        return SparseRows(self.crow, self.col, self.val.square(), self.shape[1])

    def row_sq_norms_float64(self) -> torch.Tensor:
        """``||h_i||^2`` of every row, summed in float64 (empty rows give 0)."""
        sq = self.val.to(torch.float64).square_()
        return torch.segment_reduce(sq, "sum", offsets=self.crow, axis=0)

    def mm(self, W: torch.Tensor) -> torch.Tensor:
        """``h @ W`` (rows x W's columns): each row a weighted sum of rows of ``W``."""
        return F.embedding_bag(
            self.col, W, self.crow, mode="sum", per_sample_weights=self.val,
            include_last_offset=True,
        )

    def t_mm(self, R: torch.Tensor, out: torch.Tensor) -> torch.Tensor:
        """``h^T @ R`` written into ``out`` (n_cols x R's columns)."""
        if self.device.type == "cpu":
            return self.t_mm_scipy(R, out)
        return self.t_mm_scatter(R, out)

    def t_mm_scipy(self, R: torch.Tensor, out: torch.Tensor) -> torch.Tensor:
        """``h^T @ R`` by scipy's compiled CSC product on views of the CPU arrays (no copy of
        ``h``): the fastest CPU kernel measured."""
        product = self._scipy().T @ R.numpy()
        return out.copy_(torch.from_numpy(np.asarray(product)))

    def t_mm_scatter(self, R: torch.Tensor, out: torch.Tensor) -> torch.Tensor:
        """``h^T @ R`` as a scatter-add of ``val * R[row]`` into ``col``, on any device."""
        rows = torch.repeat_interleave(
            torch.arange(self.shape[0], device=self.device),
            self.crow[1:] - self.crow[:-1],
            output_size=self.col.shape[0],
        )
        return out.zero_().index_add_(0, self.col, R.index_select(0, rows).mul_(self.val[:, None]))

    def _padded_rows(self) -> tuple[torch.Tensor, torch.Tensor] | None:
        """``(cols, vals)`` of shape (rows, longest row), padded with column 0 and value 0
        (the ELLPACK layout), built on first use; ``None`` when padding would more than triple
        the stored values (a few long rows), which would come close to a dense copy."""
        if self._padded is False:
            n, nnz = self.shape[0], self.col.shape[0]
            lengths = self.crow[1:] - self.crow[:-1]
            width = int(lengths.max()) if n and nnz else 0
            if n * width > 3 * nnz + n:
                self._padded = None
            else:
                rows = torch.repeat_interleave(
                    torch.arange(n, device=self.device), lengths, output_size=nnz
                )
                slots = torch.arange(nnz, device=self.device) - self.crow.index_select(0, rows)
                cols = torch.zeros(n, width, dtype=self.col.dtype, device=self.device)
                vals = torch.zeros(n, width, dtype=self.dtype, device=self.device)
                cols[rows, slots] = self.col
                vals[rows, slots] = self.val
                self._padded = (cols, vals)
        return self._padded

    def _scipy(self) -> sp.csr_array:
        """A scipy view of the CPU arrays (csr_array keeps int64 indices without copying)."""
        if self._host is None:
            self._host = sp.csr_array(
                (self.val.numpy(), self.col.numpy(), self.crow.numpy()), shape=self.shape
            )
        return self._host
