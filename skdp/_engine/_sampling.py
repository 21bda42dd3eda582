"""Batch samplers.

A sampler draws the batches of many steps at once (:meth:`sample_steps`, one epoch per call in
the training loop), so that the loop pays one draw and one host-to-device copy per epoch instead
of one per step. ``sample_steps(k)`` returns exactly what ``k`` calls of ``sample()`` would (the
same rows from the same random stream), so the one-step form stays the reference.

Poisson sampling walks the rows with geometric gaps: the gaps between the rows of a Bernoulli(q)
process are independent Geometric(q), so the rows reached are exactly a Poisson batch (each row
in independently with probability ``q``), sorted, for O(batch) work per step instead of the O(n)
Bernoulli mask of textbook implementations.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

__all__ = ["StepBatches", "PoissonSampler", "FixedSizeSampler", "FullBatchSampler"]


@dataclass(frozen=True)
class StepBatches:
    """The batches of consecutive steps: step ``t`` uses rows
    ``indices[offsets[t]:offsets[t + 1]]`` (``offsets`` has ``n_steps + 1`` entries)."""

    indices: np.ndarray
    offsets: np.ndarray

    @classmethod
    def concatenate(cls, batches: list[np.ndarray]) -> StepBatches:
        offsets = np.zeros(len(batches) + 1, dtype=np.int64)
        np.cumsum([b.size for b in batches], out=offsets[1:])
        indices = np.concatenate(batches) if batches else np.empty(0, dtype=np.int64)
        return cls(indices.astype(np.int64, copy=False), offsets)

    @property
    def n_steps(self) -> int:
        return self.offsets.size - 1

    def step(self, t: int) -> np.ndarray:
        return self.indices[self.offsets[t] : self.offsets[t + 1]]


class PoissonSampler:
    """Each row joins a step's batch independently with probability ``sampling_rate``.

    The rows of a step are the partial sums (minus one) of independent Geometric(q) gaps that
    stay within the data, which is exactly the distribution of ``n`` independent Bernoulli(q)
    draws (the batch size is Binomial(n, q); batches may be empty). Rows come sorted, which
    also makes the gathers cache-friendly.
    """

    def __init__(self, n_samples: int, sampling_rate: float, rng: np.random.Generator) -> None:
        if not 0.0 < sampling_rate <= 1.0:
            raise ValueError(f"sampling_rate must be in (0, 1], got {sampling_rate}")
        self.n_samples = n_samples
        self.sampling_rate = sampling_rate
        self.rng = rng
        # Gaps drawn per step: enough to walk past the last row except with probability
        # ~1e-9 (mean n q, six standard deviations, and a margin for tiny batches). When a
        # step falls short it draws more, so the law does not depend on this width.
        mean = n_samples * sampling_rate
        self._width = math.ceil(mean + 6.0 * math.sqrt(mean * (1.0 - sampling_rate)) + 10.0)
        # Geometric(q) by inversion, ceil(E / -log(1 - q)) with E ~ Exp(1): numpy's own method
        # for small q, written out because the vectorised form is twice as fast.
        self._gap_scale = -1.0 / math.log1p(-sampling_rate) if sampling_rate < 1.0 else 0.0

    def _gaps(self, size) -> np.ndarray:
        """Independent Geometric(q) gaps (values 1, 2, ...), as float64 (exact integers)."""
        if self._gap_scale == 0.0:  # q = 1: every row
            return np.ones(size)
        gaps = self.rng.standard_exponential(size)
        gaps *= self._gap_scale
        # E = 0 (probability ~2^-53) would give a gap of 0: a gap is at least 1.
        return np.maximum(np.ceil(gaps, out=gaps), 1.0, out=gaps)

    @property
    def expected_batch_size(self) -> float:
        """The public denominator of noisy sums: ``q * n``, not the realised batch size."""
        return self.sampling_rate * self.n_samples

    def sample(self) -> np.ndarray:
        """One step's batch: sorted distinct row indices."""
        n = self.n_samples
        ends = np.cumsum(self._gaps(self._width))
        while ends[-1] <= n:  # the walk has not left the data yet: draw more gaps
            ends = np.concatenate([ends, np.cumsum(self._gaps(self._width)) + ends[-1]])
        return (ends[ends <= n] - 1).astype(np.int64)

    def sample_steps(self, n_steps: int) -> StepBatches:
        """The batches of ``n_steps`` steps, exactly as ``n_steps`` calls of :meth:`sample`."""
        n = self.n_samples
        state = self.rng.bit_generator.state
        # Row-major: each row of gaps is the draw one call of sample() would make.
        ends = np.cumsum(self._gaps((n_steps, self._width)), axis=1)
        if n_steps and ends[:, -1].min() <= n:
            # A step needs more gaps (rare): replay step by step from the same stream.
            self.rng.bit_generator.state = state
            return StepBatches.concatenate([self.sample() for _ in range(n_steps)])
        inside = ends <= n
        offsets = np.zeros(n_steps + 1, dtype=np.int64)
        np.cumsum(inside.sum(axis=1), out=offsets[1:])
        return StepBatches((ends[inside] - 1).astype(np.int64), offsets)


class FixedSizeSampler:
    """Exactly ``batch_size`` distinct rows, uniformly at random, independently at every step.

    This is the sampling of Altschuler & Talwar's projected noisy SGD (the last-iterate
    accountant): every subset of ``batch_size`` rows is equally likely and a row is in a given
    step's batch with probability ``batch_size / n``, independently of earlier steps (no
    per-epoch shuffling). The batch size is public and fixed, so the neighbouring relation is
    replace-one.
    """

    def __init__(self, n_samples: int, batch_size: int, rng: np.random.Generator) -> None:
        if not 1 <= batch_size <= n_samples:
            raise ValueError(f"batch_size must be in [1, n_samples={n_samples}], got {batch_size}")
        self.n_samples = n_samples
        self.batch_size = batch_size
        self.sampling_rate = batch_size / n_samples
        self.rng = rng

    @property
    def expected_batch_size(self) -> float:
        """The public denominator of noisy sums: ``batch_size``, which every batch has."""
        return float(self.batch_size)

    def sample(self) -> np.ndarray:
        return self.rng.choice(self.n_samples, size=self.batch_size, replace=False)

    def sample_steps(self, n_steps: int) -> StepBatches:
        """The batches of ``n_steps`` steps, exactly as ``n_steps`` calls of :meth:`sample`."""
        return StepBatches.concatenate([self.sample() for _ in range(n_steps)])


class FullBatchSampler:
    """Every row in every step (full-batch gradient descent).

    ``full_batch`` tells the training loop to use the data as it is, without gathering rows.
    """

    full_batch = True

    def __init__(self, n_samples: int) -> None:
        self.n_samples = n_samples
        self.sampling_rate = 1.0
        self._all = np.arange(n_samples)

    @property
    def expected_batch_size(self) -> float:
        return float(self.n_samples)

    def sample(self) -> np.ndarray:
        return self._all

    def sample_steps(self, n_steps: int) -> StepBatches:
        return StepBatches.concatenate([self._all] * n_steps)
