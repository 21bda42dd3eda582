"""The private rows on the compute device, and the batches a sampler draws from them: the one
place where a step reads rows (dense tensors or :class:`SparseRows`)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np
import torch

from .host import features_to_device, to_tensor
from .sparse import SparseRows

__all__ = ["Batch", "TrainingData"]

# The features, labels and per-example auxiliary of one step's batch.
Batch = tuple[torch.Tensor | SparseRows, torch.Tensor, torch.Tensor | None]

@dataclass
class TrainingData:
    """The private training data on the compute device, with the model's per-example auxiliary
    (see :meth:`DPModel.example_aux`; ``None`` when the model needs none). ``X`` is a dense
    tensor or, for sparse input, :class:`SparseRows` (which gathers rows the same way)."""

    X: torch.Tensor | SparseRows
    y: torch.Tensor
    aux: torch.Tensor | None = None

    @classmethod
    def from_host(cls, X, targets: np.ndarray, target_dtype: torch.dtype, model,
                  device: torch.device) -> TrainingData:
        """The validated host rows and targets on ``device``, with ``model``'s auxiliary."""
        X_t = features_to_device(X, device)
        return cls(X_t, to_tensor(targets, target_dtype, device), model.example_aux(X_t))

    @property
    def n_samples(self) -> int:
        return self.X.shape[0]

    def batch(
        self, idx: torch.Tensor
    ) -> tuple[torch.Tensor | SparseRows, torch.Tensor, torch.Tensor | None]:
        # index_select is several times faster than fancy indexing for row gathers on CPU.
        return (
            self.X.index_select(0, idx),
            self.y.index_select(0, idx),
            None if self.aux is None else self.aux.index_select(0, idx),
        )

    def step_batches(self, sampler, n_steps: int) -> Iterator[Batch]:
        """The batches of the next ``n_steps`` steps of ``sampler``, drawn at once.

        The row indices move to the device in one copy and the labels and auxiliaries of all
        the steps are gathered in one call each; the features are gathered step by step (a
        step's rows then stay in cache for both of its products, and no epoch-sized copy of
        ``X`` is made). A full-batch sampler gets the data itself, without any gather.
        """
        if getattr(sampler, "full_batch", False):
            for _ in range(n_steps):
                yield self.X, self.y, self.aux
            return
        batches = sampler.sample_steps(n_steps)
        idx = torch.from_numpy(batches.indices).to(self.y.device, non_blocking=True)
        y = self.y.index_select(0, idx)
        aux = None if self.aux is None else self.aux.index_select(0, idx)
        bounds = batches.offsets.tolist()
        # Dense rows are gathered into one buffer reused by every step: a fresh batch-sized
        # tensor per step is a fresh allocation (on CPU, pages mapped and zeroed each time),
        # about a sixth of a gather's time. A step's rows are consumed before the next gather
        # (the only reader is the training loop, which privatizes each batch at once).
        buffer = None
        if isinstance(self.X, torch.Tensor):
            widest = max((b - a for a, b in zip(bounds[:-1], bounds[1:], strict=True)), default=0)
            buffer = self.X.new_empty((widest, *self.X.shape[1:]))
        for start, stop in zip(bounds[:-1], bounds[1:], strict=True):
            # index_select is several times faster than fancy indexing for row gathers on CPU.
            rows = (
                self.X.index_select(0, idx[start:stop])
                if buffer is None
                else torch.index_select(self.X, 0, idx[start:stop], out=buffer[: stop - start])
            )
            yield rows, y[start:stop], None if aux is None else aux[start:stop]
