"""Tests of the bundled data sets and their data-independent preprocessors."""

from __future__ import annotations

import pickle
import sys

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.linear_model import LogisticRegression, Ridge
from sklearn.model_selection import train_test_split
from sklearn.pipeline import make_pipeline

from skdp.datasets import (
    ADULT_CATEGORIES,
    ADULT_NUMERIC_SCALING,
    DIAMONDS_CATEGORIES,
    DIAMONDS_LOG_PRICE_CENTER,
    DIAMONDS_NUMERIC_SCALING,
    adult_preprocessor,
    diamonds_preprocessor,
    load_adult,
    load_diamonds,
    scale_diamonds_target,
    unscale_diamonds_target,
)

ADULT_COLUMNS = [
    "age", "workclass", "fnlwgt", "education", "education_num", "marital_status",
    "occupation", "relationship", "race", "sex", "capital_gain", "capital_loss",
    "hours_per_week", "native_country",
]  # fmt: skip
ADULT_NUMERIC = [0, 2, 4, 10, 11, 12]
ADULT_CATEGORICAL = [1, 3, 5, 6, 7, 8, 9, 13]
DIAMONDS_COLUMNS = ["carat", "cut", "color", "clarity", "depth", "table", "x", "y", "z"]
DIAMONDS_NUMERIC = [0, 4, 5, 6, 7, 8]
DIAMONDS_CATEGORICAL = [1, 2, 3]


def _is_missing(value: object) -> bool:
    return isinstance(value, float) and np.isnan(value)


@pytest.fixture(scope="module")
def adult():
    return load_adult()


@pytest.fixture(scope="module")
def diamonds():
    return load_diamonds()


# --------------------------------------------------------------------------- Adult loading


def test_adult_shapes_and_dtypes(adult):
    assert adult.X_train.shape == (32561, 14)
    assert adult.X_test.shape == (16281, 14)
    assert adult.X_train.dtype == object and adult.X_test.dtype == object
    assert adult.y_train.shape == (32561,) and adult.y_test.shape == (16281,)
    assert adult.y_train.dtype == np.int64 and adult.y_test.dtype == np.int64
    assert set(np.unique(adult.y_train)) == {0, 1}
    assert adult.feature_names == ADULT_COLUMNS
    np.testing.assert_array_equal(adult.target_names, ["<=50K", ">50K"])
    assert "CC BY 4.0" in adult.DESCR
    for X in (adult.X_train, adult.X_test):
        for j in ADULT_NUMERIC:
            assert all(type(v) is float for v in X[:, j])
        for j in ADULT_CATEGORICAL:
            assert all(isinstance(v, str) or _is_missing(v) for v in X[:, j])


def test_adult_first_record_and_labels(adult):
    first = adult.X_train[0]
    assert first[0] == 39.0 and first[1] == "State-gov" and first[2] == 77516.0
    assert first[13] == "United-States"
    # Known positive rates of the official split (7,841 / 32,561 and 3,846 / 16,281).
    assert adult.y_train.sum() == 7841
    assert adult.y_test.sum() == 3846
    assert adult.y_train.mean() == pytest.approx(0.2408, abs=1e-4)
    assert adult.y_test.mean() == pytest.approx(0.2362, abs=1e-4)


def test_adult_missing_values_and_categories(adult):
    n_missing = {}
    for X in (adult.X_train, adult.X_test):
        for j in ADULT_CATEGORICAL:
            name = ADULT_COLUMNS[j]
            values = X[:, j]
            missing = np.array([_is_missing(v) for v in values])
            observed = {v for v in values[~missing]}
            assert "?" not in observed
            assert all(v == v.strip() and v for v in observed)
            assert observed <= set(ADULT_CATEGORIES[name]), name
            n_missing[name] = n_missing.get(name, 0) + int(missing.sum())
    assert n_missing == {
        "workclass": 1836 + 963,
        "education": 0,
        "marital_status": 0,
        "occupation": 1843 + 966,
        "relationship": 0,
        "race": 0,
        "sex": 0,
        "native_country": 583 + 274,
    }


def test_adult_categories_match_published_list():
    assert set(ADULT_CATEGORIES) == {ADULT_COLUMNS[j] for j in ADULT_CATEGORICAL}
    sizes = {name: len(values) for name, values in ADULT_CATEGORIES.items()}
    assert sizes == {
        "workclass": 8, "education": 16, "marital_status": 7, "occupation": 14,
        "relationship": 6, "race": 5, "sex": 2, "native_country": 41,
    }  # fmt: skip
    for values in ADULT_CATEGORIES.values():
        assert len(set(values)) == len(values)
    assert "Holand-Netherlands" in ADULT_CATEGORIES["native_country"]
    assert "Outlying-US(Guam-USVI-etc)" in ADULT_CATEGORIES["native_country"]


def test_adult_return_X_y_order(adult):
    X_train, X_test, y_train, y_test = load_adult(return_X_y=True)
    assert X_train.shape == (32561, 14) and X_test.shape == (16281, 14)
    np.testing.assert_array_equal(y_train, adult.y_train)
    np.testing.assert_array_equal(y_test, adult.y_test)
    assert X_train[0, 1] == adult.X_train[0, 1]


def test_adult_returns_copies():
    X_train, X_test, y_train, y_test = load_adult(return_X_y=True)
    assert X_train.flags.writeable and y_train.flags.writeable
    X_train[0, 0] = -1.0
    X_train[0, 1] = "corrupted"
    X_test[:] = None
    y_train[:] = 7
    y_test[:] = 7
    fresh = load_adult()
    assert fresh.X_train[0, 0] == 39.0 and fresh.X_train[0, 1] == "State-gov"
    assert fresh.X_test[0, 0] == 25.0
    assert fresh.y_train.sum() == 7841 and fresh.y_test.sum() == 3846
    fresh.feature_names.append("extra")
    assert load_adult().feature_names == ADULT_COLUMNS


def test_adult_as_frame(adult):
    pd = pytest.importorskip("pandas")
    frame = load_adult(as_frame=True)
    assert isinstance(frame.X_train, pd.DataFrame) and isinstance(frame.y_test, pd.Series)
    assert list(frame.X_train.columns) == ADULT_COLUMNS
    assert frame.X_train.shape == (32561, 14) and frame.X_test.shape == (16281, 14)
    for j, name in enumerate(ADULT_COLUMNS):
        dtype = frame.X_train[name].dtype
        if j in ADULT_NUMERIC:
            assert dtype == np.float64
        else:
            assert pd.api.types.is_object_dtype(dtype) or pd.api.types.is_string_dtype(dtype)
    assert frame.y_train.name == "income" and frame.y_train.dtype == np.int64
    np.testing.assert_array_equal(frame.y_train.to_numpy(), adult.y_train)
    assert frame.X_train["workclass"].isna().sum() == 1836
    assert frame.X_test["native_country"].isna().sum() == 274
    np.testing.assert_array_equal(
        frame.X_test["hours_per_week"].to_numpy(), adult.X_test[:, 12].astype(float)
    )
    X_train, X_test, y_train, y_test = load_adult(return_X_y=True, as_frame=True)
    assert isinstance(X_test, pd.DataFrame) and y_test.name == "income"
    X_train.iloc[0, 0] = -1.0
    assert load_adult(as_frame=True).X_train.iloc[0, 0] == 39.0


# ---------------------------------------------------------------------- Adult preprocessing


def test_adult_preprocessor_output(adult):
    pre = adult_preprocessor().fit(adult.X_train)
    Z = pre.transform(adult.X_test)
    n_onehot = sum(len(v) for v in ADULT_CATEGORIES.values())
    assert Z.shape == (16281, 6 + n_onehot) == (16281, 105)
    assert Z.dtype == np.float64 and isinstance(Z, np.ndarray)
    assert np.isfinite(Z).all()
    names = list(pre.get_feature_names_out())
    assert len(names) == Z.shape[1]
    assert names[:3] == ["age", "workclass_Private", "workclass_Self-emp-not-inc"]
    assert "native_country_Holand-Netherlands" in names
    assert [n for n in names if n in ADULT_NUMERIC_SCALING] == [
        ADULT_COLUMNS[j] for j in ADULT_NUMERIC
    ]
    # Each one-hot block has at most one 1; exactly one unless the value is missing.
    start = 0
    for j, name in enumerate(ADULT_COLUMNS):
        if j in ADULT_NUMERIC:
            start += 1
            continue
        width = len(ADULT_CATEGORIES[name])
        block = Z[:, start : start + width]
        missing = np.array([_is_missing(v) for v in adult.X_test[:, j]])
        np.testing.assert_array_equal(block.sum(axis=1), (~missing).astype(float))
        start += width
    assert start == Z.shape[1]


def test_adult_missing_category_gives_zero_block(adult):
    pre = adult_preprocessor().fit(adult.X_train[:10])
    names = list(pre.get_feature_names_out())
    workclass = [i for i, n in enumerate(names) if n.startswith("workclass_")]
    rows = adult.X_train[:3].copy()
    rows[0, 1] = np.nan
    rows[1, 1] = None
    rows[2, 1] = "Unseen-category"
    Z = pre.transform(rows)
    np.testing.assert_array_equal(Z[:, workclass], 0.0)
    # The other blocks are untouched.
    assert Z[:, [n.startswith("sex_") for n in names]].sum() == 3.0


def test_adult_preprocessor_constants(adult):
    X = adult.X_train[:4].copy()
    X[:, ADULT_NUMERIC] = np.array(
        [
            [45.0, np.exp(12.0), 8.5, 0.0, 0.0, 40.0],
            [70.0, np.exp(13.5), 16.0, 100_000.0, 0.0, 60.0],
            [20.0, np.exp(10.5), 1.0, 0.0, 100_000.0, 20.0],
            [np.nan, np.exp(12.0), 8.5, 0.0, 0.0, 40.0],
        ],
        dtype=object,
    )
    pre = adult_preprocessor().fit(adult.X_train)
    names = list(pre.get_feature_names_out())
    numeric = pre.transform(X)[:, [names.index(c) for c in ADULT_NUMERIC_SCALING]]
    np.testing.assert_allclose(numeric[0], 0.0, atol=1e-12)
    np.testing.assert_allclose(numeric[1], [1, 1, 1, 1, 0, 1], atol=1e-12)
    np.testing.assert_allclose(numeric[2], [-1, -1, -1, 0, 1, -1], atol=1e-12)
    assert np.isnan(numeric[3, 0])  # numeric NaN propagates (estimators reject it)


def test_adult_preprocessor_is_data_independent(adult):
    first = adult_preprocessor().fit(adult.X_train[:100])
    last = adult_preprocessor().fit(adult.X_train[-5000:])
    np.testing.assert_array_equal(first.transform(adult.X_test), last.transform(adult.X_test))
    # Fitting on garbage of the right shape changes nothing either.
    junk = np.full((3, 14), "zzz", dtype=object)
    junk[:, ADULT_NUMERIC] = 1.0
    np.testing.assert_array_equal(
        adult_preprocessor().fit(junk).transform(adult.X_test[:500]),
        first.transform(adult.X_test[:500]),
    )


def test_adult_numeric_scale_is_roughly_unit(adult):
    pre = adult_preprocessor().fit(adult.X_train)
    names = list(pre.get_feature_names_out())
    Z = pre.transform(adult.X_train)[:, [names.index(c) for c in ADULT_NUMERIC_SCALING]]
    assert np.all(np.abs(Z.mean(axis=0)) < 1.5)
    assert np.all(Z.std(axis=0) < 2.0)
    assert np.all(np.abs(Z).max(axis=0) < 5.0)


def test_adult_preprocessor_on_frames_matches_arrays(adult):
    pytest.importorskip("pandas")
    frame = load_adult(as_frame=True)
    pre_frame = adult_preprocessor().fit(frame.X_train)
    pre_array = adult_preprocessor().fit(adult.X_train)
    np.testing.assert_array_equal(
        pre_frame.transform(frame.X_test), pre_array.transform(adult.X_test)
    )
    np.testing.assert_array_equal(
        pre_frame.get_feature_names_out(), pre_array.get_feature_names_out()
    )


def test_adult_preprocessor_clone_and_pickle(adult):
    pre = adult_preprocessor().fit(adult.X_train[:50])
    again = pickle.loads(pickle.dumps(pre))
    cloned = clone(pre).fit(adult.X_train[:50])
    expected = pre.transform(adult.X_test[:200])
    np.testing.assert_array_equal(again.transform(adult.X_test[:200]), expected)
    np.testing.assert_array_equal(cloned.transform(adult.X_test[:200]), expected)


def test_adult_logistic_regression_pipeline(adult):
    model = make_pipeline(adult_preprocessor(), LogisticRegression(max_iter=1000))
    model.fit(adult.X_train, adult.y_train)
    assert model.score(adult.X_test, adult.y_test) > 0.84


# ------------------------------------------------------------------------------- diamonds


def test_diamonds_shapes_and_values(diamonds):
    X, y = diamonds.data, diamonds.target
    assert X.shape == (53940, 9) and X.dtype == object
    assert y.shape == (53940,) and y.dtype == np.float64
    assert diamonds.feature_names == DIAMONDS_COLUMNS
    assert "MIT" in diamonds.DESCR
    assert list(X[0]) == [0.23, "Ideal", "E", "SI2", 61.5, 55.0, 3.95, 3.98, 2.43]
    assert y[0] == 326.0 and y.min() == 326.0 and y.max() == 18823.0
    for j in DIAMONDS_NUMERIC:
        assert all(type(v) is float for v in X[:, j])
    for j in DIAMONDS_CATEGORICAL:
        name = DIAMONDS_COLUMNS[j]
        assert set(X[:, j]) == set(DIAMONDS_CATEGORIES[name]), name


def test_diamonds_return_X_y_and_copies(diamonds):
    X, y = load_diamonds(return_X_y=True)
    np.testing.assert_array_equal(y, diamonds.target)
    X[0, 0] = -1.0
    X[0, 1] = "corrupted"
    y[:] = 0.0
    X2, y2 = load_diamonds(return_X_y=True)
    assert X2[0, 0] == 0.23 and X2[0, 1] == "Ideal" and y2[0] == 326.0


def test_diamonds_as_frame(diamonds):
    pd = pytest.importorskip("pandas")
    bunch = load_diamonds(as_frame=True)
    assert isinstance(bunch.data, pd.DataFrame) and isinstance(bunch.target, pd.Series)
    assert list(bunch.data.columns) == DIAMONDS_COLUMNS
    assert bunch.data.shape == (53940, 9) and bunch.target.name == "price"
    assert bunch.target.dtype == np.float64
    for j, name in enumerate(DIAMONDS_COLUMNS):
        if j in DIAMONDS_NUMERIC:
            assert bunch.data[name].dtype == np.float64
    X, y = load_diamonds(return_X_y=True, as_frame=True)
    pre_frame = diamonds_preprocessor().fit(X)
    pre_array = diamonds_preprocessor().fit(diamonds.data)
    np.testing.assert_array_equal(
        pre_frame.transform(X.iloc[:1000]), pre_array.transform(diamonds.data[:1000])
    )


def test_diamonds_preprocessor_output_and_independence(diamonds):
    X = diamonds.data
    first = diamonds_preprocessor().fit(X[:100])
    last = diamonds_preprocessor().fit(X[-5000:])
    Z = first.transform(X)
    np.testing.assert_array_equal(Z, last.transform(X))
    assert Z.shape == (53940, 26) and Z.dtype == np.float64
    assert np.isfinite(Z).all()
    names = list(first.get_feature_names_out())
    assert names[:3] == ["carat", "cut_Fair", "cut_Good"]
    assert "clarity_IF" in names and len(names) == 26
    numeric = Z[:, [names.index(c) for c in DIAMONDS_NUMERIC_SCALING]]
    assert np.all(np.abs(numeric.mean(axis=0)) < 1.5)
    assert np.all(numeric.std(axis=0) < 2.0)
    onehot = Z[:, [i for i, n in enumerate(names) if n not in DIAMONDS_NUMERIC_SCALING]]
    np.testing.assert_array_equal(onehot.sum(axis=1), 3.0)
    np.testing.assert_allclose(numeric[0, 0], np.log(0.23) / 0.6)


def test_diamonds_target_scaling(diamonds):
    z = scale_diamonds_target(diamonds.target)
    assert z.dtype == np.float64
    assert abs(z.mean()) < 0.5 and 0.5 < z.std() < 1.5
    assert np.all(np.abs(z) < 2.5)
    np.testing.assert_allclose(unscale_diamonds_target(z), diamonds.target, rtol=1e-12)
    assert DIAMONDS_LOG_PRICE_CENTER == 7.8
    assert scale_diamonds_target(np.exp(7.8)) == pytest.approx(0.0)


def test_diamonds_ridge_pipeline(diamonds):
    X_train, X_test, y_train, y_test = train_test_split(
        diamonds.data, scale_diamonds_target(diamonds.target), test_size=0.25, random_state=0
    )
    model = make_pipeline(diamonds_preprocessor(), Ridge(alpha=1.0))
    model.fit(X_train, y_train)
    assert model.score(X_test, y_test) > 0.95


@pytest.mark.parametrize("loader", [load_adult, load_diamonds])
def test_as_frame_without_pandas_raises_clear_error(loader, monkeypatch):
    monkeypatch.setitem(sys.modules, "pandas", None)  # makes `import pandas` fail
    with pytest.raises(ImportError, match="pip install pandas"):
        loader(as_frame=True)
    assert loader(return_X_y=True)[0].shape[1] in (9, 14)  # numpy path needs no pandas
