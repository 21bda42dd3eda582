"""The vectorised RDP of the Poisson-subsampled Gaussian equals dp_accounting's, and the ledger
uses it.

:func:`skdp.accounting._gaussian_rdp.poisson_gaussian_rdp` replaces ``RdpAccountant``'s
per-order Python loops for the events of DP-SGD. An RDP value is a privacy bound, so it is
compared with a fresh ``RdpAccountant`` (its ``_rdp``, as the ledger reads it) at rtol 1e-9, and
must never be below it by more than a few ulps. (In practice it is the same float: the terms and
their summation order are dp_accounting's.)
"""

from __future__ import annotations

import logging

import dp_accounting
import numpy as np
import pytest
from dp_accounting.rdp import RdpAccountant, rdp_privacy_accountant

from skdp.accounting import NeighboringRelation
from skdp.accounting._gaussian_rdp import poisson_gaussian_rdp
from skdp.accounting._relations import rdp_equivalent
from skdp.budget import PrivacyBudget
from skdp.budget._composition import Composer
from tests.budget._helpers import dpsgd

DELTA = 1e-5
ORDERS = np.array(
    [float(a) for a in rdp_privacy_accountant.DEFAULT_RDP_ORDERS]
    + [1.01, 1.5, 2.5, 3.0, 700.0, 1024.0]
)
ADD_REMOVE = NeighboringRelation.ADD_OR_REMOVE_ONE
REPLACE = NeighboringRelation.REPLACE_ONE


@pytest.fixture(autouse=True)
def _quiet_absl():
    # dp_accounting (and this module, as it does) warns for every fractional order whose
    # series does not converge (q = 0.5 with a large sigma): hundreds of lines.
    logger = logging.getLogger("absl")
    level = logger.level
    logger.setLevel(logging.ERROR)
    yield
    logger.setLevel(level)


def accountant_rdp(event, orders, relation=ADD_REMOVE) -> np.ndarray:
    """What a fresh RdpAccountant holds after composing ``event`` once."""
    accountant = RdpAccountant(list(orders), relation.to_dp_accounting())
    return accountant.compose(event)._rdp


def poisson_gaussian(q: float, sigma: float) -> dp_accounting.DpEvent:
    return dp_accounting.PoissonSampledDpEvent(q, dp_accounting.GaussianDpEvent(sigma))


def assert_same_bound(got: np.ndarray, expected: np.ndarray) -> None:
    np.testing.assert_allclose(got, expected, rtol=1e-9, atol=0.0)
    # A privacy bound may only err upwards.
    with np.errstate(invalid="ignore"):
        below = got < expected - 4 * np.spacing(np.abs(expected))
    assert not below.any(), (got[below], expected[below])


QS = [0.0, 1e-4, 0.001, 0.01, 0.1, 0.5, 0.99, 1.0]
SIGMAS = [0.3, 0.5, 0.8, 1.0, 2.0, 5.0, 60.0, 1000.0]
# dp_accounting takes 2.6 s for the whole grid on all the orders: the default run covers the
# grid on every third order (and the extra orders), and all of them at DP-SGD's usual settings;
# `-m slow` runs the grid on all of them.
SOME_ORDERS = np.unique(np.concatenate([ORDERS[:-6:3], ORDERS[-6:]]))


@pytest.mark.parametrize("sigma", SIGMAS)
@pytest.mark.parametrize("q", QS)
def test_equals_rdp_accountant_on_the_grid(q, sigma):
    got = poisson_gaussian_rdp(q, sigma, SOME_ORDERS)
    assert got.shape == SOME_ORDERS.shape and got.dtype == np.float64
    assert_same_bound(got, accountant_rdp(poisson_gaussian(q, sigma), SOME_ORDERS))


@pytest.mark.parametrize("q, sigma", [(0.01, 1.0), (0.01, 60.0), (0.004, 0.8), (0.5, 1000.0)])
def test_equals_rdp_accountant_on_every_order(q, sigma):
    expected = accountant_rdp(poisson_gaussian(q, sigma), ORDERS)
    if q == 0.5:
        # dp_accounting's series for the smallest fractional orders does not stop within its
        # 1000 terms here: it returns inf for them, and so must we.
        assert np.isinf(expected).any() and np.isfinite(expected).any()
    assert_same_bound(poisson_gaussian_rdp(q, sigma, ORDERS), expected)


@pytest.mark.slow
@pytest.mark.parametrize("sigma", SIGMAS)
@pytest.mark.parametrize("q", QS)
def test_equals_rdp_accountant_on_the_grid_on_every_order(q, sigma):
    expected = accountant_rdp(poisson_gaussian(q, sigma), ORDERS)
    assert_same_bound(poisson_gaussian_rdp(q, sigma, ORDERS), expected)


@pytest.mark.parametrize("sigma", [0.0, 1.0, np.inf])
@pytest.mark.parametrize("q", [0.0, 0.01, 1.0])
def test_special_cases(q, sigma):
    # Orders <= 1 and inf, sigma 0 and inf: dp_accounting's own answers (0, inf, nan, or the
    # inf of a series that never converges).
    orders = np.array([0.5, 1.0, 1.5, 2.0, 64.0, np.inf])
    with np.errstate(all="ignore"):
        expected = accountant_rdp(poisson_gaussian(q, sigma), orders)
        got = poisson_gaussian_rdp(q, sigma, orders)
    assert_same_bound(got, expected)


def test_plain_gaussian_is_alpha_over_two_sigma_squared():
    # What RdpAccountant adds for a GaussianDpEvent: the q = 1 case.
    expected = accountant_rdp(dp_accounting.GaussianDpEvent(3.0), ORDERS)
    np.testing.assert_array_equal(expected, ORDERS / (2 * 3.0**2))
    assert_same_bound(poisson_gaussian_rdp(1.0, 3.0, ORDERS), expected)


@pytest.mark.parametrize("q, sigma", [(-0.1, 1.0), (1.5, 1.0), (np.nan, 1.0), (0.1, -1.0)])
def test_invalid_arguments_raise_as_dp_accounting(q, sigma):
    with pytest.raises(ValueError) as ours:
        poisson_gaussian_rdp(q, sigma, ORDERS)
    with pytest.raises(ValueError) as theirs:
        rdp_privacy_accountant._compute_rdp_poisson_subsampled_gaussian(q, sigma, ORDERS)
    assert str(ours.value) == str(theirs.value)


@pytest.mark.slow
def test_random_sweep_equals_rdp_accountant():
    rng = np.random.default_rng(0)
    for _ in range(150):
        q = float(10 ** rng.uniform(-6, 0))
        sigma = float(10 ** rng.uniform(-1, 4))
        orders = np.concatenate(
            [rng.uniform(1.0001, 200.0, 20), rng.integers(2, 2049, 5), ORDERS[::7]]
        )
        expected = accountant_rdp(poisson_gaussian(q, sigma), orders)
        assert_same_bound(poisson_gaussian_rdp(q, sigma, orders), expected)


# --- the ledger -------------------------------------------------------------------------------


@pytest.mark.parametrize("relation", [ADD_REMOVE, REPLACE])
def test_composer_curves_equal_a_fresh_accountant(relation):
    events = [
        dp_accounting.GaussianDpEvent(3.0),
        dp_accounting.ComposedDpEvent(
            [dp_accounting.GaussianDpEvent(5.0), dp_accounting.LaplaceDpEvent(20.0)]
        ),
    ]
    if relation is ADD_REMOVE:  # the RDP accountant has no Poisson sampling under replace-one
        events += [
            dpsgd(0.01, 1.0, 1000),
            dpsgd(0.004, 60.0, 500),
            dp_accounting.ComposedDpEvent([dpsgd(0.1, 0.8, 20), dpsgd(0.5, 5.0, 3)]),
        ]
    composer = Composer(relation, DELTA, 10.0)
    for event in events:
        expected = accountant_rdp(rdp_equivalent(event, relation), composer.orders, relation)
        assert_same_bound(composer._rdp_curve(event), expected)


def test_ledger_totals_equal_a_fresh_rdp_composition(tmp_path, monkeypatch):
    events = [dpsgd(0.01, 1.2345, 300), dp_accounting.GaussianDpEvent(12.345)]
    budget = PrivacyBudget(20.0, DELTA, path=str(tmp_path / "ledger.skdp"))

    # The ledger must not fall back on dp_accounting's per-order loops for these events.
    def refuse(*args, **kwargs):
        raise AssertionError("dp_accounting's per-order RDP loop was called")

    with monkeypatch.context() as patch:
        patch.setattr(
            rdp_privacy_accountant, "_compute_rdp_poisson_subsampled_gaussian", refuse
        )
        for event in events:
            budget.charge(event, estimator="e")
    fresh = RdpAccountant()
    for event in events:
        fresh.compose(event)
    totals = budget.totals()
    assert totals.n_spends == 2
    assert totals.rdp_epsilon == pytest.approx(fresh.get_epsilon(DELTA), rel=1e-12)


@pytest.mark.parametrize("relation", ["add_or_remove_one", "replace_one"])
def test_make_accountant_rdp_equals_dp_accountings(relation):
    # The calibration's and epsilon_of's RDP accountant: the same curve and epsilon as
    # dp_accounting's on plans with several groups, plain Gaussians and non-private parts.
    from skdp.accounting import epsilon_of, make_accountant
    from skdp.accounting._gaussian_rdp import VectorisedRdpAccountant

    step = dp_accounting.PoissonSampledDpEvent(0.02, dp_accounting.GaussianDpEvent(1.3))
    other = dp_accounting.PoissonSampledDpEvent(0.02, dp_accounting.GaussianDpEvent(2.6))
    plan = dp_accounting.ComposedDpEvent([
        dp_accounting.SelfComposedDpEvent(step, 300),
        dp_accounting.SelfComposedDpEvent(other, 200),
        dp_accounting.GaussianDpEvent(8.0),
    ])
    ours = make_accountant("rdp", relation)
    assert isinstance(ours, VectorisedRdpAccountant)
    event = rdp_equivalent(plan, NeighboringRelation(relation))
    theirs = RdpAccountant(neighboring_relation=NeighboringRelation(relation).to_dp_accounting())
    if relation == "replace_one":  # dp_accounting refuses Poisson sampling there; so do we
        with pytest.raises(Exception) as refused:
            theirs.compose(event)
        with pytest.raises(type(refused.value)):
            ours.compose(event)
        return
    ours.compose(event)
    theirs.compose(event)
    np.testing.assert_array_equal(ours._rdp, theirs._rdp)
    assert ours.get_epsilon(1e-5) == theirs.get_epsilon(1e-5)
    assert epsilon_of(plan, 1e-5, "rdp") == theirs.get_epsilon(1e-5)
    assert epsilon_of(dp_accounting.NonPrivateDpEvent(), 1e-5, "rdp") == np.inf
