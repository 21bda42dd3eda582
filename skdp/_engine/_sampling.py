"""Batch samplers. Poisson sampling draws a binomial count and then that many distinct rows,
which costs O(batch) per step instead of the O(n) Bernoulli mask of textbook implementations."""

from __future__ import annotations

import numpy as np

__all__ = ["PoissonSampler", "FullBatchSampler"]


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
