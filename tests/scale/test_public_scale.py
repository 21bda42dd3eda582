"""Scale-free training of the linear models: max_row_norm='auto', eta0='auto', max_iter='auto'.

The hyperparameters must be public functions (n, d, privacy, public bounds), the scale search
must be accounted in the fit's guarantee, and the fit must not depend on the data's units.
"""

from __future__ import annotations

import dataclasses
import math
import warnings

import dp_accounting
import numpy as np
import pytest
from dp_accounting.pld import PLDAccountant
from sklearn.linear_model import Ridge

from skdp import PrivacyWarning
from skdp._defaults.linear import auto_step_size, resolve_epochs
from skdp._scale.public_scale import (
    ROW_MEDIAN_NORM,
    SCALE_SHARES,
    WIDEN_TO,
    centre_noise_multiplier,
    centre_searches_rows,
    estimate_centre,
    estimate_scale,
    scale_noise_multiplier,
    scale_search_feasible,
    scale_search_needs,
    widen_range,
)
from skdp.linear_model import DPLogisticRegression, DPRidge
from skdp.preprocessing._base import calibrate_gaussian

AUTO = {"max_row_norm": "auto", "eta0": "auto", "max_iter": "auto"}


def _classification(n=3000, d=8, scale=1.0, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    y = (X @ rng.normal(size=d) + 0.3 * rng.normal(size=n) > 0).astype(int)
    return X * scale, y


def _regression(n=3000, d=5, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    return X, 3.0 * X @ rng.normal(size=d) + rng.normal(size=n)


def _gaussians(event):
    """Every GaussianDpEvent's noise multiplier inside ``event``."""
    if isinstance(event, dp_accounting.GaussianDpEvent):
        return [event.noise_multiplier]
    if isinstance(event, dp_accounting.ComposedDpEvent):
        return [z for e in event.events for z in _gaussians(e)]
    return []


def test_hyperparameters_depend_on_public_quantities_only():
    # Same n, d, privacy and public bound; different values: same step size and epochs.
    X1, y1 = _classification(seed=1)
    X2, y2 = _classification(seed=2, scale=7.0)
    params = dict(privacy=(1.0, 1e-5), max_row_norm=3.0, eta0="auto", max_iter="auto",
                  random_state=0)
    a = DPLogisticRegression(**params).fit(X1, y1)
    b = DPLogisticRegression(**params).fit(X2, y2)
    assert a.learning_rate_ == b.learning_rate_
    assert (a.n_iter_, a.batch_size_, a.noise_multiplier_) == (
        b.n_iter_, b.batch_size_, b.noise_multiplier_)
    # The defaults of diff2 (full batch: the noise-damped rule) and of the MLP ('auto' step).
    from skdp.neural_network import DPMLPClassifier

    for make in (lambda: DPLogisticRegression(optimizer="diff2", random_state=0),
                 lambda: DPMLPClassifier(hidden_layer_sizes=(4,), max_iter=2, random_state=0)):
        a, b = make().fit(X1, y1), make().fit(X2, y2)
        assert (a.learning_rate_, a.n_steps_, a.noise_multiplier_) == (
            b.learning_rate_, b.n_steps_, b.noise_multiplier_)


def test_user_scale_step_is_damped_by_the_public_noise_per_coordinate():
    # DPLogisticRegression's default on the user's scale: 4.0 / (1 + a z / b), with the
    # calibrated noise multiplier z and the batch size b; the same for data of the same shape
    # and any values, and smaller where the noise is larger.
    from skdp._defaults.linear import USER_SCALE_DAMPING

    X1, y1 = _classification(n=400, seed=1)
    X2, y2 = _classification(n=400, seed=2, scale=7.0)
    steps = {}
    for eps in (0.5, 4.0):
        a = DPLogisticRegression(privacy=(eps, 1e-5), random_state=0).fit(X1, y1)
        b = DPLogisticRegression(privacy=(eps, 1e-5), random_state=1).fit(X2, y2)
        expected = 4.0 / (1.0 + USER_SCALE_DAMPING * a.noise_multiplier_ / a.batch_size_)
        assert a.learning_rate_ == pytest.approx(expected, rel=1e-12)
        assert b.learning_rate_ == a.learning_rate_
        steps[eps] = a.learning_rate_
    assert steps[0.5] < steps[4.0] < 4.0
    # Without privacy nothing is clipped: the measured unclipped step.
    plain = DPLogisticRegression(privacy=(math.inf, 0.0), random_state=0).fit(X1, y1)
    assert plain.learning_rate_ == 2.0
    # An explicit eta0 is used as given.
    given = DPLogisticRegression(privacy=(0.5, 1e-5), eta0=2.0, random_state=0).fit(X1, y1)
    assert given.learning_rate_ == 2.0


def test_damped_step_helps_small_data():
    # Sentinel of the damping study (benchmarks/tune_user_scale_damping.py): on wine (133
    # training rows) at epsilon 1 the damped default beats the former undamped step 2.0 by
    # about 8 points (10 seeds there); here 6 seeds, a margin of 3 points.
    from sklearn.datasets import load_wine
    from sklearn.model_selection import train_test_split
    from sklearn.preprocessing import StandardScaler

    X, y = load_wine(return_X_y=True)
    X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.25, random_state=0)
    scaler = StandardScaler().fit(X_train)  # public data: a test fixture, not a private fit
    X_train, X_test = scaler.transform(X_train), scaler.transform(X_test)

    def mean_score(**params):
        return np.mean([
            DPLogisticRegression(privacy=(1.0, 1e-5), random_state=seed, **params)
            .fit(X_train, y_train).score(X_test, y_test)
            for seed in range(6)
        ])

    assert mean_score() > mean_score(eta0=2.0) + 0.03


def test_step_size_shrinks_with_noise_and_row_scale():
    from skdp._defaults import linear as _defaults

    base = auto_step_size(1.0, True, 0.0, 10, 100, "logistic")
    assert base == pytest.approx(_defaults.STEP_SCALE["classification"] / (0.25 * 2))
    assert auto_step_size(1.0, True, 5.0, 10, 100, "logistic") < base
    assert auto_step_size(2.0, True, 0.0, 10, 100, "logistic") < base
    # The squared loss is 4x as curved as the binary log-loss, and has its own constants.
    squared = auto_step_size(1.0, True, 0.0, 10, 100, "squared")
    assert squared == pytest.approx(_defaults.STEP_SCALE["regression"] / 2)


def test_epochs_are_enough_for_small_data_and_capped():
    assert resolve_epochs(7, 100, 10) == 7
    assert resolve_epochs("auto", 100_000, 3125) == 32  # 32 steps/epoch -> 1000 steps
    assert resolve_epochs("auto", 10_000_000, 4096) == 20
    assert resolve_epochs("auto", 64, 64) == 1000  # full batch: one step per epoch
    # An estimator's measured mini-batch epochs replace the rule, except at full batch.
    assert resolve_epochs("auto", 100_000, 3125, mini_batch_epochs=20) == 20
    assert resolve_epochs("auto", 64, 64, mini_batch_epochs=20) == 1000


def test_logistic_auto_epochs_are_20_minibatch_and_1000_full_batch_rounds():
    X, y = _classification(n=640)
    sgd = DPLogisticRegression(privacy=(1.0, 1e-5), random_state=0).fit(X, y)
    assert (sgd.n_iter_, sgd.n_steps_) == (20, 20 * 10)  # batch 64: 10 steps per epoch
    diff2 = DPLogisticRegression(privacy=(1.0, 1e-5), optimizer="diff2", random_state=0).fit(X, y)
    assert diff2.n_steps_ == 1000
    assert DPLogisticRegression(max_iter=7, optimizer="diff2").fit(X, y).n_steps_ == 7


def test_epochs_grow_with_epsilon_only_where_the_noise_is_small():
    from skdp._defaults.linear import MAX_GROWN_EPOCHS, QUIET_NOISE, grown_epochs

    assert grown_epochs(20, 1.0, 0.01) == 20
    assert grown_epochs(20, math.inf, 0.0) == MAX_GROWN_EPOCHS  # no noise: the limit
    assert grown_epochs(20, 4.0, 0.01) == round(20 * 4.0**0.8)
    assert grown_epochs(20, 4.0, QUIET_NOISE * 1.01) == 20  # noisy runs keep the default
    assert grown_epochs(20, 1e6, 0.0) == MAX_GROWN_EPOCHS
    X, y = _classification(n=20_000)
    assert DPLogisticRegression(privacy=(4.0, 1e-5), random_state=0).fit(X, y).n_iter_ == 61
    assert DPLogisticRegression(privacy=(4.0, 1e-5), max_iter=20).fit(X, y).n_iter_ == 20
    small_X, small_y = _classification(n=300, d=40)  # batch 64, 41 parameters: nu > 0.1
    assert DPLogisticRegression(privacy=(4.0, 1e-5)).fit(small_X, small_y).n_iter_ == 20


def test_scale_search_is_in_the_guarantee():
    X, y = _classification()
    model = DPLogisticRegression(privacy=(1.0, 1e-5), random_state=0, **AUTO).fit(X, y)
    search = scale_noise_multiplier(1.0, 1e-5, len(X), None)
    assert search == pytest.approx(
        calibrate_gaussian(1.0, 1e-5).noise_multiplier / np.sqrt(SCALE_SHARES[0]))
    assert search in _gaussians(model.dp_event_)  # composed with the training
    accountant = PLDAccountant(value_discretization_interval=1e-4)
    accountant.compose(model.dp_event_)
    assert accountant.get_epsilon(1e-5) <= 1.0 + 1e-9
    assert model.privacy_spent_[0] <= 1.0
    assert "max_row_norm='auto'" in model.privacy_report()
    # The training got the rest: more noise than without the search, by ~1/sqrt(0.95).
    plain = DPLogisticRegression(privacy=(1.0, 1e-5), random_state=0, max_row_norm=3.0,
                                 eta0="auto", max_iter=model.n_iter_).fit(X, y)
    assert plain.n_steps_ == model.n_steps_
    assert 1.0 < model.noise_multiplier_ / plain.noise_multiplier_ < 1.1


def test_found_bound_is_near_the_quantile_and_units_do_not_matter():
    X, y = _classification(n=20_000)
    norms = np.linalg.norm(X, axis=1)
    fits = []
    for scale in (1.0, 1000.0):
        model = DPLogisticRegression(privacy=(1.0, 1e-5), random_state=3, **AUTO).fit(
            X * scale, y)
        q = np.mean(norms * scale <= model.row_norm_bound_)
        assert 0.9 < q < 0.99
        fits.append(model.predict(X * scale))
    assert np.mean(fits[0] == fits[1]) > 0.97


def test_ridge_puts_targets_on_a_public_scale():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(5000, 5)) * 0.01  # tiny features, as scikit-learn's diabetes
    y = 150.0 + 5000.0 * X @ rng.normal(size=5) + rng.normal(size=5000)
    from sklearn.linear_model import Ridge

    # alpha is on the user's scale, as in scikit-learn: 1.0 would be strong on features this small.
    reference = Ridge(alpha=1e-3).fit(X, y).score(X, y)
    model = DPRidge(privacy=(2.0, 1e-5), alpha=1e-3, random_state=0, **AUTO).fit(X, y)
    assert model.score(X, y) > reference - 0.05
    former = DPRidge(privacy=(2.0, 1e-5), random_state=0, max_row_norm=None, eta0=0.5,
                     max_iter=20).fit(X, y)
    assert former.score(X, y) < 0.0  # what the former defaults gave on such data
    assert DPRidge().max_row_norm == "auto"  # the default


def test_infeasible_search_warns_and_spends_nothing_on_it():
    X, y = _classification(n=150)
    assert scale_noise_multiplier(0.5, 1e-5, 150, None) is None
    with pytest.warns(PrivacyWarning, match="too small to find a public scale"):
        model = DPLogisticRegression(privacy=(0.5, 1e-5), random_state=0, **AUTO).fit(X, y)
    assert not hasattr(model, "row_norm_bound_")
    assert _gaussians(model.dp_event_) == []  # the training alone: nothing spent on a search


@pytest.mark.parametrize("outputs", [None, 1, 3])
def test_infeasible_search_warning_names_the_rows_and_epsilon_it_needs(outputs):
    # The warning's numbers are the thresholds themselves: the fewest rows and (rounded up to
    # two digits) the smallest epsilon at which the search becomes feasible.
    for epsilon in (0.1, 1.0):
        rows, least = scale_search_needs(epsilon, 1e-5, 300, outputs)
        assert scale_noise_multiplier(epsilon, 1e-5, rows, outputs) is not None
        assert scale_noise_multiplier(epsilon, 1e-5, rows - 1, outputs) is None
        assert scale_noise_multiplier(least, 1e-5, 300, outputs) is not None
        assert scale_noise_multiplier(least * 0.9, 1e-5, 300, outputs) is None
    if outputs == 3:
        return
    X, y = _classification(n=300)
    if outputs == 1:
        model, y = DPRidge(privacy=(1.0, 1e-5), random_state=0), X @ np.ones(X.shape[1])
    else:
        model = DPLogisticRegression(privacy=(1.0, 1e-5), random_state=0, **AUTO)
    rows, least = scale_search_needs(1.0, 1e-5, 300, outputs)
    with pytest.warns(PrivacyWarning, match=rf"about {rows} rows at epsilon=1, or "
                      rf"epsilon >= {least:g} with 300 rows"):
        model.fit(X, y)


def test_share_grows_for_small_data_and_exact_ranges_without_privacy():
    whole = calibrate_gaussian(1.0, 1e-5).noise_multiplier
    large = scale_noise_multiplier(1.0, 1e-5, 100_000, 1)
    small = scale_noise_multiplier(1.0, 1e-5, 2_000, 1)
    assert large == pytest.approx(whole / np.sqrt(SCALE_SHARES[0]))
    assert small < large  # a larger share of the budget where the search needs it
    assert scale_noise_multiplier(float("inf"), 0.0, 10, 1) == 0.0
    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(4000, 3)), rng.normal(size=(4000, 1))
    exact = estimate_scale(X, y, 0.0, np.random.default_rng(1), "test")
    assert exact.row_bound == pytest.approx(np.quantile(np.linalg.norm(X, axis=1), 0.98))
    assert exact.target_center - exact.target_halfwidth == pytest.approx(np.quantile(y, 0.02))
    # Without privacy nothing is clipped: the scale only sets the units.
    assert not exact.clips
    np.testing.assert_allclose(exact.targets(y), (y - exact.target_center) / exact.target_halfwidth)
    assert np.abs(exact.targets(y)).max() > 1.0
    np.testing.assert_allclose(exact.rows(X), X / exact.row_bound)
    # Under privacy the same scale clips rows and targets (their sensitivity needs it).
    private = dataclasses.replace(exact, noise_multiplier=1.0, private=True)
    assert private.clips
    assert np.abs(private.targets(y)).max() == pytest.approx(1.0)
    assert np.linalg.norm(private.rows(X), axis=1).max() <= 1.0 + 1e-6


def test_non_private_scale_free_ridge_reaches_ridge():
    # No noise and no clipping: enough epochs reproduce the ordinary least-squares fit.
    rng = np.random.default_rng(0)
    X = rng.normal(size=(3000, 5)) * np.array([1.0, 10.0, 100.0, 0.1, 3.0])
    y = X @ rng.normal(size=5) + 1000.0 + rng.standard_t(3, size=3000) * 50.0
    model = DPRidge(privacy=(np.inf, 0.0), random_state=0).fit(X, y)
    assert model.n_iter_ == 300
    reference = Ridge().fit(X, y)
    assert model.score(X, y) == pytest.approx(reference.score(X, y), abs=5e-3)


def test_search_finds_the_planned_quantiles():
    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(50_000, 4)), 3.0 + 2.0 * rng.normal(size=(50_000, 1))
    noise = scale_noise_multiplier(1.0, 1e-5, len(X), 1)
    found = estimate_scale(X, y, noise, np.random.default_rng(1), "test")
    norms = np.linalg.norm(X, axis=1)
    assert 0.96 < np.mean(norms <= found.row_bound) < 0.995
    low = found.target_center - found.target_halfwidth
    high = found.target_center + found.target_halfwidth
    assert 0.005 < np.mean(y <= low) < 0.04 and 0.96 < np.mean(y <= high) < 0.995


def test_widen_range_maps_a_normal_shapes_quantiles():
    from scipy.stats import norm

    # For a normal distribution, the range at (0.25, 0.75) widened to 0.05 is its (0.05, 0.95).
    mu, sigma = 6.0, 0.7
    low, high = widen_range(norm.ppf([0.25], mu, sigma), norm.ppf([0.75], mu, sigma), 0.25, 0.05)
    np.testing.assert_allclose([low[0], high[0]], norm.ppf([0.05, 0.95], mu, sigma), rtol=1e-12)
    # Never narrowed: a range located at or beyond the wanted quantiles is kept.
    np.testing.assert_array_equal(widen_range([1.0], [3.0], 0.02, 0.05), ([1.0], [3.0]))
    # Crossed ends (a noisy search) are not widened beyond their centre.
    np.testing.assert_array_equal(widen_range([3.0], [1.0], 0.25, 0.05), ([2.0], [2.0]))


def test_scale_found_at_inner_quantiles_is_widened():
    rng = np.random.default_rng(0)
    n = 3000
    X, y = rng.normal(size=(n, 4)), 6.0 + 0.7 * rng.normal(size=(n, 1))
    noise = scale_noise_multiplier(0.5, 1e-5, n, 1)  # locates only inner quantiles at this n
    found = estimate_scale(X, y, noise, np.random.default_rng(1), "test")
    assert found.widened_to == WIDEN_TO
    low = float(found.target_center[0] - found.target_halfwidth[0])
    high = float(found.target_center[0] + found.target_halfwidth[0])
    # Near the 5% / 95% quantiles of y, not its quartiles (which clip half of the targets).
    assert 0.01 < np.mean(y <= low) < 0.12 and 0.88 < np.mean(y <= high) < 0.99
    assert 0.85 < np.mean(np.linalg.norm(X, axis=1) <= found.row_bound) < 0.995
    assert "widened" in " ".join(found.facts("test"))
    # With enough rows the planned quantiles are located: nothing is widened.
    big = estimate_scale(np.tile(X, (20, 1)), np.tile(y, (20, 1)),
                         scale_noise_multiplier(1.0, 1e-5, 20 * n, 1), np.random.default_rng(1),
                         "test")
    assert big.widened_to is None


def test_widening_helps_a_fit_whose_scale_was_found_at_inner_quantiles(monkeypatch):
    # Strong signal, targets far from 0: clipping them to their interquartile range biases
    # every prediction towards the centre (measured on CPS1988 wages: R^2 0.35 -> 0.44).
    import skdp._scale.public_scale as public_scale

    rng = np.random.default_rng(3)
    n = 4000
    X = rng.normal(size=(2 * n, 5))
    y = 6.0 + X @ np.array([0.5, -0.4, 0.3, 0.2, -0.1]) + 0.2 * rng.normal(size=2 * n)

    def r2(widen_to):
        monkeypatch.setattr(public_scale, "WIDEN_TO", widen_to)
        return np.mean([DPRidge(privacy=(0.5, 1e-5), random_state=seed).fit(X[:n], y[:n])
                        .score(X[n:], y[n:]) for seed in range(2)])

    assert r2(WIDEN_TO) > r2(1.0) + 0.05  # 1.0: never widened, the former behaviour


def test_auto_inside_private_pipeline_composes_with_preprocessing():
    from skdp.pipeline import make_private_pipeline
    from skdp.preprocessing import DPStandardScaler

    X, y = _classification(n=4000)
    pipe = make_private_pipeline(
        DPStandardScaler(bounds=(-4.0, 4.0)),
        DPLogisticRegression(random_state=0, **AUTO),
        privacy=(1.0, 1e-5),
    ).fit(X, y)
    assert pipe.score(X, y) > 0.8
    model = pipe[-1]
    assert scale_noise_multiplier(1.0, 1e-5, len(X), None) in _gaussians(model.dp_event_)


def test_ssp_on_the_public_scale():
    # AdaSSP needs bounds: 'auto' supplies them by the same accounted search.
    rng = np.random.default_rng(0)
    X = rng.normal(size=(20_000, 5)) * 0.01
    y = 150.0 + 5000.0 * X @ rng.normal(size=5) + rng.normal(size=20_000)
    model = DPRidge(privacy=(1.0, 1e-5), optimizer="ssp", max_row_norm="auto", alpha=1e-3,
                    random_state=0).fit(X, y)
    assert model.score(X, y) > 0.99
    search = scale_noise_multiplier(1.0, 1e-5, len(X), 1)
    assert search in _gaussians(model.dp_event_)
    accountant = PLDAccountant(value_discretization_interval=1e-4)
    assert accountant.compose(model.dp_event_).get_epsilon(1e-5) <= 1.0 + 1e-9
    # Refused with what would make it feasible, and without the SGD path's warning that the
    # fit "trains on the data as given" (it does not train at all).
    rows, least = scale_search_needs(0.5, 1e-5, 100, 1)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with pytest.raises(ValueError, match=rf"cannot find a public scale .*about {rows} rows "
                           rf"at epsilon=0.5, or epsilon >= {least:g} with 100 rows"):
            DPRidge(privacy=(0.5, 1e-5), optimizer="ssp", max_row_norm="auto").fit(X[:100],
                                                                                  y[:100])
    assert not [w for w in caught if "as given" in str(w.message)]


def test_the_search_is_noisy_at_finite_epsilon():
    # A search that ignored its noise would return the exact quantile every time: a broken
    # mechanism this catches. At this n the noise moves the bound by a few grid cells.
    rng = np.random.default_rng(0)
    X = rng.normal(size=(3000, 4))
    noise = scale_noise_multiplier(1.0, 1e-5, len(X), None)
    bounds = {
        estimate_scale(X, None, noise, np.random.default_rng(seed), "test").row_bound
        for seed in range(20)
    }
    exact = estimate_scale(X, None, 0.0, np.random.default_rng(0), "test").row_bound
    assert len(bounds) > 5
    assert all(abs(b - exact) / exact < 0.3 for b in bounds)


def test_auto_batch_grows_with_the_number_of_parameters_on_small_data():
    # The noise on a mean gradient grows as sqrt(p) / batch: a linear model with many
    # parameters on small data gets at least PARAM_BATCH_FACTOR sqrt(p) rows per batch.
    from skdp._defaults.sgd import PARAM_BATCH_FACTOR
    from skdp._fit.sgd import resolve_batch_size

    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(1347, 64)), rng.integers(0, 10, size=1347)
    model = DPLogisticRegression(random_state=0, max_iter=1).fit(X, y)
    expected = math.ceil(PARAM_BATCH_FACTOR * math.sqrt(65 * 10))
    assert model.batch_size_ == expected > 64
    # Few parameters: the floor of 64 rows; large data: n / 32, whatever the parameters.
    assert resolve_batch_size("auto", 1347, None, n_params=31) == 64
    assert resolve_batch_size("auto", 32561, None, n_params=106) == 1018
    assert resolve_batch_size("auto", 100, None, n_params=10**6) == 100  # never above n
    assert resolve_batch_size(50, 1347, None, n_params=650) == 50  # an int is the user's


def test_public_target_range_scales_small_data_the_search_cannot():
    # 331 rows at epsilon 1: the search for a scale is infeasible; the fit finds only the
    # targets' median and is about as good as predicting it (raw targets in [25, 346] fitted
    # as given scored R^2 -2.7). The documented range puts them on a scale and does better.
    from sklearn.datasets import load_diabetes

    X, y = load_diabetes(return_X_y=True)
    X_train, y_train, X_test, y_test = X[:331], y[:331], X[331:], y[331:]
    scores = {}
    for bound in (None, (25, 346)):
        with pytest.warns(PrivacyWarning, match="too small to find a public scale"):
            model = DPRidge(privacy=(1.0, 1e-5), random_state=0, target_bound=bound)
            model.fit(X_train, y_train)
        scores[bound] = model.score(X_test, y_test)
    assert -0.3 < scores[None] < 0.05
    assert scores[(25, 346)] > scores[None] + 0.1
    assert "public range [25, 346]" in model.privacy_report()


def test_public_target_range_leaves_only_the_rows_to_search():
    X, y = _regression(n=20_000)
    searched = DPRidge(random_state=0).fit(X, y)
    given = DPRidge(random_state=0, target_bound=(-50.0, 50.0)).fit(X, y)
    assert _gaussians(searched.dp_event_)[-1] == pytest.approx(
        scale_noise_multiplier(1.0, 1e-5, 20_000, 1))
    assert _gaussians(given.dp_event_)[-1] == pytest.approx(
        scale_noise_multiplier(1.0, 1e-5, 20_000, None))
    assert given.score(X, y) > 0.9


@pytest.mark.parametrize("optimizer", ["noisy_sgd", "ssp"])
@pytest.mark.parametrize("bound", [None, (0.0, 25.0)])
def test_no_intercept_means_no_centring(optimizer, bound):
    # Centring the targets on their range would hand the model an intercept.
    rng = np.random.default_rng(0)
    X = rng.normal(size=(5000, 3))
    y = X @ np.array([1.0, 2.0, 3.0]) + 10.0
    model = DPRidge(fit_intercept=False, optimizer=optimizer, target_bound=bound,
                    random_state=0).fit(X, y)
    assert model.intercept_ == 0.0
    with_intercept = DPRidge(optimizer=optimizer, target_bound=bound, random_state=0).fit(X, y)
    assert with_intercept.intercept_ == pytest.approx(10.0, abs=0.5)


def test_ssp_with_a_public_target_range_and_row_bound():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(5000, 3))
    y = X @ np.array([1.0, 2.0, 3.0]) + 10.0
    model = DPRidge(optimizer="ssp", max_row_norm=4.0, target_bound=(0.0, 25.0),
                    random_state=0).fit(X, y)
    assert model.score(X, y) > 0.99
    assert model.intercept_ == pytest.approx(10.0, abs=0.5)


@pytest.mark.parametrize("bound", [(1.0, 1.0), (3.0, 1.0), (1.0, 2.0, 3.0), (0.0, np.inf), "a"])
def test_malformed_target_range_is_refused_before_any_charge(bound, tmp_path):
    from skdp import PrivacyBudget

    budget = PrivacyBudget(epsilon=5.0, delta=1e-5, path=tmp_path / "ledger.db")
    X, y = _regression(n=500)
    with pytest.raises((ValueError, TypeError), match="target_bound"):
        DPRidge(target_bound=bound, budget=budget).fit(X, y)
    assert budget.history() == []


@pytest.mark.parametrize("max_row_norm", ["auto", None])
def test_mlp_regressor_takes_a_public_target_range(max_row_norm):
    from skdp.neural_network import DPMLPRegressor

    rng = np.random.default_rng(0)
    X = rng.normal(size=(4000, 4))
    y = 200.0 + 40.0 * np.tanh(X[:, 0]) + 20.0 * X[:, 1] + rng.normal(size=4000)
    model = DPMLPRegressor(privacy=(4.0, 1e-5), target_bound=(100.0, 300.0), random_state=0,
                           max_row_norm=max_row_norm, hidden_layer_sizes=(16,))
    model.fit(X, y)
    assert "public range [100, 300]" in model.privacy_report()
    assert hasattr(model, "row_norm_bound_") == (max_row_norm == "auto")
    assert model.score(X, y) > 0.5  # in the original units: the range was folded back
    with pytest.raises(ValueError, match="target_bound"):
        DPMLPRegressor(target_bound=(3.0, 1.0)).fit(X, y)


def test_centre_search_is_planned_where_the_full_search_is_not():
    # Public quantities only: diabetes' 331 rows at epsilon 0.5-1 get the median search,
    # at 0.1 nothing, and enough rows the full search.
    for epsilon in (0.5, 1.0):
        assert scale_noise_multiplier(epsilon, 1e-5, 331, 1) is None
        noise = centre_noise_multiplier(epsilon, 1e-5, 331, 1)
        # the fit tells them apart
        assert noise is not None and not scale_search_feasible(noise, 331, 1)
    assert centre_noise_multiplier(0.1, 1e-5, 331, 1) is None
    assert scale_noise_multiplier(1.0, 1e-5, 20_000, 1) is not None
    # Cheaper than the full search: feasible with far fewer rows.
    assert centre_noise_multiplier(1.0, 1e-5, 200, 1) is not None


@pytest.mark.parametrize("epsilon, with_rows", [(1.0, True), (0.5, False)])
def test_centre_estimate_is_noisy_and_near_the_median(epsilon, with_rows):
    # 331 rows: at epsilon 1 the medians of the row norms and of y, at 0.5 that of y alone.
    rng = np.random.default_rng(0)
    X, targets = rng.normal(size=(331, 4)) * 3.0, rng.normal(150.0, 50.0, size=(331, 1))
    noise = centre_noise_multiplier(epsilon, 1e-5, 331, 1)
    assert centre_searches_rows(noise, 331, 1) is with_rows
    scales = [estimate_centre(X, targets, noise, np.random.default_rng(s), "t") for s in range(20)]
    centres = [scale.target_center[0] for scale in scales]
    ranks = [np.mean(targets <= c) for c in centres]
    assert len(set(np.round(centres, 9))) > 10  # noisy: a broken mechanism would repeat one
    assert 0.1 <= np.median(ranks) <= 0.9 and np.mean([0.1 <= r <= 0.9 for r in ranks]) >= 0.9
    norms = np.linalg.norm(X, axis=1)
    assert all(s.row_bound is None for s in scales)  # rows are never clipped to a median
    if with_rows:  # rows divided by their (noisy) median norm over ROW_MEDIAN_NORM
        row_ranks = [np.mean(norms <= s.row_divisor * ROW_MEDIAN_NORM) for s in scales]
        assert np.mean([0.1 <= r <= 0.9 for r in row_ranks]) >= 0.9
    else:
        assert all(s.row_divisor is None for s in scales)
    exact = estimate_centre(X, targets, 1e-9, np.random.default_rng(0), "t")
    assert abs(exact.target_center[0] - np.median(targets)) < 1.0
    if with_rows:
        assert exact.row_divisor == pytest.approx(np.median(norms) / ROW_MEDIAN_NORM, rel=1e-3)
        scaled = exact.rows(X)
        assert np.median(np.linalg.norm(scaled, axis=1)) == pytest.approx(ROW_MEDIAN_NORM,
                                                                          rel=1e-3)
        assert np.allclose(scaled * exact.row_divisor, X)  # divided, not clipped


@pytest.mark.parametrize("estimator", ["ridge", "mlp"])
def test_small_data_regression_is_centred_on_a_private_median(estimator):
    # 331 rows with targets around 150 (diabetes' shape): too few for a scale, enough for the
    # median. Without it the fit predicted near 0 (R^2 -2.7 on diabetes at epsilon 1).
    from skdp.neural_network import DPMLPRegressor

    rng = np.random.default_rng(0)
    X = rng.normal(size=(331, 10)) * 0.05
    y = 150.0 + 1000.0 * X @ rng.normal(size=10) + 40.0 * rng.normal(size=331)
    model = (DPRidge(privacy=(1.0, 1e-5), random_state=0) if estimator == "ridge"
             else DPMLPRegressor(privacy=(1.0, 1e-5), random_state=0))
    with pytest.warns(PrivacyWarning, match="finds only medians"):
        model.fit(X, y)
    assert abs(float(np.mean(model.predict(X))) - 150.0) < 40.0
    assert model.score(X, y) > -0.5
    centre = centre_noise_multiplier(1.0, 1e-5, 331, 1)
    assert centre in _gaussians(model.dp_event_)  # the search is part of the guarantee
    accountant = PLDAccountant(value_discretization_interval=1e-4)
    assert accountant.compose(model.dp_event_).get_epsilon(1e-5) <= 1.0 + 1e-9
    assert "medians of the row norms of X and of y" in model.privacy_report()
    assert not hasattr(model, "row_norm_bound_")  # rows divided by their median, not bounded
    if estimator == "ridge":  # without an intercept there is nothing to centre: no search
        with pytest.warns(PrivacyWarning, match="trains on the data as given"):
            bare = DPRidge(privacy=(1.0, 1e-5), random_state=0, fit_intercept=False).fit(X, y)
        assert _gaussians(bare.dp_event_) == []  # the training alone


def test_no_intercept_on_targets_away_from_zero_warns_from_the_released_range():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(5000, 5))
    y = 0.3 * X @ np.ones(5) + 0.1 * rng.normal(size=5000)

    def warnings_of(target, **params):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            DPRidge(privacy=(4.0, 1e-5), random_state=0, **params).fit(X, target)
        return [str(w.message) for w in caught if "fit_intercept=False" in str(w.message)]

    assert len(warnings_of(y + 12.0, fit_intercept=False)) == 1
    assert warnings_of(y, fit_intercept=False) == []  # around 0: nothing to reach
    assert warnings_of(y + 12.0) == []  # with an intercept


def test_a_row_divisor_maps_coefficients_back_exactly():
    from skdp._scale.public_scale import PublicScale

    rng = np.random.default_rng(0)
    X, coef, intercept = rng.normal(size=(50, 4)), rng.normal(size=(1, 4)), np.array([0.3])
    scale = PublicScale(None, np.array([150.0]), np.array([1.0]), 1.0, 0.5, private=True,
                        centre_only=True, row_divisor=2.5)
    on_scale = scale.rows(X) @ coef.T + intercept  # what the fit predicts on its scale
    user_coef, user_intercept = scale.to_user_units(coef, intercept)
    np.testing.assert_allclose(X @ user_coef.T + user_intercept, on_scale + 150.0)
    targets = rng.normal(150.0, 80.0, size=(50, 1))
    np.testing.assert_allclose(scale.targets(targets), targets - 150.0)  # centred, not clipped


@pytest.mark.parametrize("clips", [True, False])
def test_float32_rows_are_the_float64_rows_rounded_once(clips):
    from skdp._scale.public_scale import PublicScale

    # A fit that trains in float32 gets the scaled rows as its one float32 working copy,
    # computed block by block in float64: exactly the float64 rows rounded to float32.
    rng = np.random.default_rng(5)
    X = rng.normal(size=(20_000, 7)) * rng.uniform(0.1, 4.0, size=(20_000, 1))
    original = X.copy()
    scale = PublicScale(3.0, None, None, 1.0, 0.95, private=clips)
    rows32 = scale.rows(X, np.float32)
    assert rows32.dtype == np.float32
    np.testing.assert_array_equal(rows32, scale.rows(X).astype(np.float32))
    np.testing.assert_array_equal(X, original)
