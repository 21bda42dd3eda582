"""DP transformers on their own: scikit-learn behaviour, privacy accounting, bad input."""

from __future__ import annotations

import pickle
import warnings

import dp_accounting
import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone
from sklearn.preprocessing import OneHotEncoder, StandardScaler
from sklearn.utils.estimator_checks import parametrize_with_checks

from skdp import PrivacyBudget, PrivacyWarning
from skdp.accounting import epsilon_of
from skdp.preprocessing import DPOneHotEncoder, DPSimpleImputer, DPStandardScaler

INF = (float("inf"), 0.0)


@parametrize_with_checks(
    [
        # scikit-learn's checks use tens of rows: public bounds (a private search for bounds
        # needs more rows, and would warn there).
        DPStandardScaler(bounds=(-100, 100), random_state=0),
        DPOneHotEncoder(random_state=0),
        DPSimpleImputer(bounds=(-100, 100), random_state=0),
    ]
)
def test_sklearn_compatible(estimator, check):
    check(estimator)


@pytest.fixture(scope="module")
def numeric():
    rng = np.random.default_rng(0)
    X = np.column_stack([
        rng.normal(40, 12, 20000), rng.lognormal(8, 1.5, 20000), rng.uniform(0, 1, 20000),
    ])
    X[rng.random(X.shape) < 0.05] = np.nan
    return X


@pytest.fixture(scope="module")
def categorical():
    rng = np.random.default_rng(1)
    return pd.DataFrame({
        "colour": rng.choice(["red", "green", "blue"], 20000, p=[0.5, 0.3, 0.2]),
        "size": pd.Series(rng.choice(["S", "M", None], 20000, p=[0.6, 0.3, 0.1]),
                          dtype="string"),
        "code": rng.integers(0, 4, 20000),
    })


# --- without noise, the scikit-learn transformers -----------------------------------------------


def test_infinite_budget_with_wide_bounds_is_standard_scaler(numeric):
    lower, upper = np.nanmin(numeric, 0) - 1, np.nanmax(numeric, 0) + 1
    scaler = DPStandardScaler(INF, bounds=(lower, upper)).fit(numeric)
    reference = StandardScaler().fit(numeric)
    np.testing.assert_allclose(scaler.mean_, reference.mean_, rtol=1e-10)
    np.testing.assert_allclose(scaler.scale_, reference.scale_, rtol=1e-10)
    np.testing.assert_allclose(scaler.transform(numeric), reference.transform(numeric),
                               rtol=1e-9, atol=1e-9)


def test_infinite_budget_encoder_is_one_hot_encoder_plus_an_infrequent_column(categorical):
    encoder = DPOneHotEncoder(INF).fit(categorical)
    plain = categorical.astype(object).where(categorical.notna(), np.nan)  # pd.NA -> NaN
    reference = OneHotEncoder(handle_unknown="ignore").fit(plain)
    for mine, theirs in zip(encoder.categories_, reference.categories_, strict=True):
        assert [str(c) for c in mine] == [str(c) for c in theirs]
    ours = encoder.transform(categorical).toarray()
    keep = np.ones(ours.shape[1], dtype=bool)
    ends = np.cumsum([len(c) + 1 for c in encoder.categories_]) - 1
    keep[ends] = False
    np.testing.assert_array_equal(ours[:, keep], reference.transform(plain).toarray())
    assert not ours[:, ends].any()


# --- privacy accounting ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "make",
    [
        lambda: DPStandardScaler((0.5, 1e-6), random_state=0),
        lambda: DPStandardScaler((0.5, 1e-6), bounds=(0, 1e5), random_state=0),
        lambda: DPSimpleImputer((0.5, 1e-6), random_state=0),
        lambda: DPSimpleImputer((0.5, 1e-6), strategy="median", random_state=0),
    ],
)
def test_spend_never_exceeds_the_target_and_reaccounts(make, numeric):
    step = make().fit(numeric)
    epsilon, delta = step.privacy_spent_
    assert 0.995 * 0.5 <= epsilon <= 0.5 and delta == 1e-6
    assert isinstance(step.dp_event_, dp_accounting.GaussianDpEvent)
    assert epsilon_of(step.dp_event_, delta, pld_interval=1e-5) <= epsilon + 1e-9


def test_partition_selection_spends_its_extra_delta_inside_delta(categorical):
    encoder = DPOneHotEncoder((1.0, 1e-5), random_state=0).fit(categorical)
    assert encoder.extra_delta_ == pytest.approx(1e-6)
    epsilon, delta = encoder.privacy_spent_
    assert delta == 1e-5 and epsilon <= 1.0
    net = (delta - encoder.extra_delta_) / (1 - encoder.extra_delta_)
    assert epsilon_of(encoder.dp_event_, net, pld_interval=1e-5) <= epsilon + 1e-9
    assert [list(c) for c in encoder.categories_] == [
        ["blue", "green", "red"], ["M", "S", np.nan], [0, 1, 2, 3]
    ]


def test_public_categories_cost_nothing_and_keep_their_order(categorical):
    encoder = DPOneHotEncoder(categories=[["red", "blue"], ["S", "M"], [3, 2, 1, 0]])
    out = encoder.fit(categorical).transform(categorical)
    assert encoder.privacy_spent_ == (0.0, 0.0)
    assert isinstance(encoder.dp_event_, dp_accounting.NoOpDpEvent)
    assert list(encoder.categories_[0]) == ["red", "blue"]
    # green and the missing sizes go to the infrequent columns.
    assert out[:, 2].sum() == (categorical["colour"] == "green").sum()
    assert out[:, 5].sum() == categorical["size"].isna().sum()


def test_standalone_fit_charges_its_budget_once_and_a_refusal_charges_nothing(numeric, tmp_path):
    budget = PrivacyBudget(2.0, 1e-5, path=tmp_path / "b.skdp")
    DPStandardScaler((0.5, 1e-5), budget=budget, random_state=0).fit(numeric)
    assert len(budget.history()) == 1
    with pytest.raises(ValueError, match="bounds"):
        DPStandardScaler((0.5, 1e-5), bounds=(0, 1, 2), budget=budget).fit(numeric)
    with pytest.raises(ValueError, match="quantiles"):
        DPStandardScaler((0.1, 1e-5), quantiles=(0.2, 0.1), budget=budget).fit(numeric)
    assert len(budget.history()) == 1
    with pytest.raises(Exception, match="no finite budget"):
        DPStandardScaler(INF, budget=budget).fit(numeric)
    assert len(budget.history()) == 1


def test_data_independent_configurations_are_not_charged(categorical, tmp_path):
    budget = PrivacyBudget(1.0, 1e-5, path=tmp_path / "b.skdp")
    DPSimpleImputer(strategy="constant", budget=budget).fit(categorical)
    DPOneHotEncoder(categories=[["a"], ["S"], [0]], budget=budget).fit(categorical)
    assert budget.history() == []


# --- what is learned -----------------------------------------------------------------------------


def test_scaler_learns_close_to_the_clipped_statistics(numeric):
    scaler = DPStandardScaler((1.0, 1e-5), random_state=0).fit(numeric)
    clipped = np.clip(numeric, scaler.bounds_[:, 0], scaler.bounds_[:, 1])
    np.testing.assert_allclose(scaler.mean_, np.nanmean(clipped, 0), rtol=0.05)
    np.testing.assert_allclose(scaler.scale_, np.nanstd(clipped, 0), rtol=0.1)
    for j in range(3):
        observed = numeric[~np.isnan(numeric[:, j]), j]
        assert np.mean(observed <= scaler.bounds_[j, 0]) < 0.05
        assert np.mean(observed <= scaler.bounds_[j, 1]) > 0.95


def test_scaler_output_has_a_public_row_norm_bound(numeric):
    scaler = DPStandardScaler((1.0, 1e-5), random_state=0).fit(numeric)
    out = scaler.transform(np.nan_to_num(numeric) * 1e6)  # far outside the bounds
    assert np.all(np.linalg.norm(out, axis=1) <= scaler.max_row_norm_ * (1 + 1e-12))
    lo, hi = scaler.output_bounds_.T
    assert np.all(out >= lo - 1e-12) and np.all(out <= hi + 1e-12)


def test_scaler_keeps_missing_values_missing(numeric):
    scaler = DPStandardScaler((1.0, 1e-5), random_state=0).fit(numeric)
    np.testing.assert_array_equal(np.isnan(scaler.transform(numeric)), np.isnan(numeric))


def test_imputer_strategies(numeric, categorical):
    mean = DPSimpleImputer((1.0, 1e-5), random_state=0).fit(numeric)
    clipped = np.clip(numeric, mean.bounds_[:, 0], mean.bounds_[:, 1])
    np.testing.assert_allclose(mean.statistics_.astype(float), np.nanmean(clipped, 0), rtol=0.05)
    median = DPSimpleImputer((1.0, 1e-5), strategy="median", random_state=0).fit(numeric)
    ranks = [np.nanmean(numeric[:, j] <= median.statistics_[j]) for j in range(3)]
    np.testing.assert_allclose(ranks, 0.5, atol=0.03)
    frequent = DPSimpleImputer((1.0, 1e-5), strategy="most_frequent", random_state=0)
    out = frequent.fit(categorical).transform(categorical)
    assert list(frequent.statistics_) == ["red", "S", frequent.statistics_[2]]
    assert out[categorical["size"].isna().to_numpy(), 1].tolist().count("S") == (
        categorical["size"].isna().sum()
    )


def test_imputer_indicator_covers_every_feature(numeric):
    X = numeric.copy()
    X[:, 2] = np.where(np.isnan(X[:, 2]), 0.5, X[:, 2])  # no missing value left here
    imputer = DPSimpleImputer(strategy="constant", add_indicator=True).fit(X)
    out = imputer.transform(X)
    assert out.shape == (X.shape[0], 6)  # an indicator even for the complete column
    np.testing.assert_array_equal(out[:, 3:], np.isnan(X))
    assert imputer.get_feature_names_out().tolist()[3:] == [
        "missingindicator_x0", "missingindicator_x1", "missingindicator_x2"
    ]


def test_all_missing_and_constant_columns(numeric):
    X = numeric.copy()
    X[:, 0] = np.nan
    X[:, 1] = 7.0
    imputer = DPSimpleImputer((1.0, 1e-5), bounds=(0, 100), random_state=0).fit(X)
    assert imputer.statistics_[0] == 50.0  # the public fallback: the centre of the bounds
    assert imputer.transform(X).shape == X.shape  # the empty column is kept
    scaler = DPStandardScaler((1.0, 1e-5), random_state=0).fit(X[:, 1:])
    out = scaler.transform(X[:, 1:])
    assert np.all(np.isfinite(out) | np.isnan(X[:, 1:]))
    assert abs(out[:, 0]).max() < 5  # a constant column stays bounded (variance floor)


def test_unseen_categories_never_fail(categorical):
    encoder = DPOneHotEncoder((1.0, 1e-5), random_state=0).fit(categorical)
    new = pd.DataFrame({"colour": ["purple", None], "size": ["XXL", "S"], "code": [99, 1]})
    out = encoder.transform(new).toarray()
    assert np.all(out.sum(axis=1) == 3)
    names = encoder.get_feature_names_out()
    assert names[out[0].astype(bool)].tolist() == [
        "colour_infrequent", "size_infrequent", "code_infrequent"
    ]


def test_rare_categories_are_not_released(categorical):
    X = categorical.copy()
    X.loc[:2, "colour"] = "one-of-a-kind"
    encoder = DPOneHotEncoder((1.0, 1e-5), random_state=0).fit(X)
    assert "one-of-a-kind" not in encoder.categories_[0]
    assert encoder.threshold_ > 10


def test_huge_values_are_clipped_not_overflowed():
    X = np.random.default_rng(0).normal(0, 1, size=(20000, 1))
    X[:5] = 1e300
    scaler = DPStandardScaler((1.0, 1e-5), random_state=0).fit(X)
    assert np.all(np.isfinite(scaler.transform(X)))
    assert scaler.bounds_[0, 1] < 10


def test_bad_input_gets_clear_errors(numeric, categorical):
    with pytest.raises(ValueError, match="DPOneHotEncoder"):
        DPStandardScaler().fit(categorical)
    with pytest.raises(ValueError, match="one value per feature"):
        DPStandardScaler(bounds=([0, 1], [1, 2])).fit(numeric)
    with pytest.raises(ValueError, match="lower > upper"):
        DPStandardScaler(bounds=(5, 1)).fit(numeric)
    with pytest.raises(ValueError, match="quantiles"):
        DPStandardScaler(quantiles=(0.6, 0.9)).fit(numeric)
    with pytest.raises(ValueError, match="privacy"):
        DPStandardScaler(privacy=1.0).fit(numeric)
    with pytest.raises(ValueError, match="infinity"):
        DPStandardScaler(bounds=(0, 1)).fit(np.array([[np.inf], [1.0]]))
    with pytest.raises(ValueError, match="one list of public categories per feature"):
        DPOneHotEncoder(categories=[["a"]]).fit(categorical)


def test_too_little_data_for_a_bounds_search_warns_and_uses_the_quartiles():
    from skdp._fit.allocation import StepAllocation, attach_allocation

    X = np.random.default_rng(0).normal(size=(300, 2))
    with pytest.warns(PrivacyWarning, match="public bounds"):
        alone = DPStandardScaler((0.1, 1e-5), random_state=0).fit(X)
    scaler = DPStandardScaler(random_state=0)
    attach_allocation(scaler, StepAllocation("s", 50.0, 0.0, 1e-5))
    with pytest.warns(PrivacyWarning, match="public bounds"):
        scaler.fit(X)
    assert scaler.quantiles_ == alone.quantiles_ == (0.25, 0.75)
    assert np.all(scaler.bounds_[:, 0] <= scaler.bounds_[:, 1])


def test_pandas_string_and_category_dtypes(categorical):
    X = categorical.astype({"colour": "category"})
    encoder = DPOneHotEncoder((1.0, 1e-5), random_state=0).fit(X)
    assert encoder.feature_names_in_.tolist() == ["colour", "size", "code"]
    assert encoder.transform(X).shape[0] == len(X)


def test_fitted_transformers_clone_and_pickle(numeric):
    scaler = DPStandardScaler((1.0, 1e-5), random_state=3).fit(numeric)
    again = pickle.loads(pickle.dumps(scaler))
    np.testing.assert_array_equal(again.transform(numeric), scaler.transform(numeric))
    fresh = clone(scaler).fit(numeric)
    np.testing.assert_array_equal(fresh.mean_, scaler.mean_)  # same seed, same noise
    assert "bounds: found privately" in scaler.privacy_report()


def test_noise_without_seed_differs_between_fits(numeric):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        a = DPStandardScaler((1.0, 1e-5)).fit(numeric).mean_
        b = DPStandardScaler((1.0, 1e-5)).fit(numeric).mean_
    assert not np.array_equal(a, b)


@pytest.mark.parametrize("noise, says", [(3.0, "closer to the tails than the 0.28-quantile"),
                                         (10.0, "not even the median")])
def test_bounds_warning_says_what_the_search_can_locate_and_the_rows_it_needs(noise, says):
    import re

    from skdp.preprocessing._bounds import plan_quantiles

    with pytest.warns(PrivacyWarning, match=says) as caught:
        plan_quantiles((0.01, 0.99), 400, 2, noise, "S")
    rows = int(re.search(r"need about (\d+) rows", str(caught[0].message)).group(1))
    assert plan_quantiles((0.25, 0.75), rows, 2, noise, "S").quantiles == (0.25, 0.75)
    with pytest.warns(PrivacyWarning):  # one row fewer: the quartiles are out of reach
        plan_quantiles((0.25, 0.75), rows - 1, 2, noise, "S")


def test_bounds_by_column_name_from_a_data_dictionary():
    import pandas as pd

    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"age": rng.uniform(18, 90, 2000), "income": rng.lognormal(10, 1, 2000)})
    by_name = {"income": (0, 1e6), "age": (0, 120)}  # any order: matched by name
    named = DPStandardScaler((1.0, 1e-5), bounds=by_name, random_state=0).fit(frame)
    arrays = DPStandardScaler((1.0, 1e-5), bounds=([0, 0], [120, 1e6]), random_state=0).fit(frame)
    np.testing.assert_array_equal(named.bounds_, [[0, 120], [0, 1e6]])
    np.testing.assert_array_equal(named.mean_, arrays.mean_)
    imputer = DPSimpleImputer((1.0, 1e-5), bounds=by_name, random_state=0).fit(frame)
    np.testing.assert_array_equal(imputer.bounds_, named.bounds_)
    with pytest.raises(ValueError, match=r"missing: \['income'\]"):
        DPStandardScaler(bounds={"age": (0, 120)}).fit(frame)
    with pytest.raises(ValueError, match=r"not columns of X: \['height'\]"):
        DPStandardScaler(bounds={**by_name, "height": (0, 3)}).fit(frame)
    with pytest.raises(ValueError, match="needs X with column names"):
        DPStandardScaler(bounds=by_name).fit(frame.to_numpy())
    with pytest.raises(ValueError, match="must be a pair"):
        DPStandardScaler(bounds={"age": 120, "income": (0, 1e6)}).fit(frame)
