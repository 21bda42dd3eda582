"""Tests of privacy accounting: plans, noise calibration and the guarantees estimators report.

Every epsilon skdp reports must be an upper bound that an independent ``dp_accounting``
accountant confirms; calibration must never overshoot its target and must not waste budget.
"""

from __future__ import annotations

import math
import time

import dp_accounting
import numpy as np
import pytest
from dp_accounting.pld import PLDAccountant
from dp_accounting.rdp import RdpAccountant

from skdp.accounting import (
    Calibration,
    NeighboringRelation,
    PrivacyPlan,
    Sampling,
    StepGroup,
    UnreachablePrivacyTarget,
    calibrate,
    epsilon_of,
    make_accountant,
)
from skdp.accounting._accountants import FINE_PLD_INTERVAL
from skdp.linear_model import DPLogisticRegression, DPRidge

DELTA = 1e-5


def fresh_epsilon(
    event: dp_accounting.DpEvent, delta: float, accountant: str, pld_interval: float = 1e-4
) -> float:
    """Epsilon of ``event`` from an accountant built here, not through skdp."""
    if accountant == "pld":
        acc = PLDAccountant(value_discretization_interval=pld_interval)
    else:
        acc = RdpAccountant()
    return float(acc.compose(event).get_epsilon(delta))


# --- golden values ----------------------------------------------------------------------------

# Poisson-sampled Gaussian, sigma=1.5, q=0.04, 2250 steps, delta=1e-5: the setting of Opacus'
# accountant tests (about 90 epochs of MNIST with batch 2400 out of 60000).
GOLDEN_STEPS, GOLDEN_Q, GOLDEN_SIGMA = 2250, 0.04, 1.5


def golden_event() -> dp_accounting.DpEvent:
    return PrivacyPlan.constant(GOLDEN_STEPS, GOLDEN_Q).dp_event(GOLDEN_SIGMA)


def test_golden_rdp_epsilon():
    assert epsilon_of(golden_event(), DELTA, "rdp") == pytest.approx(7.3291, abs=1e-3)


def test_golden_pld_epsilon():
    # The PRV accountant reports 6.7774 as an upper estimate; a pessimistic PLD at our
    # discretisation must land close to it, and well below the RDP bound.
    eps = epsilon_of(golden_event(), DELTA, "pld")
    assert 6.70 <= eps <= 6.80
    assert eps < epsilon_of(golden_event(), DELTA, "rdp")


@pytest.mark.slow
def test_golden_rdp_matches_opacus_accountant():
    accountants = pytest.importorskip("opacus.accountants")
    opacus_rdp = accountants.RDPAccountant()
    opacus_rdp.history = [(GOLDEN_SIGMA, GOLDEN_Q, GOLDEN_STEPS)]
    ours = epsilon_of(golden_event(), DELTA, "rdp")
    assert ours == pytest.approx(opacus_rdp.get_epsilon(DELTA), abs=1e-3)


def test_golden_event_structure():
    event = golden_event()
    assert isinstance(event, dp_accounting.SelfComposedDpEvent)
    assert event.count == GOLDEN_STEPS
    assert isinstance(event.event, dp_accounting.PoissonSampledDpEvent)
    assert event.event.sampling_probability == GOLDEN_Q
    assert isinstance(event.event.event, dp_accounting.GaussianDpEvent)
    assert event.event.event.noise_multiplier == GOLDEN_SIGMA


# --- calibration ------------------------------------------------------------------------------

# (sampling rate, steps, target epsilon): Poisson DP-SGD, very small q, and full batch.
FAST_GRID = [
    (0.01, 500, 1.0),
    (0.05, 200, 0.3),
    (1.0, 50, 2.0),
    (0.002, 3000, 0.5),
]
SLOW_GRID = [
    (0.01, 500, 4.0),
    (0.05, 200, 4.0),
    (1.0, 50, 0.3),
    (0.002, 3000, 4.0),
    (0.2, 100, 8.0),
]


def check_calibration(q: float, steps: int, eps: float, accountant: str) -> None:
    plan = PrivacyPlan.constant(steps, q, Sampling.FULL_BATCH if q == 1.0 else Sampling.POISSON)
    cal = calibrate(plan, eps, DELTA, accountant)
    assert cal.plan == plan
    assert cal.accountant == accountant
    assert cal.delta == DELTA
    assert cal.is_private
    # Never above the target, and tight: at most 2% of the budget left unused.
    assert cal.epsilon <= eps
    assert cal.epsilon >= 0.98 * eps
    # The reported epsilon is the one skdp's accountant gives for the calibrated run ...
    interval = cal.pld_interval if accountant == "pld" else FINE_PLD_INTERVAL
    reaccounted = epsilon_of(cal.dp_event, DELTA, accountant, pld_interval=interval)
    assert reaccounted == pytest.approx(cal.epsilon, rel=1e-12)
    # ... and an independent accountant confirms the target (a finer PLD is tighter).
    finer = cal.pld_interval / 4 if accountant == "pld" else 1e-4
    independent = fresh_epsilon(cal.dp_event, DELTA, accountant, finer)
    assert independent <= eps
    if accountant == "pld":
        assert independent <= cal.epsilon + 1e-6
    else:
        assert independent == pytest.approx(cal.epsilon, rel=1e-9)
    # A little less noise would break the target: the noise is (nearly) the smallest possible.
    assert epsilon_of(plan.dp_event(cal.noise_multiplier * 0.98), DELTA, accountant) > eps


@pytest.mark.parametrize("accountant", ["pld", "rdp"])
@pytest.mark.parametrize(("q", "steps", "eps"), FAST_GRID)
def test_calibration_meets_target_and_is_tight(q, steps, eps, accountant):
    check_calibration(q, steps, eps, accountant)


@pytest.mark.slow
@pytest.mark.parametrize("accountant", ["pld", "rdp"])
@pytest.mark.parametrize(("q", "steps", "eps"), SLOW_GRID)
def test_calibration_meets_target_and_is_tight_more(q, steps, eps, accountant):
    check_calibration(q, steps, eps, accountant)


@pytest.mark.parametrize("accountant", ["pld", "rdp"])
def test_calibration_monotone(accountant):
    plan = PrivacyPlan.constant(100, 0.05)
    sigmas = [calibrate(plan, eps, DELTA, accountant).noise_multiplier for eps in (0.3, 1.0)]
    assert sigmas[0] > sigmas[1]
    longer = calibrate(PrivacyPlan.constant(400, 0.05), 1.0, DELTA, accountant)
    assert longer.noise_multiplier > sigmas[1]
    looser_delta = calibrate(plan, 1.0, 1e-3, accountant)
    assert looser_delta.noise_multiplier < sigmas[1]


def test_calibration_of_a_typical_fit_is_fast():
    plan = PrivacyPlan.constant(640, 1024 / 32561)
    for accountant in ("pld", "rdp"):
        start = time.perf_counter()
        cal = calibrate.__wrapped__(plan, 1.0, DELTA, accountant)
        elapsed = time.perf_counter() - start
        assert elapsed < 1.0, f"{accountant} calibration took {elapsed:.2f} s"
        assert 0.98 <= cal.epsilon <= 1.0


def test_calibration_is_cached_and_deterministic():
    plan = PrivacyPlan.constant(30, 1.0, Sampling.FULL_BATCH)
    first = calibrate(plan, 1.0, DELTA, "pld")
    assert calibrate(plan, 1.0, DELTA, "pld") is first
    again = calibrate.__wrapped__(plan, 1.0, DELTA, "pld")
    assert again == first


@pytest.mark.parametrize(
    ("eps", "delta", "accountant"),
    [
        (0.0, DELTA, "pld"),
        (-1.0, DELTA, "pld"),
        (math.inf, DELTA, "pld"),
        (math.nan, DELTA, "pld"),
        (1.0, 0.0, "pld"),
        (1.0, 1.0, "pld"),
        (1.0, -1e-5, "rdp"),
        (1.0, math.nan, "rdp"),
        (1.0, DELTA, "prv"),
        (1.0, DELTA, "PLD"),
    ],
)
def test_calibrate_rejects_invalid_inputs(eps, delta, accountant):
    with pytest.raises(ValueError):
        calibrate.__wrapped__(PrivacyPlan.constant(10, 0.1), eps, delta, accountant)


def test_rdp_below_its_floor_is_refused_never_reported_as_zero():
    # RDP's conversion levels off near log(1/delta) / (largest order - 1), then its values
    # underflow and it reports epsilon 0: a fit at epsilon 0.001 on 32,561 rows was released
    # with privacy_spent_ (0.0, 1e-5). Below the floor the target is refused; PLD reaches it.
    plan = PrivacyPlan.constant(600, 0.032)
    with pytest.raises(UnreachablePrivacyTarget, match="accountant='pld'"):
        calibrate.__wrapped__(plan, 0.001, DELTA, "rdp")
    pld = calibrate.__wrapped__(plan, 0.001, DELTA, "pld")
    assert 0.0 < pld.epsilon <= 0.001
    above = calibrate.__wrapped__(plan, 0.01, DELTA, "rdp")
    assert 0.0 < above.epsilon <= 0.01


@pytest.mark.parametrize("accountant", ["pld", "rdp"])
def test_unreachable_target_raises(accountant):
    # Needs sigma ~ 5e7, far above the largest noise level searched (1e5).
    plan = PrivacyPlan.constant(10**6, 1.0, Sampling.FULL_BATCH)
    with pytest.raises(UnreachablePrivacyTarget):
        calibrate.__wrapped__(plan, 1e-4, DELTA, accountant)
    assert issubclass(UnreachablePrivacyTarget, ValueError)


def test_make_accountant_and_epsilon_of_reject_unknown_names():
    with pytest.raises(ValueError):
        make_accountant("moments")
    with pytest.raises(ValueError):
        epsilon_of(golden_event(), DELTA, "moments")


def test_non_private_event_has_infinite_epsilon():
    assert epsilon_of(dp_accounting.NonPrivateDpEvent(), DELTA, "pld") == math.inf
    cal = Calibration.non_private(PrivacyPlan.constant(10, 0.1))
    assert not cal.is_private
    assert isinstance(cal.dp_event, dp_accounting.NonPrivateDpEvent)
    assert (cal.epsilon, cal.delta, cal.noise_multiplier) == (math.inf, 0.0, 0.0)


# --- plans ------------------------------------------------------------------------------------


def test_full_batch_plan_is_a_plain_composed_gaussian():
    plan = PrivacyPlan.constant(40, 1.0, Sampling.FULL_BATCH)
    event = plan.dp_event(3.0)
    assert event == dp_accounting.SelfComposedDpEvent(dp_accounting.GaussianDpEvent(3.0), 40)
    # T Gaussian steps of noise multiplier sigma are one Gaussian of multiplier sigma/sqrt(T).
    single = dp_accounting.GaussianDpEvent(3.0 / math.sqrt(40))
    assert fresh_epsilon(event, DELTA, "rdp") == pytest.approx(
        fresh_epsilon(single, DELTA, "rdp"), rel=1e-6
    )
    assert epsilon_of(event, DELTA, "pld") == pytest.approx(
        epsilon_of(single, DELTA, "pld"), rel=2e-3
    )


def test_multi_group_plan_composes_its_groups():
    groups = (StepGroup(100, 0.02, 1.0), StepGroup(50, 0.05, 2.0), StepGroup(10, 1.0, 4.0))
    plan = PrivacyPlan(groups)
    assert plan.n_steps == 160
    sigma = 1.3
    assert plan.step_noise_multipliers(sigma) == [(100, 1.3), (50, 2.6), (10, 5.2)]
    event = plan.dp_event(sigma)
    assert isinstance(event, dp_accounting.ComposedDpEvent)
    expected = [
        dp_accounting.SelfComposedDpEvent(
            dp_accounting.PoissonSampledDpEvent(0.02, dp_accounting.GaussianDpEvent(1.3)), 100
        ),
        dp_accounting.SelfComposedDpEvent(
            dp_accounting.PoissonSampledDpEvent(0.05, dp_accounting.GaussianDpEvent(2.6)), 50
        ),
        dp_accounting.SelfComposedDpEvent(dp_accounting.GaussianDpEvent(5.2), 10),
    ]
    # relative noises are powers of two, so the products are exact
    assert list(event.events) == expected
    for name in ("rdp", "pld"):
        by_hand = (
            RdpAccountant()
            if name == "rdp"
            else PLDAccountant(value_discretization_interval=FINE_PLD_INTERVAL)
        )
        for part in expected:
            by_hand.compose(part)
        assert epsilon_of(event, DELTA, name) == pytest.approx(by_hand.get_epsilon(DELTA), rel=1e-6)
    # Each group costs something: dropping one lowers epsilon.
    assert epsilon_of(PrivacyPlan(groups[:2]).dp_event(sigma), DELTA, "rdp") < epsilon_of(
        event, DELTA, "rdp"
    )


def test_multi_group_plan_event_noise_levels():
    plan = PrivacyPlan((StepGroup(5, 0.1, 1.0), StepGroup(7, 0.1, 0.5)))
    event = plan.dp_event(2.0)
    first, second = event.events
    assert first.event.event.noise_multiplier == pytest.approx(2.0)
    assert second.event.event.noise_multiplier == pytest.approx(1.0)
    assert (first.count, second.count) == (5, 7)


def test_calibrating_a_multi_group_plan():
    plan = PrivacyPlan((StepGroup(100, 0.05, 1.0), StepGroup(50, 0.05, 1.5)))
    cal = calibrate(plan, 1.0, DELTA, "pld")
    assert 0.98 <= cal.epsilon <= 1.0
    assert fresh_epsilon(cal.dp_event, DELTA, "pld") <= 1.0


@pytest.mark.parametrize(
    "kwargs",
    [
        {"count": 0, "sampling_rate": 0.1},
        {"count": -3, "sampling_rate": 0.1},
        {"count": 10, "sampling_rate": 0.0},
        {"count": 10, "sampling_rate": -0.1},
        {"count": 10, "sampling_rate": 1.5},
        {"count": 10, "sampling_rate": math.nan},
        {"count": 10, "sampling_rate": 0.1, "relative_noise": 0.0},
        {"count": 10, "sampling_rate": 0.1, "relative_noise": -1.0},
        {"count": 10, "sampling_rate": 0.1, "relative_noise": math.inf},
        {"count": 10, "sampling_rate": 0.1, "relative_noise": math.nan},
    ],
)
def test_invalid_step_groups_raise(kwargs):
    with pytest.raises(ValueError):
        StepGroup(**kwargs)


def test_invalid_plans_raise():
    with pytest.raises(ValueError):
        PrivacyPlan(())
    plan = PrivacyPlan.constant(10, 0.1)
    for sigma in (0.0, -1.0, math.nan):
        with pytest.raises(ValueError):
            plan.dp_event(sigma)


def test_pld_is_tighter_than_rdp_for_dp_sgd():
    plan = PrivacyPlan.constant(500, 0.01)
    event = plan.dp_event(1.0)
    pld, rdp = epsilon_of(event, DELTA, "pld"), epsilon_of(event, DELTA, "rdp")
    assert pld < rdp
    # and calibration with PLD therefore needs less noise for the same target.
    assert (
        calibrate(plan, 1.0, DELTA, "pld").noise_multiplier
        < calibrate(plan, 1.0, DELTA, "rdp").noise_multiplier
    )


def test_replace_one_costs_more_than_add_or_remove():
    # Replacing a row moves the clipped sum by up to 2C, so the same noise proves less.
    event = PrivacyPlan.constant(100, 1.0, Sampling.FULL_BATCH).dp_event(5.0)
    add_remove = epsilon_of(event, DELTA, "pld", NeighboringRelation.ADD_OR_REMOVE_ONE)
    replace = epsilon_of(event, DELTA, "pld", NeighboringRelation.REPLACE_ONE)
    assert replace > 1.5 * add_remove


# --- estimators -------------------------------------------------------------------------------


def _classification_data(n=2000, d=4, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) / math.sqrt(d)
    y = (X @ rng.normal(size=d) + 0.3 * rng.normal(size=n) > 0).astype(int)
    return X, y


def _regression_data(n=2000, d=4, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) / math.sqrt(d)
    y = X @ rng.normal(size=d) * 0.5 + 0.1 * rng.normal(size=n)
    return X, y


ESTIMATORS = [
    pytest.param(DPLogisticRegression, _classification_data, id="logistic"),
    pytest.param(DPRidge, _regression_data, id="ridge"),
]


@pytest.mark.parametrize(("Estimator", "make_data"), ESTIMATORS)
@pytest.mark.parametrize("accountant", ["pld", "rdp"])
def test_estimator_guarantee_is_confirmed_by_a_fresh_accountant(Estimator, make_data, accountant):
    X, y = make_data()
    eps = 0.8
    est = Estimator(privacy=(eps, DELTA), max_iter=3, accountant=accountant, random_state=0)
    est.fit(X, y)
    spent_eps, spent_delta = est.privacy_spent_
    assert spent_delta == DELTA
    assert 0.98 * eps <= spent_eps <= eps
    assert est.noise_multiplier_ > 0
    # The event describes the run that actually happened (after DPRidge's scale search, a
    # Gaussian mechanism composed before the training: skdp/_public_scale.py).
    n = X.shape[0]
    plan = PrivacyPlan.constant(est.n_steps_, est.batch_size_ / n)
    if getattr(est, "max_row_norm", None) == "auto":
        from skdp._scale.public_scale import scale_noise_multiplier

        plan = plan.with_priors((scale_noise_multiplier(eps, DELTA, n, 1),))
    assert est.dp_event_ == plan.dp_event(est.noise_multiplier_)
    assert est.n_steps_ == 3 * round(n / est.batch_size_)
    independent = fresh_epsilon(est.dp_event_, DELTA, accountant, pld_interval=1e-5)
    if accountant == "pld":
        assert independent <= spent_eps + 1e-9
    else:
        assert independent == pytest.approx(spent_eps, rel=1e-9)


@pytest.mark.parametrize(("Estimator", "make_data"), ESTIMATORS)
def test_privacy_report_states_the_guarantee(Estimator, make_data):
    X, y = make_data(n=1000)
    est = Estimator(privacy=(1.0, DELTA), max_iter=2, random_state=0).fit(X, y)
    report = est.privacy_report()
    assert f"{est.privacy_spent_[0]:.4g}" in report
    assert f"{DELTA:.3g}" in report
    assert "noise multiplier" in report
    assert f"{est.noise_multiplier_:.4g}" in report
    assert "add or remove one row" in report
    assert "PLD" in report
    assert f"steps: {est.n_steps_}" in report
    rdp = Estimator(privacy=(1.0, DELTA), max_iter=2, accountant="rdp", random_state=0).fit(X, y)
    assert "RDP" in rdp.privacy_report()


@pytest.mark.parametrize(("Estimator", "make_data"), ESTIMATORS)
def test_non_private_fit_records_no_guarantee(Estimator, make_data):
    X, y = make_data(n=500)
    est = Estimator(privacy=(math.inf, 0), max_iter=2, random_state=0).fit(X, y)
    assert est.noise_multiplier_ == 0
    assert isinstance(est.dp_event_, dp_accounting.NonPrivateDpEvent)
    assert est.privacy_spent_ == (math.inf, 0.0)
    assert "NONE" in est.privacy_report()


def test_rdp_reads_replace_one_gaussian_events_as_pld_does():
    # dp_accounting 0.6.0's RDP accountant ignores the relation for Gaussian events (2.166 for
    # GaussianDpEvent(2) at 1e-5 either way) while its PLD accountant doubles the sensitivity
    # under replace-one (4.377); epsilon_of must never report the smaller reading.
    from skdp.accounting import epsilon_of
    from skdp.accounting._plan import NeighboringRelation

    event = dp_accounting.GaussianDpEvent(2.0)
    replace = NeighboringRelation.REPLACE_ONE
    pld = epsilon_of(event, 1e-5, "pld", replace)
    rdp = epsilon_of(event, 1e-5, "rdp", replace)
    assert pld == pytest.approx(4.377, abs=2e-3)
    assert pld <= rdp < 1.2 * pld
    assert epsilon_of(event, 1e-5, "rdp") == pytest.approx(2.166, abs=2e-3)
