"""skdp's self-convolution equals dp_accounting's: the same truncation bounds, the same masses.

``self_convolve`` and ``self_compose`` (``skdp.accounting``) replace dp_accounting's
``common.self_convolve`` and ``PrivacyLossDistribution.self_compose`` on the path of every
DP-SGD plan's PLD; these tests hold them to dp_accounting's numbers, bit for bit.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from dp_accounting.pld import common, pld_pmf
from dp_accounting.pld import privacy_loss_distribution as pld_module

from skdp.accounting import _self_convolve as sc
from skdp.accounting._gaussian_pld import gaussian_pld
from skdp.accounting._self_convolve import self_compose

TAIL = 1e-15  # PrivacyLossDistribution.self_compose's truncation, the accountant's


def _random_pmf(rng, n, kind):
    if kind == "uniform":
        p = rng.random(n)
    elif kind == "sparse":  # mostly exact zeros
        p = np.where(rng.random(n) < 0.2, rng.random(n), 0.0)
        p[rng.integers(n)] = 1.0
    elif kind == "steep":  # masses from 1 down to 1e-300, as a PLD's tails
        p = 10.0 ** -rng.uniform(0, 300, n)
    else:  # "skewed": one heavy entry, as a subsampled step's loss near 0
        p = rng.random(n) * 1e-6
        p[rng.integers(n)] = 1.0
    return p / p.sum()


RANDOM_CASES = [
    (n, kind, num_times, tail)
    for n, kind in itertools.product((1, 2, 7, 64, 1500), ("uniform", "sparse", "steep", "skewed"))
    for num_times, tail in ((1, TAIL), (3, TAIL), (99, TAIL), (500, 1e-10), (40, 0.0))
]


@pytest.mark.parametrize("n, kind, num_times, tail", RANDOM_CASES)
def test_random_pmfs_equal_dp_accountings(n, kind, num_times, tail):
    rng = np.random.default_rng([n, num_times, len(kind)])
    p = _random_pmf(rng, n, kind)
    assert sc.self_convolve_bounds(p, num_times, tail) == common.compute_self_convolve_bounds(
        p, num_times, tail)
    lower, out = sc.self_convolve(p, num_times, tail)
    lower_theirs, out_theirs = common.self_convolve(p, num_times, tail)
    assert lower == lower_theirs
    np.testing.assert_array_equal(out, out_theirs)


def test_recomputing_every_order_gives_the_same_bounds(monkeypatch):
    """The exact path (each order by logsumexp, as dp_accounting) agrees with the fast one."""
    rng = np.random.default_rng(0)
    pmfs = [_random_pmf(rng, n, kind) for n, kind in [(50, "uniform"), (900, "steep"),
                                                       (3000, "skewed")]]
    fast = [sc.self_convolve_bounds(p, 700, TAIL) for p in pmfs]
    calls = []
    exact = sc._exact_bound
    monkeypatch.setattr(sc, "_LOG_MGF_ERROR", 1e6)  # every order uncertain: all recomputed
    monkeypatch.setattr(sc, "_exact_bound", lambda *a: calls.append(a) or exact(*a))
    for p, bounds in zip(pmfs, fast, strict=True):
        assert sc.self_convolve_bounds(p, 700, TAIL) == bounds
        assert bounds == common.compute_self_convolve_bounds(p, 700, TAIL)
    assert len(calls) == 40 * len(pmfs)


@pytest.mark.parametrize("side, initial, expected", [(+1, 10, 4), (-1, 0, 2)])
def test_an_uncertain_rounding_is_settled_by_the_exact_bound(monkeypatch, side, initial, expected):
    """A fast bound a hair from an integer: its ceiling (floor) is taken from the exact value."""
    # Upper side: fast 2.9999999999 (ceil 3), exact 3.0000000001 (ceil 4); 7.2 cannot win.
    # Lower side: fast 3.0000000001 (floor 3), exact 2.9999999999 (floor 2); -1.5 cannot win.
    fast, exact = (2.9999999999, 3.0000000001) if side > 0 else (3.0000000001, 2.9999999999)
    other = 7.2 if side > 0 else -1.5
    recomputed = []

    def exact_bound(probs, order, num_times, log_term):
        recomputed.append(order)
        return exact

    monkeypatch.setattr(sc, "_exact_bound", exact_bound)
    result = sc._settle(initial, np.array([fast, other]), np.array([1e-6, 1e-6]),
                        np.array([0.1, 0.2]) * side, side, np.ones(3), 1, 0.0)
    assert result == expected
    assert recomputed == [0.1 * side]  # only the order that could decide


@pytest.mark.parametrize("p", [
    [0.5, -1e-18, 0.5],        # a negative entry (FFT noise): dp_accounting's own path
    [0.25, np.nan, 0.75],
    [0.0, 0.0, 0.0],
])
def test_unexpected_entries_go_to_dp_accounting(p):
    ours = sc.self_convolve(p, 5, TAIL)
    theirs = common.self_convolve(p, 5, TAIL)
    assert ours[0] == theirs[0]
    np.testing.assert_array_equal(ours[1], theirs[1])


def _assert_same_pld(ours, theirs):
    assert ours._symmetric == theirs._symmetric
    for a, b in ((ours._pmf_remove, theirs._pmf_remove), (ours._pmf_add, theirs._pmf_add)):
        assert type(a) is type(b)
        assert a._discretization == b._discretization
        assert a._pessimistic_estimate == b._pessimistic_estimate
        assert a._infinity_mass == b._infinity_mass
        if isinstance(a, pld_pmf.DensePLDPmf):
            assert a._lower_loss == b._lower_loss
            np.testing.assert_array_equal(a._probs, b._probs)
        else:
            assert a._loss_probs == b._loss_probs


def _check_plan(q, sigma, steps, interval):
    pld = gaussian_pld(sigma, interval, sampling_prob=q)
    ours, theirs = self_compose(pld, steps), pld.self_compose(steps)
    _assert_same_pld(ours, theirs)
    # dp_accounting's own epsilon read-out, on both.
    assert ours.get_epsilon_for_delta(1e-5) == theirs.get_epsilon_for_delta(1e-5)


@pytest.mark.parametrize("q, sigma, steps, interval", [
    (0.01, 1.0, 500, 1e-3),
    (0.1, 5.0, 2000, 1e-3),
    (0.001, 60.0, 10, 1e-4),    # sparse single step, dense once composed
    (0.01, 60.0, 1, 1e-3),      # one step: sparse, returned as it is
    (1.0, 5.0, 10, 1e-3),       # no subsampling: a symmetric PLD
    (0.001, 0.5, 2000, 1e-3),
])
def test_plan_plds_equal_dp_accountings(q, sigma, steps, interval):
    _check_plan(q, sigma, steps, interval)


@pytest.mark.slow
@pytest.mark.parametrize("q, sigma, steps, interval", list(itertools.product(
    (0.001, 0.01, 0.1, 1.0), (0.5, 1.0, 5.0, 60.0), (1, 10, 500, 2000), (1e-4, 1e-3))))
def test_plan_plds_equal_dp_accountings_sweep(q, sigma, steps, interval):
    _check_plan(q, sigma, steps, interval)


def test_small_sparse_pmfs_and_old_dp_accounting_use_dp_accountings_own(monkeypatch):
    # Randomised response: 2 losses, so 2^3 fits dp_accounting's sparse composition.
    pld = pld_module.from_randomized_response(0.3, 2, value_discretization_interval=1e-3)
    _assert_same_pld(self_compose(pld, 3), pld.self_compose(3))
    monkeypatch.setattr(sc, "_HAS_PMF_INTERNALS", False)
    pld = gaussian_pld(2.0, 1e-3, sampling_prob=0.05)
    _assert_same_pld(self_compose(pld, 50), pld.self_compose(50))


def test_self_compose_rejects_non_positive_counts_as_dp_accounting():
    pld = gaussian_pld(2.0, 1e-3, sampling_prob=0.05)
    with pytest.raises(ValueError, match="num_times"):
        self_compose(pld, 0)
