"""The vectorised Gaussian PLD equals dp_accounting's, point for point, and so do its epsilons."""

from __future__ import annotations

import math

import dp_accounting
import numpy as np
import pytest
from dp_accounting.pld import pld_privacy_accountant
from dp_accounting.pld import privacy_loss_distribution as pld_module
from dp_accounting.pld.privacy_loss_mechanism import AdjacencyType, GaussianPrivacyLoss

from skdp.accounting._gaussian_pld import (
    VectorisedGaussianLoss,
    VectorisedPLDAccountant,
    gaussian_pld,
)

Relation = dp_accounting.NeighboringRelation


def _pmfs(pld):
    """(losses, masses, infinity mass) of each direction, dense or sparse alike."""
    pmfs = [pld._pmf_remove] if pld._symmetric else [pld._pmf_remove, pld._pmf_add]
    out = []
    for p in pmfs:
        if hasattr(p, "_loss_probs"):
            keys = np.array(sorted(p._loss_probs))
            probs = np.array([p._loss_probs[k] for k in keys])
        else:
            probs = np.asarray(p._probs)
            keys = p._lower_loss + np.arange(len(probs))
        out.append((keys, probs, p._infinity_mass))
    return out


@pytest.mark.parametrize("sigma, q, interval", [
    (0.6, 256 / 32561, 1e-4),   # DP-SGD at eps ~4, fine grid
    (1.1, 0.01, 1e-3),
    (4.0, 0.3, 1e-4),
    (0.8, 1.0, 1e-4),           # full batch: no subsampling
    (30.0, 1e-4, 1e-5),         # heavy noise, tiny rate, very fine grid
])
def test_pmfs_equal_dp_accountings(sigma, q, interval):
    ours = gaussian_pld(sigma, interval, sampling_prob=q)
    theirs = pld_module.from_gaussian_mechanism(
        sigma, value_discretization_interval=interval, sampling_prob=q)
    assert ours._symmetric == theirs._symmetric
    pairs = zip(_pmfs(ours), _pmfs(theirs), strict=True)
    for (lo_a, probs_a, inf_a), (lo_b, probs_b, inf_b) in pairs:
        np.testing.assert_array_equal(lo_a, lo_b)
        np.testing.assert_allclose(probs_a, probs_b, rtol=1e-9, atol=1e-300)
        assert inf_a == pytest.approx(inf_b, rel=1e-9, abs=1e-300)


@pytest.mark.parametrize("adjacency", [AdjacencyType.ADD, AdjacencyType.REMOVE])
def test_divergence_matches_the_scalar_path_on_and_past_the_limits(adjacency):
    q = 0.05
    limit = -math.log(1 - q) if adjacency == AdjacencyType.ADD else math.log(1 - q)
    epsilons = np.array([-3.0, -1.0, limit, limit * (1 + 1e-12), 0.0, 1e-3, 0.04, 2.0, 9.0])
    kwargs = dict(sampling_prob=q, adjacency_type=adjacency)
    ours = VectorisedGaussianLoss(0.9, **kwargs).get_delta_for_epsilon(epsilons)
    scalar = GaussianPrivacyLoss(0.9, **kwargs)
    expected = [scalar.get_delta_for_epsilon(float(e)) for e in epsilons]
    np.testing.assert_allclose(ours, expected, rtol=1e-10, atol=1e-300)


@pytest.mark.parametrize("relation", [Relation.ADD_OR_REMOVE_ONE, Relation.REPLACE_ONE])
def test_accountant_epsilons_equal_dp_accountings(relation):
    event = dp_accounting.ComposedDpEvent([
        dp_accounting.SelfComposedDpEvent(
            dp_accounting.PoissonSampledDpEvent(0.01, dp_accounting.GaussianDpEvent(1.2)), 300),
        dp_accounting.SelfComposedDpEvent(dp_accounting.GaussianDpEvent(20.0), 3),
        dp_accounting.LaplaceDpEvent(50.0) if relation == Relation.ADD_OR_REMOVE_ONE
        else dp_accounting.NoOpDpEvent(),
    ])
    for delta in (1e-7, 1e-5, 0.3):
        ours = VectorisedPLDAccountant(relation, 1e-4).compose(event).get_epsilon(delta)
        theirs = pld_privacy_accountant.PLDAccountant(relation, 1e-4).compose(event).get_epsilon(
            delta)
        assert theirs <= ours <= theirs * (1 + 1e-9)


def test_a_non_private_event_is_infinite():
    acc = VectorisedPLDAccountant().compose(dp_accounting.NonPrivateDpEvent())
    assert acc.get_epsilon(1e-5) == math.inf


@pytest.mark.parametrize("q, sigma, steps, interval", [
    (0.01, 1.0, 1000, 1e-3),   # the large ledger's plan
    (0.01, 60.0, 500, 1e-4),   # the small ledger's plan: a sparse step, composed dense
    (1.0, 2.0, 50, 1e-3),      # full batch: symmetric
])
def test_accountant_composes_plans_to_dp_accountings_pld(q, sigma, steps, interval):
    """Self-composition (skdp's self_convolve) gives dp_accounting's PMFs, bit for bit."""
    event = dp_accounting.SelfComposedDpEvent(
        dp_accounting.PoissonSampledDpEvent(q, dp_accounting.GaussianDpEvent(sigma)), steps)
    ours = VectorisedPLDAccountant(value_discretization_interval=interval).compose(event)
    theirs = pld_privacy_accountant.PLDAccountant(
        value_discretization_interval=interval).compose(event)
    pairs = zip(_pmfs(ours._pld), _pmfs(theirs._pld), strict=True)
    for (keys_a, probs_a, inf_a), (keys_b, probs_b, inf_b) in pairs:
        np.testing.assert_array_equal(keys_a, keys_b)
        np.testing.assert_array_equal(probs_a, probs_b)
        assert inf_a == inf_b
    # dp_accounting's own read-out, on both PLDs.
    assert ours._pld.get_epsilon_for_delta(1e-5) == theirs._pld.get_epsilon_for_delta(1e-5)


def _assert_bitwise_equal_plds(ours, theirs):
    """The same PMF types, lower losses, masses (bits), infinity masses and pessimistic flags."""
    assert ours._symmetric == theirs._symmetric
    pmfs = [(ours._pmf_remove, theirs._pmf_remove)]
    if not theirs._symmetric:
        pmfs.append((ours._pmf_add, theirs._pmf_add))
    for a, b in pmfs:
        assert type(a) is type(b)
        assert a._infinity_mass == b._infinity_mass
        assert a._pessimistic_estimate is b._pessimistic_estimate
        if hasattr(b, "_loss_probs"):
            assert list(a._loss_probs) == list(b._loss_probs)
            probs_a = np.array(list(a._loss_probs.values()))
            probs_b = np.array(list(b._loss_probs.values()))
        else:
            assert a._lower_loss == b._lower_loss
            probs_a, probs_b = a._probs, b._probs
        assert probs_a.dtype == probs_b.dtype
        assert np.array_equal(probs_a.view(np.uint64), probs_b.view(np.uint64))


_QS = (1e-4, 0.001, 0.01, 0.1, 0.5, 1.0)
_SIGMAS = (0.3, 0.6, 1.0, 3.0, 60.0)
# The default run: every rate and noise at the coarse interval, and a few finer grids whose
# dp_accounting path is fast; the whole grid runs under -m slow (about 20 s).
_FAST_GRID = [(q, sigma, 1e-2) for q in _QS for sigma in _SIGMAS] + [
    (1e-4, 1.0, 1e-4), (0.1, 3.0, 1e-4), (0.01, 60.0, 1e-4), (0.5, 1.0, 1e-3),
    (0.01, 0.6, 1e-3), (1.0, 0.3, 1e-3),
]
_FULL_GRID = [(q, sigma, interval) for q in _QS for sigma in _SIGMAS
              for interval in (1e-4, 1e-3, 1e-2)]


def _check_bitwise(q, sigma, interval):
    ours = gaussian_pld(sigma, interval, sampling_prob=q)
    theirs = pld_module.from_gaussian_mechanism(
        sigma, value_discretization_interval=interval, sampling_prob=q)
    _assert_bitwise_equal_plds(ours, theirs)


@pytest.mark.parametrize("q, sigma, interval", _FAST_GRID)
def test_pmfs_equal_dp_accountings_bit_for_bit(q, sigma, interval):
    _check_bitwise(q, sigma, interval)


@pytest.mark.slow
@pytest.mark.parametrize("q, sigma, interval", _FULL_GRID)
def test_pmfs_equal_dp_accountings_bit_for_bit_on_the_whole_grid(q, sigma, interval):
    _check_bitwise(q, sigma, interval)
