"""Noise schedules: the shapes, their quantisation into exactly accounted step groups, the
calibration of a shaped plan, and the reference values of the spec (Hong, Wang & Zhou)."""

from __future__ import annotations

import numpy as np
import pytest
from dp_accounting.pld import PLDAccountant

from skdp.accounting import PrivacyPlan, calibrate
from skdp.accounting._schedules import (
    MAX_LEVELS,
    NOISE_SCHEDULES,
    adp_noise_shape,
    noise_shape,
    plan_from_shape,
    quantize_shape,
    zcdp_noise_schedule,
    zcdp_rho,
)

R = 0.3927037  # the paper's budget R = 2 rho for (4, 1e-8)-DP


def test_zcdp_conversion_matches_the_papers_number():
    rho = zcdp_rho(4.0, 1e-8)
    assert rho == pytest.approx(0.196352, abs=5e-7)
    assert 2 * rho == pytest.approx(0.392704, abs=5e-7)
    # Round trip through Bun & Steinke's conversion.
    assert rho + 2 * np.sqrt(rho * np.log(1e8)) == pytest.approx(4.0, rel=1e-12)


def test_spec_reference_schedules():
    t = np.arange(1, 11)
    dyn = zcdp_noise_schedule(0.9 ** ((t - 10) / 4), R / 2)  # the ERUB-optimal 'dyn', gamma=0.9
    expected = [5.71380, 5.56526, 5.42058, 5.27967, 5.14242, 5.00873, 4.87853, 4.75170,
                4.62818, 4.50786]
    np.testing.assert_allclose(dyn, expected, atol=1e-5)
    np.testing.assert_allclose(dyn[1:] / dyn[:-1], 0.9**0.25)
    exp = zcdp_noise_schedule(np.exp(-0.1 * t), R / 2)
    np.testing.assert_allclose(exp[[0, -1]], [8.57224, 3.48521], atol=1e-5)
    step = zcdp_noise_schedule(0.6 ** ((t - 1) // 3), R / 2)
    np.testing.assert_allclose(step, [11.9325] * 3 + [7.1595] * 3 + [4.2957] * 3 + [2.57742],
                               atol=1e-4)
    assert zcdp_noise_schedule(np.ones(100), R / 2)[0] == pytest.approx(15.9576, abs=1e-4)
    assert zcdp_noise_schedule(np.ones(10), R / 2)[0] == pytest.approx(5.046235, abs=1e-6)
    for sigma in (dyn, exp, step):  # the normalisation spends exactly the budget
        assert np.sum(sigma**-2.0) == pytest.approx(R, rel=1e-9)


@pytest.mark.parametrize("schedule", NOISE_SCHEDULES)
def test_shapes_start_at_one_end_at_the_decay_and_never_increase(schedule):
    shape = noise_shape(schedule, n_steps=200, steps_per_epoch=20, noise_decay=0.25)
    assert shape[0] == pytest.approx(1.0)
    assert shape[-1] == pytest.approx(1.0 if schedule == "constant" else 0.25)
    assert np.all(np.diff(shape) <= 1e-12)
    if schedule == "step_decay":  # constant within an epoch
        assert np.all(shape.reshape(10, 20) == shape.reshape(10, 20)[:, :1])


def test_decay_one_and_single_steps_are_constant():
    for schedule in NOISE_SCHEDULES:
        assert np.all(noise_shape(schedule, 50, 5, 1.0) == 1.0)
        assert noise_shape(schedule, 1, 1, 0.5).tolist() == [1.0]


@pytest.mark.parametrize("bad", [0.0, -0.5, 1.5, float("nan")])
def test_bad_decay_is_refused(bad):
    with pytest.raises(ValueError, match="noise_decay"):
        noise_shape("exp_decay", 10, 2, bad)


def test_unknown_schedule_is_refused():
    with pytest.raises(ValueError, match="noise_schedule must be one of"):
        noise_shape("cosine", 10, 2, 0.5)


@pytest.mark.parametrize("schedule", NOISE_SCHEDULES[1:])
def test_quantisation_rounds_down_onto_few_levels(schedule):
    shape = noise_shape(schedule, 1000, 50, 0.1)
    levels = quantize_shape(shape)
    assert np.all(levels <= shape * (1 + 1e-12))  # never more noise than asked: exact accounting
    assert len(np.unique(levels)) <= MAX_LEVELS
    ratio = (shape.max() / shape.min()) ** (1 / (MAX_LEVELS - 1))
    assert np.all(levels >= shape / ratio * (1 - 1e-12))  # and at most one grid step below


def test_plan_groups_cover_every_step_in_order():
    levels = quantize_shape(noise_shape("step_decay", 60, 10, 0.5))
    plan = plan_from_shape(levels, 0.01)
    assert plan.n_steps == 60
    expanded = np.concatenate([[g.relative_noise] * g.count for g in plan.groups])
    np.testing.assert_array_equal(expanded, levels)
    assert len(plan.groups) == 6  # one per epoch
    constant = plan_from_shape(np.ones(60), 0.01)
    assert constant == PrivacyPlan.constant(60, 0.01)


# Re-accounting a 16-level event with a PLD ten times finer than the calibration's takes ~40 s:
# the default run re-accounts the sentinel at the calibration's own resolution, the slow suite
# checks every schedule against the finer PLD.
@pytest.mark.parametrize(
    "schedule, interval",
    [
        ("exp_decay", 1e-4),
        pytest.param("exp_decay", 1e-5, marks=pytest.mark.slow),
        pytest.param("poly_decay", 1e-5, marks=pytest.mark.slow),
    ],
)
def test_calibrated_schedule_spends_the_budget_and_never_more(schedule, interval):
    levels = quantize_shape(noise_shape(schedule, 300, 30, 0.3))
    plan = plan_from_shape(levels, 30 / 3000)
    calibration = calibrate(plan, 1.0, 1e-5, "pld")
    assert 0.995 <= calibration.epsilon <= 1.0
    reaccounted = PLDAccountant(value_discretization_interval=interval)
    reaccounted.compose(calibration.dp_event)
    assert reaccounted.get_epsilon(1e-5) <= calibration.epsilon * (1 + 1e-3)
    # The first steps get more noise than the constant schedule, the last ones less.
    constant = calibrate(PrivacyPlan.constant(300, 30 / 3000), 1.0, 1e-5, "pld")
    first = calibration.noise_multiplier * levels[0]
    last = calibration.noise_multiplier * levels[-1]
    assert first > constant.noise_multiplier > last


def test_adp_shape_is_constant_for_constant_steps_and_follows_inverse_sqrt():
    assert np.all(adp_noise_shape(np.full(7, 0.3)) == 1.0)
    rates = 1.0 / np.sqrt(20 + np.arange(100))
    shape = adp_noise_shape(rates)
    np.testing.assert_allclose(shape**2 * rates, rates[0])
    assert np.all(np.diff(shape) > 0)  # smaller steps get more noise
    with pytest.raises(ValueError, match="positive"):
        adp_noise_shape(np.array([0.1, 0.0]))
