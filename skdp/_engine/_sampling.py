"""Batch samplers. Poisson sampling draws a binomial count and then that many distinct rows,
which costs O(batch) per step instead of the O(n) Bernoulli mask of textbook implementations."""

from __future__ import annotations

import numpy as np

__all__ = ["PoissonSampler", "FixedSizeSampler", "FullBatchSampler"]


class PoissonSampler:
    """Each row joins a step's batch independently with probability ``sampling_rate``.

    Drawing ``k ~ Binomial(n, q)`` and then ``k`` distinct rows uniformly gives exactly the same
    distribution over subsets as ``n`` independent Bernoulli(q) draws. Batches may be empty.
    """

    def __init__(self, n_samples: int, sampling_rate: float, rng: np.random.Generator) -> None:
        self.n_samples = n_samples
        self.sampling_rate = sampling_rate
        self.rng = rng

    @property
    def expected_batch_size(self) -> float:
        """The public denominator of noisy sums: ``q * n``, not the realised batch size."""
        return self.sampling_rate * self.n_samples

    def sample(self) -> np.ndarray:
        k = self.rng.binomial(self.n_samples, self.sampling_rate)
        return self.rng.choice(self.n_samples, size=k, replace=False)


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


class FullBatchSampler:
    """Every row in every step (full-batch gradient descent)."""

    def __init__(self, n_samples: int) -> None:
        self.n_samples = n_samples
        self.sampling_rate = 1.0
        self._all = np.arange(n_samples)

    @property
    def expected_batch_size(self) -> float:
        return float(self.n_samples)

    def sample(self) -> np.ndarray:
        return self._all
