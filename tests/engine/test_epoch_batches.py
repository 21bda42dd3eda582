"""The engine's epoch-at-a-time batches: the same law as one Poisson draw per step.

The training loop draws an epoch's batches at once (``sample_steps``) and gathers rows from
them; these tests check that this is still Poisson sampling at the planned rate (each row in
each step independently with probability q, batch sizes Binomial(n, q)), that it is exactly
the one-step sampler replayed, and that the loop feeds the model exactly those rows.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from scipy import stats

from skdp._engine._device import FitRandomness
from skdp._engine._sampling import (
    FixedSizeSampler,
    FullBatchSampler,
    PoissonSampler,
    StepBatches,
)
from skdp._engine.rows.training_data import TrainingData
from skdp.accounting import Calibration
from skdp.mechanisms._noisy_sgd import NoisySGD
from skdp.mechanisms._sgd.settings import SGDSettings

CPU = torch.device("cpu")


def epoch_masks(n: int, q: float, n_steps: int, seed: int) -> np.ndarray:
    """Inclusion matrix (steps x rows) of ``sample_steps``."""
    batches = PoissonSampler(n, q, np.random.default_rng(seed)).sample_steps(n_steps)
    mask = np.zeros((n_steps, n), dtype=bool)
    for t in range(n_steps):
        mask[t, batches.step(t)] = True
    return mask


def test_sample_steps_is_the_one_step_sampler_replayed():
    a = PoissonSampler(500, 0.07, np.random.default_rng(4))
    b = PoissonSampler(500, 0.07, np.random.default_rng(4))
    batches = a.sample_steps(40)
    assert batches.n_steps == 40 and batches.offsets[-1] == batches.indices.size
    for t in range(40):
        np.testing.assert_array_equal(batches.step(t), b.sample())
    # ...and the streams stay in step afterwards.
    np.testing.assert_array_equal(a.sample(), b.sample())


def test_steps_that_need_more_gaps_are_replayed_exactly(monkeypatch):
    # A width far too small forces the rare path (extra gaps) in every step.
    a = PoissonSampler(300, 0.2, np.random.default_rng(5))
    b = PoissonSampler(300, 0.2, np.random.default_rng(5))
    a._width = b._width = 3
    batches = a.sample_steps(25)
    for t in range(25):
        np.testing.assert_array_equal(batches.step(t), b.sample())
    sizes = np.diff(batches.offsets)
    assert sizes.mean() == pytest.approx(60, abs=10)  # Binomial(300, 0.2): not truncated


def test_batches_are_sorted_distinct_rows_in_range():
    batches = PoissonSampler(300, 0.3, np.random.default_rng(0)).sample_steps(100)
    assert batches.indices.dtype == np.int64
    for t in range(100):
        rows = batches.step(t)
        assert np.all(np.diff(rows) > 0)  # sorted and distinct
        assert rows.size == 0 or (rows[0] >= 0 and rows[-1] < 300)


def test_epoch_batch_sizes_are_binomial():
    n, q, steps = 1000, 0.05, 4000
    sizes = epoch_masks(n, q, steps, seed=1).sum(axis=1)
    # Goodness of fit of the batch sizes against Binomial(n, q), on pooled bins.
    edges = np.array([0, 38, 42, 45, 48, 50, 52, 55, 58, 62, n + 1])
    observed = np.histogram(sizes, bins=edges)[0]
    expected = np.diff(stats.binom.cdf(edges - 1, n, q)) * steps
    chi2 = float(((observed - expected) ** 2 / expected).sum())
    assert chi2 < stats.chi2.ppf(1 - 1e-4, len(observed) - 1)
    assert sizes.var(ddof=1) == pytest.approx(n * q * (1 - q), rel=0.12)


def test_each_row_is_included_with_probability_q_independently():
    n, q, steps = 200, 0.1, 3000
    mask = epoch_masks(n, q, steps, seed=2)
    counts = mask.sum(axis=0)
    # Every row's count is Binomial(steps, q): the standardised squares are ~ chi2(n).
    chi2 = float((((counts - steps * q) ** 2) / (steps * q * (1 - q))).sum())
    assert stats.chi2.ppf(1e-4, n) < chi2 < stats.chi2.ppf(1 - 1e-4, n)
    # Within a step: neighbours (rows 0 and 1, the first and the last) appear together with
    # probability q^2, as independent draws do.
    tol = 5 * math.sqrt(q * q / steps)
    for a, b in ((0, 1), (0, n - 1), (57, 58)):
        assert (mask[:, a] & mask[:, b]).mean() == pytest.approx(q * q, abs=tol)
    # Across consecutive steps, a row's inclusions are independent.
    together = (mask[1:] & mask[:-1]).mean()
    assert together == pytest.approx(q * q, abs=5 * math.sqrt(q * q / (steps * n)))


def test_the_first_and_last_rows_are_not_favoured():
    # The walk starts before row 0 and must run past row n - 1: edge rows get probability q.
    n, q, steps = 30, 0.4, 20_000
    mask = epoch_masks(n, q, steps, seed=3)
    tol = 5 * math.sqrt(q * (1 - q) / steps)
    assert mask[:, 0].mean() == pytest.approx(q, abs=tol)
    assert mask[:, -1].mean() == pytest.approx(q, abs=tol)
    assert (mask.sum(axis=1) == 0).mean() == pytest.approx((1 - q) ** n, abs=1e-3)


def test_fixed_size_and_full_batch_step_batches():
    fixed = FixedSizeSampler(50, 7, np.random.default_rng(0))
    replay = FixedSizeSampler(50, 7, np.random.default_rng(0))
    batches = fixed.sample_steps(5)
    for t in range(5):
        np.testing.assert_array_equal(batches.step(t), replay.sample())
    full = FullBatchSampler(6).sample_steps(2)
    np.testing.assert_array_equal(full.indices, np.r_[np.arange(6), np.arange(6)])
    empty = StepBatches.concatenate([np.empty(0, dtype=np.int64)] * 3)
    assert empty.n_steps == 3 and empty.indices.size == 0


class RowRecorder:
    """A model that records the rows (the first feature holds the row index), labels and
    auxiliaries it is given, and contributes nothing."""

    def __init__(self):
        self.n_params = 2
        self.rows, self.labels, self.aux = [], [], []

    def init_params(self, device, rng):
        return torch.zeros(self.n_params, device=device)

    def penalty_mask(self, device):
        return torch.zeros(self.n_params, device=device)

    def clipped_grad_sum(self, params, Xb, yb, aux_b, max_norm, out):
        self.rows.append(Xb[:, 0].long().numpy().copy())
        self.labels.append(yb.numpy().copy())
        self.aux.append(aux_b.numpy().copy())
        return out.zero_()


@pytest.mark.parametrize("batch_size", [9, 40], ids=["poisson", "full_batch"])
def test_the_loop_feeds_each_step_the_sampled_rows(batch_size):
    n, epochs, seed = 40, 3, 7
    X = torch.stack([torch.arange(n, dtype=torch.float32), torch.zeros(n)], dim=1)
    data = TrainingData(X, torch.arange(n, dtype=torch.float32) * 2, torch.arange(n) * 3.0)
    settings = SGDSettings(n_samples=n, batch_size=batch_size, epochs=epochs,
                           learning_rate=0.1, max_grad_norm=1.0, average=0.0)
    engine = NoisySGD(settings)
    model = RowRecorder()
    engine.train(model, data, Calibration.non_private(engine.plan()), FitRandomness(seed, CPU))
    # The same seed drives the same sampler, one step at a time.
    sampler = engine.sampler(n, FitRandomness(seed, CPU))
    assert len(model.rows) == settings.n_steps
    for rows, labels, aux in zip(model.rows, model.labels, model.aux, strict=True):
        expected = sampler.sample()
        np.testing.assert_array_equal(rows, expected)
        np.testing.assert_array_equal(labels, expected * 2)
        np.testing.assert_array_equal(aux, expected * 3)
