"""The DP mechanisms of private preprocessing: sensitivities, noise laws, golden values.

Reference values are from ``shared/specs/dp_preprocessing.md`` §8 (T1-T11).
"""

from __future__ import annotations

import math

import dp_accounting
import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from skdp.accounting import PrivacyPlan, calibrate, epsilon_of
from skdp.preprocessing._base import calibrate_gaussian
from skdp.preprocessing._mechanisms import (
    MISSING,
    QUANTILE_PROBES,
    KeyColumn,
    moment_sensitivity,
    noisy_moment_sums,
    noisy_quantile_search,
    partition_threshold,
    public_key_counts,
    quantile_probe_sensitivity,
    quantile_search_grid,
    thresholded_key_counts,
)

RNG = np.random.default_rng(0)


def exact_moments(X, lower, upper, with_second=True):
    """The noiseless released vector (u sums, v sums, counts) of the moment mechanism."""
    sums = noisy_moment_sums(X, lower, upper, 0.0, RNG, with_second=with_second)
    parts = [sums.first] + ([sums.second] if with_second else []) + [sums.count]
    return np.concatenate(parts)


# --- T1: sensitivity of the moment vector ------------------------------------------------------


def test_adding_a_row_at_the_upper_bound_moves_the_moments_by_exactly_the_sensitivity():
    d = 3
    lower, upper = np.zeros(d), np.full(d, 10.0)
    X = RNG.uniform(0, 10, size=(50, d))
    before = exact_moments(X, lower, upper)
    after = exact_moments(np.vstack([X, upper]), lower, upper)
    assert np.linalg.norm(after - before) == pytest.approx(moment_sensitivity(d, True))
    assert moment_sensitivity(d, True) == pytest.approx(math.sqrt(3 * d))


finite_or_wild = st.one_of(
    st.floats(-1e300, 1e300, allow_nan=False),
    st.just(float("nan")),
    st.just(float("inf")),
    st.just(float("-inf")),
    st.just(-0.0),
)


@settings(max_examples=60, deadline=None)
@given(
    data=arrays(np.float64, (8, 3), elements=finite_or_wild),
    extra=arrays(np.float64, (3,), elements=finite_or_wild),
    with_second=st.booleans(),
)
def test_one_row_moves_the_moment_vector_by_at_most_its_sensitivity(data, extra, with_second):
    lower, upper = np.array([-1.0, 0.0, 5.0]), np.array([1.0, 1e6, 5.0])  # incl. r = 0
    before = exact_moments(data, lower, upper, with_second)
    after = exact_moments(np.vstack([data, extra]), lower, upper, with_second)
    bound = moment_sensitivity(3, with_second)
    assert np.all(np.isfinite(after))
    assert np.linalg.norm(after - before) <= bound * (1 + 1e-12)


def test_moment_noise_has_the_calibrated_standard_deviation():
    X = RNG.uniform(0, 1, size=(20, 2))
    lower, upper = np.zeros(2), np.ones(2)
    exact = exact_moments(X, lower, upper)
    draws = np.array([
        np.concatenate(
            (lambda s: [s.first, s.second, s.count])(
                noisy_moment_sums(X, lower, upper, 2.5, np.random.default_rng(i))
            )
        )
        for i in range(2000)
    ]) - exact
    assert draws.std() == pytest.approx(2.5, rel=0.03)
    assert abs(draws.mean()) < 0.1


# --- T2/T9: the quantile search -----------------------------------------------------------------


@settings(max_examples=40, deadline=None)
@given(
    data=arrays(np.float64, (12, 2), elements=finite_or_wild),
    extra=arrays(np.float64, (2,), elements=finite_or_wild),
    probe=st.floats(-1e10, 1e10),
)
def test_every_probe_coordinate_moves_by_at_most_max_q_one_minus_q(data, extra, probe):
    quantiles = np.array([0.01, 0.5, 0.99])

    def signed(X):
        out = []
        for col in X.T:
            observed = col[~np.isnan(col)]
            below = np.sum(observed <= probe)
            out.append(below - quantiles * observed.size)
        return np.concatenate(out)

    change = np.abs(signed(np.vstack([data, extra])) - signed(data))
    assert np.all(change <= np.tile(np.maximum(quantiles, 1 - quantiles), 2) + 1e-12)
    assert quantile_probe_sensitivity(2, quantiles) == pytest.approx(math.sqrt(2 * 3))


def test_search_grid_is_public_and_sorted():
    grid = quantile_search_grid()
    assert grid.size == 128 and np.all(np.diff(grid) >= 0)
    assert grid[0] == -1e9 and grid[-1] == 1e9 and 0.0 in grid


def test_noiseless_search_finds_the_cell_of_each_quantile():
    X = np.column_stack([RNG.normal(1005, 3, 5000), RNG.lognormal(3, 2, 5000)])
    X[::7, 0] = np.nan
    result = noisy_quantile_search(X, (0.01, 0.5, 0.99), 0.0, RNG)
    for j, col in enumerate(X.T):
        col = np.sort(col[~np.isnan(col)])
        for k, q in enumerate((0.01, 0.5, 0.99)):
            lo, hi = result.lower[j, k], result.upper[j, k]
            # hi is the first grid point whose count reaches q n; lo the one before it.
            assert np.sum(col <= hi) >= q * col.size
            assert lo == hi or np.sum(col <= lo) < q * col.size


def test_noisy_bounds_land_near_the_requested_quantiles():
    # T9 (a fast sentinel: 20 runs instead of 200): normal(1005, 3), n = 1e5, the noise of a
    # d=1 search at (0.5, 1e-6).
    z = calibrate_gaussian(0.5, 1e-6).noise_multiplier
    sigma = quantile_probe_sensitivity(1, (0.01, 0.99)) * z * math.sqrt(QUANTILE_PROBES)
    X = np.random.default_rng(1).normal(1005, 3, size=(100_000, 1))
    sorted_x = np.sort(X[:, 0])
    hits = 0
    for seed in range(20):
        r = noisy_quantile_search(X, (0.01, 0.99), sigma, np.random.default_rng(seed))
        low_rank = np.searchsorted(sorted_x, r.lower[0, 0]) / X.shape[0]
        high_rank = np.searchsorted(sorted_x, r.upper[0, 1]) / X.shape[0]
        hits += 0.004 <= low_rank <= 0.012 and 0.988 <= high_rank <= 0.996
    assert hits >= 18


# --- T4/T7/T11: calibration golden values -------------------------------------------------------


@pytest.mark.parametrize(
    "epsilon, delta, z_star",
    [(1.0, 1e-5, 3.7306), (1.0, 1e-6, 4.2247), (0.5, 1e-6, 8.0576), (0.1, 1e-6, 36.3047)],
)
def test_single_gaussian_calibration_matches_the_analytic_gaussian(epsilon, delta, z_star):
    calibration = calibrate_gaussian(epsilon, delta)
    # PLD calibration never overshoots: at most 0.5% below the target, so z a hair above z*.
    assert calibration.epsilon <= epsilon
    assert z_star * (1 - 1e-4) <= calibration.noise_multiplier <= z_star * 1.006


def test_gaussian_composition_is_exact_in_mu_squared():
    # T7: k Gaussians with z_i = z* sqrt(k) compose to the target (mu^2 adds up).
    z = calibrate_gaussian(0.5, 1e-6).noise_multiplier
    for k in (2, 10):
        event = dp_accounting.ComposedDpEvent([dp_accounting.GaussianDpEvent(z * math.sqrt(k))] * k)
        single = epsilon_of(dp_accounting.GaussianDpEvent(z), 1e-6, pld_interval=1e-5)
        assert epsilon_of(event, 1e-6, pld_interval=1e-5) == pytest.approx(single, abs=1e-4)


def test_model_noise_with_a_tenth_of_the_budget_to_preprocessing():
    # T11: f = 0.1 at (1, 1e-5), Poisson rate 0.01, 1000 steps: sigma 1.4684 (alone 1.4146).
    plan = PrivacyPlan.constant(1000, 0.01)
    alone = calibrate(plan, 1.0, 1e-5).noise_multiplier
    mu = 1.0 / calibrate_gaussian(1.0, 1e-5).noise_multiplier
    shared = calibrate(plan.with_priors((1.0 / (math.sqrt(0.1) * mu),)), 1.0, 1e-5)
    assert alone == pytest.approx(1.4146, rel=6e-3)
    assert shared.noise_multiplier == pytest.approx(1.4684, rel=6e-3)
    assert shared.epsilon <= 1.0


def test_relation_conventions_of_dp_accounting_are_what_skdp_assumes():
    # T4: preprocessing events are accounted in add/remove accountants only; this fails loudly
    # if a dp_accounting release changes how it reads GaussianDpEvent.
    event = dp_accounting.GaussianDpEvent(2.0)
    assert epsilon_of(event, 1e-5, "pld", pld_interval=1e-5) == pytest.approx(1.99309, abs=2e-4)
    assert epsilon_of(event, 1e-5, "rdp") == pytest.approx(2.16572, abs=1e-4)


# --- T5/T3: partition selection -----------------------------------------------------------------


@pytest.mark.parametrize(
    "p, m, tau", [(1e-7, 1, 52.993), (1e-7, 10, 57.120), (1e-8, 10, 60.978)]
)
def test_partition_threshold_reference_values(p, m, tau):
    assert partition_threshold(10.0, p, m) == pytest.approx(tau, abs=2e-3)


def test_a_key_of_one_row_is_kept_with_the_planned_probability():
    # With sigma = 1 and p = 0.2 over m = 2 columns, each singleton key is kept with
    # probability p1 = 1 - sqrt(0.8); a broken threshold (e.g. sigma ignored) would not be.
    threshold = partition_threshold(1.0, 0.2, 2)
    p1 = 1 - math.sqrt(0.8)
    keys = KeyColumn.from_values(["only-me"])
    kept = sum(
        bool(thresholded_key_counts([keys], 1.0, threshold, np.random.default_rng(i))[0])
        for i in range(4000)
    )
    assert kept / 4000 == pytest.approx(p1, abs=0.015)


def test_a_new_row_adds_one_key_per_column_and_leaves_other_counts_unchanged():
    # T3, on the noiseless counts: one key per row and column, so sqrt(m) in L2.
    cols = [["a", "a", "b"], [1, 2, 2]]
    before = thresholded_key_counts([KeyColumn.from_values(c) for c in cols], 0.0, 0.0, RNG)
    extended = [KeyColumn.from_values(c + [new]) for c, new in zip(cols, ["z", 3], strict=True)]
    after = thresholded_key_counts(extended, 0.0, 0.0, RNG)
    for b, a, new in zip(before, after, ["z", 3], strict=True):
        assert a.pop(new) == 1
        assert a == b


def test_missing_values_are_one_key():
    column = KeyColumn.from_values([None, float("nan"), "x", -0.0, 0.0, pd.NA])
    assert column.keys[-1] is MISSING and len(column.keys) == 3
    assert str(column.keys[1]) == "0.0"
    np.testing.assert_array_equal(column.is_missing(), [1, 1, 0, 0, 0, 1])
    np.testing.assert_array_equal(column.counts(), [1, 2, 3])


def test_public_key_counts_put_every_row_in_exactly_one_bin():
    col = KeyColumn.from_values(["a", "b", "c", "a", None])
    counts = public_key_counts([col], [["a", "b"]], 0.0, RNG)[0]
    np.testing.assert_array_equal(counts, [2, 1, 2])
