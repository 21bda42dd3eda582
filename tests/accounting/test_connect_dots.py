"""skdp's connect-the-dots PMF, tail truncation and composition equal dp_accounting's, bit for bit.

``skdp.accounting._connect_dots`` replaces dp_accounting's dictionary round trips and Python
loops on the path of every Gaussian PLD; these tests hold each piece to dp_accounting's own
function on the same inputs (``np.array_equal``, ``==``: no tolerance).
"""

from __future__ import annotations

import functools
import itertools
import math

import dp_accounting
import numpy as np
import pytest
from dp_accounting.pld import pld_pmf, pld_privacy_accountant
from dp_accounting.pld import privacy_loss_distribution as pld_module
from dp_accounting.pld.privacy_loss_mechanism import AdjacencyType, GaussianPrivacyLoss
from scipy import stats

from skdp.accounting import _connect_dots as cd
from skdp.accounting import _gaussian_pld
from skdp.accounting._gaussian_pld import VectorisedGaussianLoss, VectorisedPLDAccountant


def assert_same_pmf(ours, theirs):
    """The same type, lower loss, masses (bits), infinity mass and pessimistic flag."""
    assert type(ours) is type(theirs)
    assert ours._infinity_mass == theirs._infinity_mass
    assert np.signbit(ours._infinity_mass) == np.signbit(theirs._infinity_mass)
    assert ours._pessimistic_estimate == theirs._pessimistic_estimate
    assert ours._discretization == theirs._discretization
    if isinstance(theirs, pld_pmf.SparsePLDPmf):
        assert list(ours._loss_probs) == list(theirs._loss_probs)
        a = np.array(list(ours._loss_probs.values()))
        b = np.array(list(theirs._loss_probs.values()))
    else:
        assert ours._lower_loss == theirs._lower_loss
        a, b = np.asarray(ours._probs), np.asarray(theirs._probs)
    assert a.dtype == b.dtype
    assert np.array_equal(a.view(np.uint64), b.view(np.uint64))  # bits, signed zeros too


def assert_same_pld(ours, theirs):
    assert ours._symmetric == theirs._symmetric
    assert_same_pmf(ours._pmf_remove, theirs._pmf_remove)
    if not theirs._symmetric:
        assert_same_pmf(ours._pmf_add, theirs._pmf_add)


# ------------------------------------------------------------------ fixed_gap_pmf


def _deltas(rng, n, kind):
    if kind == "smooth":  # a divergence curve: 1 down to ~0
        d = np.sort(rng.random(n))[::-1]
    elif kind == "flat":  # long runs of exact zeros and ties
        d = np.sort(np.round(rng.random(n), 1))[::-1]
    elif kind == "wobbly":  # increases within dp_accounting's tolerance: the running minimum
        d = np.sort(np.round(rng.random(n), 2))[::-1] + rng.uniform(0, 5e-13, n)
        d = np.clip(d, 0, 1)
    else:  # "tiny": masses far below 1, as in a subsampled step's tail
        d = np.sort(10.0 ** -rng.uniform(5, 300, n))[::-1]
    return np.ascontiguousarray(d)


@pytest.mark.parametrize("n, kind", list(itertools.product(
    (1, 2, 3, 999, 1000, 1001, 20_000), ("smooth", "flat", "wobbly", "tiny"))))
def test_fixed_gap_pmf_equals_dp_accountings(n, kind):
    for interval in (1e-4, 0.37):
        rng = np.random.default_rng([n, len(kind), int(interval * 1e4)])
        deltas = _deltas(rng, n, kind)
        lower = int(rng.integers(-5000, 5000))
        ours = cd.fixed_gap_pmf(interval, lower, lower + n - 1, deltas.copy())
        theirs = pld_pmf.create_pmf_pessimistic_connect_dots_fixed_gap(
            interval, lower, lower + n - 1, deltas.copy())
        assert_same_pmf(ours, theirs)


def test_fixed_gap_pmf_with_a_negative_zero_takes_the_running_minimum():
    deltas = np.array([0.5, 0.25, 0.0, -0.0, 0.0] + [0.0] * 1000)
    ours = cd.fixed_gap_pmf(1e-3, -3, -3 + len(deltas) - 1, deltas.copy())
    theirs = pld_pmf.create_pmf_pessimistic_connect_dots_fixed_gap(
        1e-3, -3, -3 + len(deltas) - 1, deltas.copy())
    assert_same_pmf(ours, theirs)


@pytest.mark.parametrize("args", [
    (1e-3, 5, 4, [0.5]),                  # upper below lower
    (1e-3, 0, 2, [0.5, 0.4]),             # wrong length
    (1e-3, 0, 1, [0.5, 1.5]),             # delta above 1
    (1e-3, 0, 2, [0.5, 0.6, 0.1]),        # increasing
])
def test_fixed_gap_pmf_rejects_what_dp_accounting_rejects(args):
    with pytest.raises(ValueError):
        pld_pmf.create_pmf_pessimistic_connect_dots_fixed_gap(*args)
    with pytest.raises(ValueError):
        cd.fixed_gap_pmf(*args)


@pytest.mark.parametrize("sigma, q, interval, adjacency", [
    (sigma, q, interval, adjacency)
    for sigma, q, interval in [(0.7, 0.02, 1e-3), (2.0, 1.0, 1e-3), (40.0, 0.3, 1e-4),
                               (1.0, 1e-4, 1e-2)]
    for adjacency in (AdjacencyType.ADD, AdjacencyType.REMOVE)
])
def test_connect_dots_pmf_equals_dp_accountings_builder(sigma, q, interval, adjacency):
    def loss():
        return VectorisedGaussianLoss(sigma, sampling_prob=q, adjacency_type=adjacency)
    ours = cd.connect_dots_pmf(loss(), interval)
    theirs = pld_module._create_pld_pmf_from_monotone_privacy_loss(
        loss(), pessimistic_estimate=True, value_discretization_interval=interval,
        use_connect_dots=True)
    assert_same_pmf(ours, theirs)


# ------------------------------------------------------------------ the noise distribution


def test_normal_equals_scipys_frozen_normal():
    scale = 1.37
    ours, theirs = _gaussian_pld._Normal(scale), stats.norm(scale=scale)
    rng = np.random.default_rng(3)
    x = np.concatenate([rng.normal(0, 10, 5000), rng.uniform(-60, 60, 5000),
                        [0.0, -0.0, np.inf, -np.inf, np.nan, 1e-300, -40.0, 40.0, 8.2, -8.2]])
    for name in ("cdf", "logcdf"):
        a, b = getattr(ours, name)(x), getattr(theirs, name)(x)
        assert np.array_equal(a, b, equal_nan=True)
        assert np.array_equal(np.signbit(a), np.signbit(b))
        assert a.dtype == b.dtype
        for v in (0.3, -7.0, np.inf, -np.inf, -0.0, np.float64(2.5), 3):
            s, t = getattr(ours, name)(v), getattr(theirs, name)(v)
            assert type(s) is type(t) and s == t and np.signbit(s) == np.signbit(t)
        assert np.array_equal(getattr(ours, name)([0.5, -1.0]), getattr(theirs, name)([0.5, -1.0]))
    for dtype in (np.float32, np.int32):  # scipy's promotions
        xs = x[np.isfinite(x)].astype(dtype)
        a, b = ours.cdf(xs), theirs.cdf(xs)
        assert a.dtype == b.dtype and np.array_equal(a, b, equal_nan=True)
    for p in (0.5 * math.exp(-50), 1e-300, 0.3, 0.5, 1 - 1e-16, np.float32(0.3), np.float64(0.7)):
        s, t = ours.ppf(p), theirs.ppf(p)
        assert type(s) is type(t) and s == t
    np.testing.assert_array_equal(ours.ppf(np.array([0.0, 0.2, 1.0])),
                                  theirs.ppf(np.array([0.0, 0.2, 1.0])))
    assert ours.pdf(0.4) == theirs.pdf(0.4)  # anything else: scipy's own


def test_the_fast_loss_sets_the_parents_attributes():
    assert _gaussian_pld._FAST_INIT
    kwargs = dict(sensitivity=1, pessimistic_estimate=True, log_mass_truncation_bound=-50,
                  sampling_prob=0.03, adjacency_type=AdjacencyType.ADD)
    ours, theirs = VectorisedGaussianLoss(0.8, **kwargs), GaussianPrivacyLoss(0.8, **kwargs)
    assert set(vars(ours)) == set(vars(theirs))
    for name, value in vars(theirs).items():
        if name != "_gaussian_random_variable":
            assert getattr(ours, name) == value
    assert ours.connect_dots_bounds() == theirs.connect_dots_bounds()
    assert ours.privacy_loss_tail().tail_probability_mass_function == (
        theirs.privacy_loss_tail().tail_probability_mass_function)
    with pytest.raises(ValueError):
        VectorisedGaussianLoss(0.0)
    with pytest.raises(ValueError):
        VectorisedGaussianLoss(1.0, log_mass_truncation_bound=1.0)


def test_without_the_fast_paths_the_plds_are_the_same(monkeypatch):
    fast = _gaussian_pld.gaussian_pld(0.9, 1e-3, sampling_prob=0.05)
    monkeypatch.setattr(_gaussian_pld, "_FAST_INIT", False)
    monkeypatch.setattr(cd, "HAS_PMF_INTERNALS", False)
    loss = VectorisedGaussianLoss(0.9, sampling_prob=0.05)
    assert type(loss._gaussian_random_variable) is not _gaussian_pld._Normal
    assert_same_pld(_gaussian_pld.gaussian_pld(0.9, 1e-3, sampling_prob=0.05), fast)
    assert_same_pld(cd.compose(fast, fast), fast.compose(fast))


# ------------------------------------------------------------------ truncation and composition


def _random_probs(rng, n, kind):
    if kind == "uniform":
        p = rng.random(n)
    elif kind == "steep":
        p = 10.0 ** -rng.uniform(0, 300, n)
    elif kind == "long_tails":  # mass 1e-18 per entry over thousands of entries
        p = np.full(n, 1e-18)
        p[n // 2] = 1.0
    else:  # "zeros"
        p = np.where(rng.random(n) < 0.5, rng.random(n), 0.0)
        p[rng.integers(n)] = 1.0
    return p / p.sum()


@pytest.mark.parametrize("n, kind, tail", [
    (n, kind, tail)
    for n, kind in itertools.product((1, 2, 64, 65, 5000, 40_000),
                                     ("uniform", "steep", "long_tails", "zeros"))
    for tail in (0.0, 1e-15, 1e-3)
] + [(500, "uniform", 2.0)])
def test_truncate_tails_equals_dp_accountings(n, kind, tail):
    rng = np.random.default_rng([n, len(kind)])
    probs = _random_probs(rng, n, kind)
    for pessimistic in (True, False):
        try:
            expected = pld_pmf._truncate_tails(probs.copy(), tail, pessimistic)
        except IndexError:  # everything truncated (tail 2): dp_accounting fails, and so do we
            with pytest.raises(IndexError):
                cd.truncate_tails(probs.copy(), tail, pessimistic)
            continue
        offset_t, out_t, mass_t = expected
        offset, out, mass = cd.truncate_tails(probs.copy(), tail, pessimistic)
        assert offset == offset_t
        assert np.array_equal(out, out_t)
        assert mass == mass_t
        assert type(mass) is type(mass_t)


def _sparse(rng, n, gaps=False):
    keys = rng.choice(np.arange(-300, 300), size=n, replace=False) if gaps else range(n)
    return pld_pmf.SparsePLDPmf({int(k): float(v) for k, v in zip(keys, rng.random(n),
                                                                  strict=True)},
                                1e-3, 1e-9, True)


def test_to_dense_pmf_equals_dp_accountings():
    rng = np.random.default_rng(0)
    for pmf in [_sparse(rng, 1), _sparse(rng, 40), _sparse(rng, 40, gaps=True),
                pld_module.identity(1e-3)._pmf_remove]:  # identity's mass is an int
        assert_same_pmf(cd.to_dense_pmf(pmf), pmf.to_dense_pmf())


@functools.lru_cache(maxsize=1)
def _plds():
    g = _gaussian_pld.gaussian_pld
    return {
        "identity": pld_module.identity(1e-3),
        "sparse": g(60.0, 1e-3, sampling_prob=0.01),
        "dense": g(0.8, 1e-3, sampling_prob=0.05),
        "symmetric": g(1.5, 1e-3),
        "composed": _gaussian_pld.self_compose(g(1.0, 1e-3, sampling_prob=0.01), 200),
        "laplace": pld_module.from_laplace_mechanism(3.0, value_discretization_interval=1e-3),
    }


@pytest.mark.parametrize("first, second", list(itertools.product(
    ["identity", "sparse", "dense", "symmetric", "composed", "laplace"], repeat=2)))
def test_compose_equals_dp_accountings(first, second):
    plds = _plds()
    a, b = plds[first], plds[second]
    for tail in (1e-15, 0.0, 1e-6):
        assert_same_pld(cd.compose(a, b, tail), a.compose(b, tail))


# ------------------------------------------------------------------ accountant


@pytest.mark.parametrize("events, interval", [
    ([(0.01, 1.0, 1000), (0.05, 2.0, 300)], 1e-3),    # two plans in a row
    ([(0.01, 60.0, 500), (1.0, 8.0, 10)], 1e-4),      # a sparse step and full batches
    ([(1018 / 32561, 3.1, 640)], 2.5e-4),             # Adult's default plan
])
def test_accountant_plds_and_epsilons_equal_dp_accountings(events, interval):
    event = dp_accounting.ComposedDpEvent([
        dp_accounting.SelfComposedDpEvent(
            dp_accounting.PoissonSampledDpEvent(q, dp_accounting.GaussianDpEvent(sigma)), steps)
        for q, sigma, steps in events
    ])
    ours = VectorisedPLDAccountant(value_discretization_interval=interval).compose(event)
    theirs = pld_privacy_accountant.PLDAccountant(
        value_discretization_interval=interval).compose(event)
    assert_same_pld(ours._pld, theirs._pld)
    for delta in (1e-7, 1e-5, 0.1):
        assert ours._pld.get_epsilon_for_delta(delta) == theirs.get_epsilon(delta)
        # skdp's vectorised read-out (``_pld_epsilon``): documented there, within 1e-9.
        assert theirs.get_epsilon(delta) <= ours.get_epsilon(delta) <= (
            theirs.get_epsilon(delta) * (1 + 1e-9))
