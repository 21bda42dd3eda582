"""The pieces of a private search: the noisy score's sensitivity, the number of trials."""

import math

import numpy as np
import pytest
from dp_accounting.rdp import rdp_privacy_accountant as rdp
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import chisquare

from skdp.model_selection import TrialDistribution
from skdp.model_selection._scoring import (
    exact_score_sum,
    noisy_validation_score,
    score_sensitivity,
)


class _Fixed:
    """A fitted model stand-in: predicts a fixed function of the row."""

    def __init__(self, weights, classes=None):
        self.weights, self.classes = weights, classes

    def predict(self, X):
        out = X @ self.weights
        return (out > 0).astype(int) if self.classes else out


rows = st.integers(min_value=2, max_value=40)


@settings(max_examples=60, deadline=None)
@given(n=rows, seed=st.integers(0, 2**31), classifier=st.booleans(),
       clip=st.floats(0.01, 10.0), scale=st.floats(0.1, 1e3))
def test_one_row_moves_the_score_sum_by_at_most_the_sensitivity(n, seed, classifier, clip,
                                                                 scale):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3)) * scale
    y = (rng.random(n) > 0.5).astype(int) if classifier else rng.normal(size=n) * scale
    model = _Fixed(rng.normal(size=3), classes=classifier or None)
    bound = score_sensitivity(classifier, clip)
    full = exact_score_sum(model, X, y, classifier, clip)
    i = int(rng.integers(n))
    keep = np.arange(n) != i
    removed = exact_score_sum(model, X[keep], y[keep], classifier, clip)  # add/remove one row
    assert abs(full - removed) <= bound + 1e-9 * max(1.0, abs(full))
    X2, y2 = X.copy(), y.copy()  # replace one row by an extreme one: at most 2 x the bound
    X2[i], y2[i] = 1e6, (1 - y2[i]) if classifier else -1e6
    replaced = exact_score_sum(model, X2, y2, classifier, clip)
    assert abs(full - replaced) <= 2 * bound + 1e-9 * max(1.0, abs(full))


def test_the_bound_is_attained_and_nonfinite_predictions_count_as_worst():
    X = np.array([[1.0], [2.0]])
    model = _Fixed(np.array([1.0]))
    assert exact_score_sum(model, X, np.array([100.0, 2.0]), False, 4.0) == -4.0
    model_nan = _Fixed(np.array([np.nan]))
    assert exact_score_sum(model_nan, X, np.array([1.0, 2.0]), False, 4.0) == -8.0
    clf = _Fixed(np.array([1.0]), classes=True)
    assert exact_score_sum(clf, X, np.array([1, 0]), True, 4.0) == 1.0


def test_score_noise_has_the_stated_scale():
    X = np.zeros((10, 1))
    model = _Fixed(np.array([0.0]))
    rng = np.random.default_rng(0)
    draws = np.array([
        noisy_validation_score(model, X, np.zeros(10), classifier=False, score_clip=2.0,
                               noise_multiplier=3.0, rng=rng)
        for _ in range(4000)
    ])
    assert abs(draws.mean()) < 0.3
    assert draws.std() == pytest.approx(6.0, rel=0.05)  # noise_multiplier x sensitivity


@pytest.mark.parametrize(
    ("kind", "eta"),
    [("logarithmic", 0.5), ("geometric", 0.5), ("negative_binomial", 0.5),
     ("negative_binomial", 2.0), ("poisson", 0.5)],
)
def test_number_of_trials_follows_the_distribution(kind, eta):
    dist = TrialDistribution.make(kind, 6.0, eta)
    rng = np.random.default_rng(12345)
    draws = np.array([dist.sample(rng) for _ in range(6000)])
    # Chi-square goodness of fit on the bins 0..14 and a tail bin.
    ks = np.arange(0, 15)
    probs = dist.pmf(ks)
    expected = np.append(probs, 1.0 - probs.sum()) * draws.size
    observed = np.append([(draws == k).sum() for k in ks], (draws >= 15).sum())
    keep = expected > 5
    expected_kept = expected[keep] * observed[keep].sum() / expected[keep].sum()
    assert chisquare(observed[keep], expected_kept).pvalue > 1e-3
    assert draws.mean() == pytest.approx(6.0, rel=0.06)
    if kind != "poisson":
        assert draws.min() >= 1
        # The sampled distribution is covered by the accounted one: mean at most n_iter and
        # gamma at least dp_accounting's.
        gamma = dist.sampling_gamma
        assert rdp._truncated_negative_binomial_mean(gamma, dist.shape) <= 6.0
        assert gamma >= rdp._gamma_truncated_negative_binomial(dist.shape, 6.0)


def test_pmf_sums_to_one():
    for kind in ("logarithmic", "geometric", "negative_binomial", "poisson"):
        dist = TrialDistribution.make(kind, 4.0, 1.5)
        assert dist.pmf(np.arange(0, 400)).sum() == pytest.approx(1.0, abs=1e-9)


@pytest.mark.parametrize("bad", [1.0, 0.5, math.inf, math.nan])
def test_bad_means_are_refused(bad):
    with pytest.raises(ValueError, match="n_iter"):
        TrialDistribution.make("geometric", bad)
