"""The statistics of skdp.audit: confidence intervals and epsilon lower bounds."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from skdp.audit import (
    clopper_pearson_interval,
    clopper_pearson_upper,
    epsilon_from_error_rates,
    multi_run_epsilon_lower_bound,
    one_run_epsilon_lower_bound,
    one_run_guesses,
    one_run_p_value,
)


def gaussian_epsilon(mu: float, delta: float) -> float:
    """Exact epsilon of the Gaussian mechanism with sensitivity / sigma = mu at delta."""
    from scipy.optimize import brentq

    def gap(eps):
        return (
            stats.norm.cdf(-eps / mu + mu / 2) - math.exp(eps) * stats.norm.cdf(-eps / mu - mu / 2)
        ) - delta

    return brentq(gap, 0.0, 100.0)


# --- Clopper-Pearson -------------------------------------------------------------------------
def test_clopper_pearson_known_values():
    # 0 successes in n: the upper bound solves (1 - p)^n = alpha.
    assert clopper_pearson_upper(0, 50, 0.05) == pytest.approx(1 - 0.05 ** (1 / 50))
    assert clopper_pearson_upper(7, 7, 0.05) == 1.0
    lower, upper = clopper_pearson_interval(5, 10, 0.95)
    assert lower == pytest.approx(0.187086, abs=1e-5)
    assert upper == pytest.approx(0.812914, abs=1e-5)
    with pytest.raises(ValueError):
        clopper_pearson_upper(3, 2, 0.05)


def test_clopper_pearson_upper_covers():
    rng = np.random.default_rng(0)
    p, n, alpha = 0.1, 40, 0.1
    counts = rng.binomial(n, p, size=4000)
    misses = np.mean([clopper_pearson_upper(int(k), n, alpha) < p for k in counts])
    assert misses <= alpha  # exact intervals are conservative


# --- multi-run --------------------------------------------------------------------------------
def test_epsilon_from_error_rates():
    assert epsilon_from_error_rates(0.1, 0.5, 0.0) == pytest.approx(math.log(5))
    # Mirror image: many false positives, few false negatives.
    assert epsilon_from_error_rates(0.5, 0.1, 0.0) == pytest.approx(math.log(5))
    assert epsilon_from_error_rates(0.5, 0.5, 1e-5) == 0.0
    assert epsilon_from_error_rates(0.0, 0.5, 0.0) == math.inf
    assert epsilon_from_error_rates(0.2, 0.5, 0.1) == pytest.approx(math.log(0.4 / 0.2))


def test_multi_run_separated_scores_give_large_bound():
    rng = np.random.default_rng(1)
    bound, selection = multi_run_epsilon_lower_bound(
        rng.normal(10, 1, 1000), rng.normal(0, 1, 1000), 1e-5, 0.95, 0.3, rng
    )
    # Perfect separation on 700 evaluation runs per side: FPR_ub = 1 - 0.025^(1/700).
    assert bound.fpr == 0 and bound.fnr == 0
    expected = math.log((1 - 1e-5 - bound.fnr_upper) / (1 - 0.025 ** (1 / 700)))
    assert bound.epsilon_lower == pytest.approx(expected)
    assert bound.n_in == bound.n_out == 700
    assert selection.n_in == 300


def test_multi_run_low_scores_direction():
    rng = np.random.default_rng(2)
    bound, _ = multi_run_epsilon_lower_bound(
        rng.normal(-10, 1, 400), rng.normal(0, 1, 400), 1e-5, rng=rng
    )
    assert bound.direction == -1 and bound.epsilon_lower > 3


def test_multi_run_identical_distributions_give_small_bound():
    rng = np.random.default_rng(3)
    bounds = [
        multi_run_epsilon_lower_bound(rng.normal(size=200), rng.normal(size=200), 1e-5, rng=rng)[
            0
        ].epsilon_lower
        for _ in range(100)
    ]
    assert np.mean(np.asarray(bounds) > 0) <= 0.05 + 0.05


@pytest.mark.parametrize("mu, power", [(0.5, 0.0), (3.0, 2.5)])
def test_multi_run_bound_is_valid_for_the_gaussian_mechanism(mu, power):
    """Scores N(mu, 1) vs N(0, 1): the exact privacy of this test is known; the bound exceeds
    it in at most 1 - confidence of the trials, and for a clear signal it is not vacuous."""
    rng = np.random.default_rng(4)
    truth = gaussian_epsilon(mu, 1e-5)
    bounds = np.array(
        [
            multi_run_epsilon_lower_bound(
                rng.normal(mu, 1, 500), rng.normal(0, 1, 500), 1e-5, 0.9, rng=rng
            )[0].epsilon_lower
            for _ in range(200)
        ]
    )
    assert np.mean(bounds > truth) <= 0.1
    assert np.median(bounds) > power  # 500 runs cannot show more than about 4.5


def test_multi_run_refuses_bad_input():
    with pytest.raises(ValueError, match="NaN"):
        multi_run_epsilon_lower_bound([np.nan, 1.0, 2.0], [0.0, 1.0, 2.0], 1e-5)
    with pytest.raises(ValueError, match="too few runs"):
        multi_run_epsilon_lower_bound([1.0], [0.0], 1e-5)
    with pytest.raises(ValueError, match="confidence"):
        multi_run_epsilon_lower_bound([1.0] * 10, [0.0] * 10, 1e-5, confidence=1.0)


# --- one-run ----------------------------------------------------------------------------------
def test_one_run_p_value_without_delta_is_the_binomial_tail():
    for r, v, eps in [(10, 8, 1.0), (100, 70, 0.5), (50, 50, 2.0)]:
        q = math.exp(eps) / (1 + math.exp(eps))
        assert one_run_p_value(200, r, v, eps, 0.0) == pytest.approx(stats.binom.sf(v - 1, r, q))


def test_one_run_p_value_delta_term():
    """The delta term, computed the slow way from its definition."""
    m, r, v, eps, delta = 300, 40, 30, 1.0, 1e-3
    q = math.exp(eps) / (1 + math.exp(eps))
    windows = [
        sum(stats.binom.pmf(j, r, q) for j in range(v - i, v)) / i for i in range(1, v + 1)
    ]
    expected = stats.binom.sf(v - 1, r, q) + 2 * m * delta * max(windows)
    assert one_run_p_value(m, r, v, eps, delta) == pytest.approx(expected)
    assert one_run_p_value(m, r, v, eps, delta) > one_run_p_value(m, r, v, eps, 0.0)


def test_one_run_all_correct_closed_form():
    # delta = 0 and v = r: p-value q^r, so the bound is logit(alpha^(1/r)).
    r, alpha = 60, 0.05
    p = alpha ** (1 / r)
    assert one_run_epsilon_lower_bound(500, r, r, 0.0, 0.95) == pytest.approx(
        math.log(p / (1 - p)), abs=1e-5
    )
    # delta only lowers it.
    assert one_run_epsilon_lower_bound(500, r, r, 1e-4, 0.95) < math.log(p / (1 - p))


def test_one_run_bound_zero_for_chance_guessing():
    assert one_run_epsilon_lower_bound(1000, 100, 50, 1e-5) == 0.0


def test_one_run_bound_is_valid_for_randomized_response():
    """Guesses right with probability e^eps / (1 + e^eps), the most an eps-DP mechanism
    allows: the bound exceeds eps in at most 1 - confidence of the trials."""
    rng = np.random.default_rng(5)
    eps, r = 1.0, 200
    q = math.exp(eps) / (1 + math.exp(eps))
    bounds = np.array(
        [
            one_run_epsilon_lower_bound(r, r, int(rng.binomial(r, q)), 1e-6, 0.9)
            for _ in range(300)
        ]
    )
    assert np.mean(bounds > eps) <= 0.1
    assert np.median(bounds) > 0.5 * eps


def test_one_run_guesses():
    scores = np.array([0.3, 5.0, -2.0, 1.0, 4.0, -1.0])
    assert one_run_guesses(scores, 4).tolist() == [0, 1, -1, 0, 1, -1]
    assert one_run_guesses(scores, 1).tolist() == [0, 1, 0, 0, 0, 0]
    with pytest.raises(ValueError):
        one_run_guesses(scores, 7)
